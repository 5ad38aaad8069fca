"""Plugins that import fine and then misbehave, installed through real entry points
(tests/resources/faulty-plugins): calling sys.exit, breaking their protocol, declaring a
params schema axpipe cannot validate, returning the wrong thing, or never returning.

Whatever a plugin does, axpipe must not report success for work that did not succeed,
must name the plugin and its distribution, and must not hang (DESIGN §10, §11, §4)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import CLI
from helpers import AXPIPE, RESOURCES, git, interrupts_as_default, wait_for, write_recipe
from test_plugins import pip_install_target

DISTRIBUTION = "axpipe-faulty-plugins"


@pytest.fixture(scope="module")
def faulty_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("faulty-site")
    pip_install_target(RESOURCES / "faulty-plugins", target)
    return target


@pytest.fixture
def env(faulty_site: Path) -> dict[str, str]:
    return {"PYTHONPATH": str(faulty_site)}


def one_check_recipe(repo: Path, kind: str, *, extra: str = "", limits: str = "", agent: str = "") -> None:
    write_recipe(repo / "recipes", "r", f"""
name: r
{agent}
goal:
  objective: "x"
  acceptance:
    AC1: {{tag: closes, text: "x", check: c1}}
  checks:
    - {{id: c1, kind: {kind}, acceptance: [AC1]{extra}}}
{limits}
""")
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")


def check_state(cli: CLI, env: dict[str, str]) -> dict[str, object]:
    status = cli("goal", "status", "--json", env=env)
    assert status.exit_code in (0, 3, 6), status.stderr
    (check,) = json.loads(status.stdout)["checks"]
    return dict(check)


# -- defect 1: sys.exit(0) in plugin code never reads as success ------------------------


def test_a_check_that_calls_sys_exit_is_an_error_receipt_not_success(cli: CLI, repo: Path,
                                                                     env: dict[str, str]) -> None:
    one_check_recipe(repo, "exits-in-run")
    run = cli("run", "recipe=r", env=env)
    assert run.exit_code == 6, run.stdout + run.stderr  # the goal stays active: its check did not pass
    said = ("check kind 'exits-in-run' (axpipe.checks, from axpipe-faulty-plugins) run(): called sys.exit(0) "
            "instead of returning its result")
    assert said in run.stdout
    assert check_state(cli, env)["status"] == "failed"
    verify = cli("verify", "c1", "--json", env=env)
    receipt = json.loads(verify.stdout)
    assert receipt["status"] == "error" and said in receipt["summary"]
    # 1, "error" (DESIGN §11): the plugin is at fault, not the environment (5 is for a
    # check whose program is not there), and never 0
    assert verify.exit_code == 1, verify.stdout + verify.stderr


def test_a_guard_that_calls_sys_exit_fails_the_guard_command(cli: CLI, repo: Path, env: dict[str, str]) -> None:
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n"
                                                 "    assert add(1, 2) == 3\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "calc")
    (repo / "tests" / "test_calc.py").write_text("import pytest\nfrom calc import add\n\n\n@pytest.mark.skip\n"
                                                 "def test_add():\n    assert add(1, 2) == 3\n")
    assert cli("guard", "--guards", "python", env=env).exit_code == 1  # the python guard flags it alone
    for order in ("python,exits-guard", "exits-guard,python"):
        result = cli("guard", "--guards", order, env=env)
        assert result.exit_code == 1, result.stderr
        assert result.stderr.startswith(
            "axpipe: error: guard 'exits-guard' failed on git diff HEAD: called sys.exit(0) instead of returning "
            "its result; a plugin must never end axpipe. The change was not judged (from axpipe-faulty-plugins)")


def test_an_agent_that_calls_sys_exit_is_a_failed_turn(cli: CLI, repo: Path, env: dict[str, str]) -> None:
    one_check_recipe(repo, "command", extra=", command: \"python3 -c 'import sys; sys.exit(1)'\"",
                     agent="agent: {kind: exits-agent}")
    run = cli("run", "recipe=r", env=env)
    assert run.exit_code == 3, run.stdout + run.stderr  # a crashed turn is a hard stop (DESIGN §14)
    assert ("[ FAIL] work    hard stop (agent): the agent's turn failed: agent 'exits-agent' (axpipe.agents, from "
            "axpipe-faulty-plugins) run(): called sys.exit(0)") in run.stdout
    assert "verify" not in run.stdout  # nothing the crashed turn left is judged


def test_ctrl_c_still_interrupts_plugin_code(repo: Path, env: dict[str, str]) -> None:
    one_check_recipe(repo, "hangs")
    process = subprocess.Popen([*AXPIPE, "run", "recipe=r"], cwd=repo, env={**os.environ, **env},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=interrupts_as_default)
    state = repo / ".axpipe" / "state.db"
    wait_for(lambda: state.is_file() and b"check.started" in _events(repo), what="the check to start")
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    stdout, _ = process.communicate(timeout=60)
    assert process.returncode == 130, stdout
    assert "Run interrupted" in stdout


def _events(repo: Path) -> bytes:
    return b"".join(path.read_bytes() for path in (repo / ".axpipe" / "runs").rglob("events.jsonl"))


# -- defect 2: protocol and schema violations are plugin errors, found at load ----------


BROKEN_SHAPES = {
    "dict-schema": "`params_schema` is dict {'max_lines': <class 'int'>}, not a dataclass (or None when the "
                   "plugin takes no parameters)",
    "set-default": "field `params_schema.tags` has the type set[str], which recipe values cannot be checked "
                   "against",
    "no-run": "it has no run() method",
}


def test_plugins_list_shows_protocol_violations_as_broken(cli: CLI, env: dict[str, str]) -> None:
    result = cli("plugins", "list", "--json", env=env)
    assert result.exit_code == 0, result.stderr
    listed = {plugin["name"]: plugin for plugin in json.loads(result.stdout) if plugin["distribution"] == DISTRIBUTION}
    for name, reason in BROKEN_SHAPES.items():
        error = listed[name]["error"]
        assert error.startswith(f"check kind '{name}' does not satisfy the CheckKind protocol (axpipe.checks, "
                                f"from {DISTRIBUTION}, axpipe_faulty_plugins.checks:"), error
        assert reason in error
    # these keep to the protocol's shape; what they do when called is judged when they run
    assert all(listed[name]["error"] is None for name in ("exits-in-run", "returns-dict", "hangs", "exits-guard",
                                                          "exits-agent"))


@pytest.mark.parametrize("kind", sorted(BROKEN_SHAPES))
def test_a_recipe_naming_a_plugin_that_breaks_its_protocol_is_refused(cli: CLI, repo: Path, env: dict[str, str],
                                                                      kind: str) -> None:
    one_check_recipe(repo, kind)
    result = cli("run", "recipe=r", env=env)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert f"goal.checks[0].kind: check kind '{kind}' does not satisfy the CheckKind protocol" in result.stderr
    assert BROKEN_SHAPES[kind] in result.stderr
    assert "internal error" not in result.stderr
    assert not (repo / ".axpipe" / "state.db").exists()  # nothing was planned


def test_a_check_returning_the_wrong_type_is_an_error_receipt_never_running(cli: CLI, repo: Path,
                                                                           env: dict[str, str]) -> None:
    one_check_recipe(repo, "returns-dict")
    run = cli("run", "recipe=r", env=env)
    assert run.exit_code == 6, run.stdout + run.stderr
    assert "internal error" not in run.stderr
    state = check_state(cli, env)
    assert state["status"] == "failed"
    assert state["reason"] == ("check kind 'returns-dict' (axpipe.checks, from axpipe-faulty-plugins) run(): "
                               "returned dict {'status': 'passed', 'summary': 'trust me'}, not CheckOutcome")


# -- defect 3: plugin code that never returns is interrupted ----------------------------


def test_a_hanging_check_is_stopped_by_the_unit_timeout(cli: CLI, repo: Path, env: dict[str, str]) -> None:
    one_check_recipe(repo, "hangs", extra=", timeout: 2s", limits="limits:\n  unit_timeout: 3s")
    started = time.monotonic()
    run = cli("run", "recipe=r", env=env, timeout=60)
    took = time.monotonic() - started
    assert run.exit_code == 3, run.stdout + run.stderr  # the unit timeout's hard stop: blocked
    assert took < 30  # it used to run until killed; 3 s + the 5 s grace, plus start-up
    said = ("[ERROR] c1: timed out in plugin code: check kind 'hangs' (axpipe.checks, from axpipe-faulty-plugins) "
            "run(): interrupted because the unit timeout (limits.unit_timeout, 3 s) passed and it was still running "
            "5 s after the unit's processes were stopped")
    assert said in run.stdout
    assert "hard stop (unit-timeout)" in run.stdout
    assert check_state(cli, env)["status"] == "failed"  # an error receipt, not "running"


def test_a_hanging_check_is_bounded_by_its_own_timeout(cli: CLI, repo: Path, env: dict[str, str]) -> None:
    one_check_recipe(repo, "hangs", extra=", timeout: 1s")
    run = cli("run", "recipe=r", env=env, timeout=60)
    assert run.exit_code == 6, run.stdout + run.stderr
    assert ("timed out in plugin code: check kind 'hangs' (axpipe.checks, from axpipe-faulty-plugins) run(): "
            "interrupted because it was still running 7 s after it started (twice the check's timeout of 1 s, "
            "plus 5 s)") in run.stdout
