"""Closing criteria: `closes` checks alone decide closing; `found` criteria are QA's (their
checker's result, or the reviewer's list); `process` criteria are for people. qa-report.md
starts with one fixed-shape line per criterion."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from goalkit import FIX, UNIT_CHECK, Project

from axpipe.goal.goals import Goal
from axpipe.unit.closing import closing_checks

ACCEPTANCE = """    AC1: {tag: closes, text: "add() adds", check: unit}
    AC2: {tag: found, text: "The calculator page shows 5 for 2 + 3", check: page}
    AC3: {tag: found, text: "Adding a huge number keeps the old total and tells the user"}
    AC10: {tag: process, text: "A person reads the error wording"}
"""


def checks(page: str) -> str:
    return UNIT_CHECK + f'    - {{id: page, acceptance: [AC2], command: "{page}", purpose: "the page"}}\n'


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Project:
    (repo / "page_check.py").write_text("import sys\nfrom calc import add\nsys.exit(0 if add(2, 3) == 5 else 1)\n")
    return Project(repo, tmp_path)


def report(project: Project) -> str:
    return (project.root / ".axpipe" / "artifacts" / "calc" / "qa-report.md").read_text()


def test_the_qa_report_starts_with_one_line_per_criterion(project: Project, snapshot: object) -> None:
    project.recipe(turns=[FIX], acceptance=ACCEPTANCE, checks=checks("python3 page_check.py"))
    result = project.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    text = report(project)
    head = text.splitlines()[:4]
    pattern = re.compile(r"^- (AC\d+) (PASS|FAIL|REVIEWER) · (browser|command|code) · (\S+)$")
    assert [pattern.match(line).groups()[:3] for line in head] == [  # type: ignore[union-attr]
        ("AC1", "PASS", "command"), ("AC2", "PASS", "command"), ("AC3", "REVIEWER", "code"),
        ("AC10", "REVIEWER", "code")]
    assert head[0].endswith("-unit.log") and (project.root / head[0].rsplit(" · ", 1)[1]).is_file()
    assert head[2].endswith(" · -") and head[3].endswith(" · -")
    assert "## For the reviewer\n\n- AC3: Adding a huge number keeps the old total and tells the user\n" in text
    assert "## For people (`process`)\n\n- AC10: A person reads the error wording\n" in text
    assert re.sub(r"(r-[0-9a-f]+|s-[0-9-]+-[0-9a-f]+)", "<id>", text) == snapshot


def test_a_found_criterion_without_a_checker_never_fails_the_goal(project: Project) -> None:
    project.recipe(turns=[FIX], acceptance='    AC1: {tag: closes, text: "add() adds", check: unit}\n'
                                          '    AC2: {tag: found, text: "the page looks right"}\n')
    assert project.run().exit_code == 0
    assert report(project).startswith("- AC1 PASS · command · ")
    assert "- AC2 REVIEWER · code · -\n" in report(project)


def test_a_failing_found_checker_does_not_decide_closing_but_bounces(project: Project) -> None:
    project.recipe(turns=[FIX], acceptance=ACCEPTANCE, checks=checks("python3 -c 'raise SystemExit(1)'"))
    result = project.run()
    assert result.exit_code == 6, result.stdout
    assert "bounced (1 of 2): checker page said qa: FAIL" in result.stdout
    assert "- AC2 FAIL · command · " in report(project)
    status = project.status()
    assert status["goal"]["status"] == "active"
    # The closing checks hold, but a goal is never complete while a declared check fails.
    assert status["complete"] is False
    assert [(check["id"], check["status"]) for check in status["checks"]] == [("unit", "passed"), ("page", "failed")]


FOUND_ONLY = '    AC1: {tag: found, text: "add() adds", check: unit}\n'


def test_a_goal_proved_only_by_found_checkers_reopens_when_one_fails_on_reverify(project: Project) -> None:
    project.recipe(turns=[FIX], acceptance=FOUND_ONLY)
    first = project.run()
    assert first.exit_code == 0, first.stdout + first.stderr
    assert "every check passed on the current source (1 of 1)" in first.stdout
    (project.root / "calc.py").write_text((project.root / "calc.py").read_text().replace("a + b", "a * b"))
    again = project.run()
    assert again.exit_code == 6, again.stdout
    assert "every check passed" not in again.stdout
    assert "reopened: unit failed" in again.stdout
    status = project.status()
    assert (status["goal"]["status"], status["complete"]) == ("active", False)
    assert status["checks"][0]["status"] == "failed"


def test_a_complete_found_only_goal_is_not_complete_once_its_checker_is_stale_or_missing(project: Project) -> None:
    project.recipe(turns=[FIX], acceptance=FOUND_ONLY)
    assert project.run().exit_code == 0
    (project.root / "calc.py").write_text((project.root / "calc.py").read_text() + "# changed\n")
    status = project.status()
    assert (status["complete"], status["checks"][0]["status"]) == (False, "stale")
    (project.root / "calc.py").write_text((project.root / "calc.py").read_text().replace("# changed\n", ""))
    assert project.status()["complete"] is True
    assert project.cli("goal", "fork").exit_code == 0
    status = project.status()
    assert (status["complete"], status["checks"][0]["status"]) == (False, "missing")
    forked = status["goal"]["session"]
    # resume may not take the old session's receipts as this one's: it verifies again here
    resumed = project.cli("goal", "resume")
    assert resumed.exit_code == 0, resumed.stderr
    assert [row["status"] for row in project.receipts() if row["session_id"] == forked] == ["passed"]


def test_a_failing_found_checker_beside_passing_closing_checks_reopens_on_reverify(project: Project) -> None:
    (project.root / "page.html").write_text("<p>5</p>\n")
    (project.root / "page_check.py").write_text(
        "import pathlib, sys\nsys.exit(0 if '5' in pathlib.Path('page.html').read_text() else 1)\n")
    project.recipe(turns=[FIX], acceptance=ACCEPTANCE, checks=checks("python3 page_check.py"))
    assert project.run().exit_code == 0
    (project.root / "page.html").write_text("<p>-1</p>\n")
    again = project.run()
    assert again.exit_code == 6, again.stdout
    assert "every check passed" not in again.stdout
    assert "reopened: page failed" in again.stdout
    status = project.status()
    assert [(check["id"], check["status"]) for check in status["checks"]] == [("unit", "passed"), ("page", "failed")]
    assert (status["goal"]["status"], status["complete"]) == ("active", False)
    assert "- AC1 PASS · command · " in report(project) and "- AC2 FAIL · command · " in report(project)


def test_a_found_checker_that_cannot_run_is_cannot_verify(project: Project) -> None:
    (project.root / "page.sh").write_text("#!/bin/sh\nexit 0\n")
    (project.root / "page.sh").chmod(0o755)
    turn = {**FIX, "delete": ["page.sh"]}  # the tool the checker needs is gone
    project.recipe(turns=[turn], acceptance=ACCEPTANCE, checks=checks("./page.sh"))
    result = project.run()
    assert result.exit_code == 3, result.stdout
    goal = project.status()["goal"]
    assert goal["blocked"]["kind"] == "cannot-verify"
    assert "found criterion AC2: check page failed" in goal["reason"]


def test_a_failing_closes_check_keeps_the_goal_open_without_asking_qa(project: Project) -> None:
    project.recipe(turns=[{}], acceptance=ACCEPTANCE, checks=checks("python3 -c 'raise SystemExit(1)'"))
    result = project.run()
    assert result.exit_code == 6
    assert "bounced" not in result.stdout
    assert report(project).startswith("- AC1 FAIL · command · ")


def _goal(acceptance: dict[str, dict[str, object]], checks: list[dict[str, object]]) -> Goal:
    return Goal(id="g", recipe="r", overrides=[], variables={}, objective="o", assured=True, status="active",
                status_reason=None, blocked=None, contract_digest=None, baseline=None, workspace="/w",
                plan={"checks": checks, "source_paths": ["."], "acceptance": acceptance})


def test_which_checks_decide_closing() -> None:
    goal = _goal({"A": {"tag": "closes", "text": "", "check": "named"},
                  "B": {"tag": "found", "text": "", "check": None},
                  "C": {"tag": "process", "text": "", "check": "people"}},
                 [{"id": "named", "acceptance": []}, {"id": "listing", "acceptance": ["A", "B"]},
                  {"id": "ui", "acceptance": ["B"]}, {"id": "loose", "acceptance": []},
                  {"id": "people", "acceptance": []}])
    assert closing_checks(goal) == {"named", "listing", "loose"}


def test_a_browser_checker_is_reported_as_browser(tmp_path: Path) -> None:
    from axpipe.goal.completion import CheckState
    from axpipe.unit.closing import lines

    goal = _goal({"AC1": {"tag": "closes", "text": "t", "check": "unit"},
                  "AC2": {"tag": "found", "text": "the page", "check": "ui"}},
                 [{"id": "unit", "kind": "command", "acceptance": ["AC1"]},
                  {"id": "ui", "kind": "playwright", "acceptance": ["AC2"]}])
    states = {"unit": CheckState("unit", "passed", "r-1", ""), "ui": CheckState("ui", "failed", "r-2", "")}
    receipts = {"r-1": {"artifacts": [str(tmp_path / "unit.log")]}, "r-2": {"artifacts": [str(tmp_path / "ui.png")]}}
    rendered = [line.render() for line in lines(tmp_path, goal, states, receipts, {"playwright"})]
    assert rendered == ["- AC1 PASS · command · unit.log", "- AC2 FAIL · browser · ui.png"]


def test_a_summary_never_says_every_check_passed_when_one_did_not(tmp_path: Path) -> None:
    from axpipe.goal import fingerprint
    from axpipe.goal.completion import CheckState, Completion

    current = fingerprint.compute(tmp_path, ["."])
    failing = Completion(True, [CheckState("c1", "failed", "r-1", "exit code 1")], current)
    assert failing.summary() == "c1 failed: exit code 1"
    assert Completion(False, [], current).summary() == "no check declared"
    passing = Completion(True, [CheckState("c1", "passed", "r-1", "")], current)
    assert passing.summary() == "every check passed on the current source (1 of 1)"
