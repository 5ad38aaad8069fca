"""``[found]`` criteria checked in a real headless Chromium against the sample web app
(``axpipe.samples.webform``), through ``axpipe run`` and ``axpipe verify``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from goalkit import Project
from helpers import AXPIPE, command_line, git, wait_for
from html_check import problems

from axpipe.browser import chromium

BROWSER_REQUIRED = bool(os.environ.get("AXPIPE_REQUIRE_BROWSER"))
pytestmark = [pytest.mark.slow, pytest.mark.skipif(chromium.find() is None and not BROWSER_REQUIRED,
                                reason=f"no Chromium here ({chromium.INSTALL_HINT}); CI installs it and never skips")]

GREETS = """    - id: greets
      kind: browser
      acceptance: [AC1]
      params:
        steps:
          - open: /
          - fill: {selector: "#name", value: Ada}
          - click: "button[type=submit]"
          - expect_text: {text: "Hello, Ada!", selector: "#greeting"}
          - expect_no_console_errors: true
"""
MISSING = """    - id: toast
      kind: browser
      acceptance: [AC2]
      params:
        step_timeout: 1
        steps:
          - open: /
          - click: "#save-toast"
"""
ACCEPTANCE = """    AC1: {tag: found, text: "the form greets by name", check: greets}
    AC2: {tag: found, text: "saving shows a toast", check: toast}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def app_section(port: int, *, command: str | None = None, timeout: str = "30s") -> str:
    command = command or json.dumps([sys.executable, "-m", "axpipe.samples.webform", "--port", str(port)])
    return f"app:\n  command: {command}\n  url: http://127.0.0.1:{port}/\n  ready_timeout: {timeout}\n"


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Project:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    return Project(repo, scratch)


def _app_gone(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def test_found_criteria_pass_and_fail_in_the_browser_with_a_screenshot_each(project: Project) -> None:
    port = free_port()
    project.recipe(name="greeter", agent=False, checks=GREETS + MISSING, acceptance=ACCEPTANCE,
                   extra=app_section(port))
    before = git(project.root, "status", "--porcelain", "--ignored")
    result = project.run("greeter")
    assert result.exit_code == 6, result.stdout + result.stderr  # the goal stays active: toast fails
    receipts = {row["check_id"]: row for row in project.receipts()}
    assert receipts["greets"]["status"] == "passed", receipts["greets"]["summary"]
    assert receipts["greets"]["summary"] == "5 step(s) held in the browser"
    assert receipts["toast"]["status"] == "failed"
    assert receipts["toast"]["summary"] == ("step 2 (click '#save-toast'): no element matches '#save-toast' "
                                            "within 1 s")
    for check in ("greets", "toast"):
        artifacts = [Path(path) for path in json.loads(receipts[check]["artifacts"])]
        screenshot, console = artifacts[0], artifacts[1]
        assert screenshot.suffix == ".png" and screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert screenshot.stat().st_size > 3000  # a rendered page, not a blank one
        assert screenshot.is_relative_to(project.root / ".axpipe")  # evidence stays out of the user's files
        assert "console:" in console.read_text()
    qa = (project.root / ".axpipe" / "artifacts" / "greeter" / "qa-report.md").read_text().splitlines()
    shot = Path(json.loads(receipts["greets"]["artifacts"])[0]).relative_to(project.root)
    assert qa[0] == f"- AC1 PASS · browser · {shot}"
    assert qa[1].startswith("- AC2 FAIL · browser · .axpipe/goals/greeter/logs/qa-toast-")
    after = git(project.root, "status", "--porcelain", "--ignored")
    assert after == before + "!! .axpipe/\n"  # nothing left in the user's tree but axpipe's own folder
    assert _app_gone(port)
    assert project.cli("report").exit_code == 0  # the goal's page links each screenshot, from file://
    page = project.root / ".axpipe" / "report" / "goal-greeter.html"
    assert problems(page) == []
    assert f'<a href="../goals/greeter/logs/{shot.name}">{shot.name}</a>' in page.read_text()


def test_console_errors_fail_the_criterion_and_name_the_error(project: Project) -> None:
    port = free_port()
    checks = """    - id: greets
      kind: browser
      acceptance: [AC1]
      params:
        steps:
          - open: /broken
          - expect_no_console_errors: true
"""
    project.recipe(name="broken", agent=False, checks=checks,
                   acceptance='    AC1: {tag: found, text: "no script error", check: greets}\n',
                   extra=app_section(port))
    assert project.run("broken").exit_code == 6
    [receipt] = project.receipts()
    assert receipt["status"] == "failed"
    assert receipt["summary"].startswith("step 2 (expect no console errors): 1 console error(s): uncaught ")
    assert "missingFunction is not defined" in receipt["summary"]


def test_an_app_that_never_answers_is_an_error_and_is_stopped(project: Project, tmp_path: Path) -> None:
    port = free_port()
    pid_file = tmp_path / "app.pid"
    command = json.dumps(f"echo $$ > {pid_file}; exec sleep 60")
    project.recipe(name="silent", agent=False, checks=GREETS,
                   acceptance='    AC1: {tag: found, text: "greets", check: greets}\n',
                   extra=app_section(port, command=command, timeout="1s"))
    project.run("silent")  # plans the goal (its verify phase meets the same error)
    result = project.cli("verify", "greets")
    assert result.exit_code == 1, result.stdout + result.stderr
    [*_, receipt] = project.receipts()
    assert receipt["status"] == "error"
    assert receipt["summary"] == (f"check greets: the app never became ready: http://127.0.0.1:{port}/ did not "
                                  "answer within 1 s; its output ends: (nothing)")
    assert command_line(int(pid_file.read_text())) == ""  # its process group was stopped


def test_malformed_steps_are_a_config_error_before_anything_runs(project: Project) -> None:
    checks = """    - id: greets
      kind: browser
      acceptance: [AC1]
      params:
        steps:
          - open: /
          - fill: {selector: "#name"}
          - hover: "#name"
"""
    project.recipe(name="malformed", agent=False, checks=checks,
                   acceptance='    AC1: {tag: found, text: "greets", check: greets}\n', extra=app_section(free_port()))
    result = project.run("malformed")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "  - goal.checks[0].params.steps[1]: fill needs `value`  (from recipes/malformed.yaml)\n" in result.stderr
    assert ("  - goal.checks[0].params.steps[2]: hover is not a step; the steps are open, click, fill, press, "
            "expect_text, expect_no_console_errors  (from recipes/malformed.yaml)\n") in result.stderr
    assert not (project.root / ".axpipe" / "state.db").exists()  # nothing ran, nothing was written


def test_an_app_off_this_machine_is_refused_before_anything_starts(project: Project) -> None:
    project.recipe(name="remote", agent=False, checks=GREETS,
                   acceptance='    AC1: {tag: found, text: "greets", check: greets}\n',
                   extra="app:\n  command: [sleep, '60']\n  url: https://example.com/\n")
    project.run("remote")
    [receipt] = project.receipts()
    assert receipt["status"] == "error"
    assert receipt["summary"] == ("check greets: app.url 'https://example.com/' is not on this machine: the browser "
                                  "resolves only localhost, 127.0.0.1 (no network for evidence)")


def test_no_browser_is_environment_not_ready(project: Project, tmp_path: Path) -> None:
    port = free_port()
    project.recipe(name="nobrowser", agent=False, checks=GREETS,
                   acceptance='    AC1: {tag: found, text: "greets", check: greets}\n', extra=app_section(port))
    project.run("nobrowser")
    result = project.cli("verify", "greets", env={"AXPIPE_CHROMIUM": str(tmp_path / "no-chromium")})
    assert result.exit_code == 5, result.stdout + result.stderr
    [*_, receipt] = project.receipts()
    assert receipt["status"] == "error"
    assert receipt["summary"] == (f"check greets: no Chromium to check in: AXPIPE_CHROMIUM={tmp_path / 'no-chromium'} "
                                  f"is not an executable file; {chromium.INSTALL_HINT}")
    assert _app_gone(port)  # the app is not even started without a browser


def test_a_crashed_page_is_an_error_not_a_verdict(project: Project) -> None:
    port = free_port()
    checks = """    - id: greets
      kind: browser
      acceptance: [AC1]
      params:
        steps:
          - open: /
          - open: "chrome://crash"
"""
    project.recipe(name="crash", agent=False, checks=checks,
                   acceptance='    AC1: {tag: found, text: "greets", check: greets}\n', extra=app_section(port))
    project.run("crash")
    [receipt] = project.receipts()
    assert receipt["status"] == "error"
    assert receipt["summary"] == "check greets: step 2 (open 'chrome://crash'): the page crashed"
    assert _app_gone(port)


def test_the_app_does_not_outlive_a_killed_axpipe(project: Project) -> None:
    port = free_port()
    checks = """    - id: greets
      kind: browser
      acceptance: [AC1]
      params:
        step_timeout: 60
        steps:
          - open: /
          - click: "#never-there"
"""
    project.recipe(name="killed", agent=False, checks=checks,
                   acceptance='    AC1: {tag: found, text: "greets", check: greets}\n', extra=app_section(port))
    process = subprocess.Popen([*AXPIPE, "run", "recipe=killed"], cwd=project.root, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env={**os.environ, **project.env})
    try:
        wait_for(lambda: not _app_gone(port), timeout=60, what="the app to answer")
        time.sleep(1)  # the browser is waiting for the element now
        process.kill()  # no finally runs in axpipe: only the kernel can stop the app now
        process.wait()
        wait_for(lambda: _app_gone(port), timeout=10, what="the app to stop")
    finally:
        if process.poll() is None:
            process.kill()
