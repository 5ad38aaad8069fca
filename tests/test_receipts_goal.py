"""Receipts in goals: what `axpipe verify` may run (the frozen held-out command only), the
fingerprint the idempotent kind compares, the recipe's fingerprint limits, and signals
that end a verification (SIGHUP as SIGTERM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from goalkit import FIX, Project

SECRET = "python3 -c 'import calc; assert calc.double(21) == 0'"  # fails: double(21) is 42


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Project:
    return Project(repo, tmp_path)


def hidden_recipe(project: Project) -> None:
    checks = ('    - {id: unit, acceptance: [AC1], command: "python3 -m unittest -q"}\n'
              f'    - id: hidden\n      acceptance: [AC1]\n      held_out: true\n'
              f'      command: {json.dumps(SECRET)}\n')
    project.recipe(checks=checks, turns=[FIX], outside=True)


def held_out_file(tmp_path: Path) -> Path:
    [path] = (tmp_path / "private").glob("*/contracts/*.json")
    return path


# -- held-out checks run only their frozen command ------------------------------------------


def test_an_edited_held_out_command_is_refused_and_nothing_is_recorded(project: Project, tmp_path: Path) -> None:
    hidden_recipe(project)
    assert project.run().exit_code == 6  # the hidden check fails: bad success, not complete
    stored = held_out_file(tmp_path)
    descriptions = json.loads(stored.read_text())
    descriptions["hidden"]["command"] = "true"
    stored.write_text(json.dumps(descriptions))
    receipts_before = project.receipts()

    result = project.cli("verify", "hidden")

    assert result.exit_code == 2, result.stdout + result.stderr
    assert (f"held-out check 'hidden' of goal 'calc': its description in the private folder ({stored}) "
            "does not match the frozen contract") in result.stderr
    assert "true" not in result.stdout
    assert project.receipts() == receipts_before  # nothing ran, nothing was recorded
    assert project.status()["checks"][1]["status"] == "failed"


def test_an_unreadable_held_out_file_is_refused_with_its_path(project: Project, tmp_path: Path) -> None:
    hidden_recipe(project)
    project.run()
    stored = held_out_file(tmp_path)
    stored.write_text("{not json")
    receipts_before = project.receipts()

    result = project.cli("verify", "hidden")

    assert result.exit_code == 2, result.stdout + result.stderr
    assert "internal error" not in result.stderr
    assert f"the private folder's held-out descriptions {stored} cannot be read (not JSON:" in result.stderr
    assert project.receipts() == receipts_before


@pytest.mark.parametrize("damage", ["edit", "break"])
def test_running_the_recipe_again_restores_a_damaged_held_out_file(project: Project, tmp_path: Path,
                                                                    damage: str) -> None:
    hidden_recipe(project)
    project.run()
    stored = held_out_file(tmp_path)
    original = stored.read_text()
    if damage == "edit":
        stored.write_text(original.replace(json.dumps(SECRET)[1:-1], "true"))
        assert stored.read_text() != original
    else:
        stored.write_text("{not json")
    project.run()  # the recipe still matches the frozen contract: its descriptions are written again
    assert json.loads(stored.read_text()) == json.loads(original)
    result = project.cli("verify", "hidden")
    assert result.exit_code == 1, result.stdout + result.stderr  # the frozen command ran, and failed


# -- the idempotent kind in a goal ------------------------------------------------------------


IDEMPOTENT_ACCEPTANCE = '    AC1: {tag: closes, text: "stable", check: same}\n'


def test_an_idempotent_check_passes_in_a_goal(project: Project) -> None:
    project.recipe(checks='    - {id: same, kind: idempotent, acceptance: [AC1], command: "python3 -c \'print(1)\'"}\n',
                   acceptance=IDEMPOTENT_ACCEPTANCE, agent=False)
    result = project.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    check = project.status()["checks"][0]
    assert (check["status"], check["reason"]) == ("passed", "passed on the current source")
    verified = project.cli("verify", "same")
    assert verified.exit_code == 0, verified.stdout + verified.stderr
    assert "idempotent over two runs" in verified.stdout


def test_an_idempotent_check_that_changes_the_source_fails_in_a_goal(project: Project) -> None:
    append = "python3 -c \\\"open('calc.py', 'a').write('# again\\\\n')\\\""
    project.recipe(checks=f'    - {{id: same, kind: idempotent, acceptance: [AC1], command: "{append}"}}\n',
                   acceptance=IDEMPOTENT_ACCEPTANCE, agent=False)
    project.run()
    assert (project.root / "calc.py").read_text().endswith("# again\n# again\n")  # it ran twice
    result = project.cli("verify", "same")
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "not idempotent: the workspace changed between the runs" in result.stdout
    status = project.status()
    assert status["checks"][0]["status"] == "failed" and status["complete"] is False


def test_an_idempotent_check_over_a_source_without_a_fresh_fingerprint_is_an_error(project: Project) -> None:
    # Two "no fresh evidence" prints must not compare equal: without a digest the kind
    # cannot compare the workspace, and says so (CheckRequest.fingerprint returns None).
    project.recipe(checks='    - {id: same, kind: idempotent, acceptance: [AC1], command: "python3 -c \'print(1)\'"}\n',
                   acceptance=IDEMPOTENT_ACCEPTANCE, agent=False, extra="limits: {fingerprint_entries: 1}\n")
    project.run()
    result = project.cli("verify", "same")
    # the check could not run as a check: an error receipt, exit 1 (5 is only for a missing program)
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "cannot verify idempotence: no fresh workspace fingerprint after the first run" in result.stdout
    status = project.status()
    assert (status["checks"][0]["status"], status["complete"]) == ("failed", False)


# -- the recipe's fingerprint limits ----------------------------------------------------------


@pytest.mark.parametrize(("limits", "named"), [
    ("{fingerprint_entries: 1}", "more than 1 entries under the source paths (limits.fingerprint_entries)"),
    ("{fingerprint_bytes: 10}", "more than 10 bytes of content under the source paths (limits.fingerprint_bytes)"),
])
def test_fingerprint_limits_over_the_source_give_no_fresh_evidence(project: Project, limits: str,
                                                                     named: str) -> None:
    project.recipe(turns=[FIX], extra=f"limits: {limits}\n")
    result = project.run()
    assert result.exit_code == 6, result.stdout + result.stderr
    status = project.status()
    assert status["complete"] is False and status["goal"]["status"] != "complete"
    assert status["fingerprint"]["digest"] is None and named in status["fingerprint"]["reasons"]
    check = status["checks"][0]
    assert check["status"] == "stale" and named in check["reason"]
    verified = project.cli("verify", "unit", "--json")  # outside a run too: the goal keeps the limits
    assert verified.exit_code == 0, verified.stderr
    payload = json.loads(verified.stdout)
    assert payload["fingerprint"] is None and named in payload["fingerprint_reason"]


def test_raising_the_fingerprint_limits_in_a_later_run_applies_them(project: Project) -> None:
    project.recipe(turns=[FIX], extra="limits: {fingerprint_entries: 1}\n")
    assert project.run().exit_code == 6
    project.recipe(turns=[FIX], extra="limits: {fingerprint_entries: 100}\n")
    result = project.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert project.status()["complete"] is True


# -- SIGHUP (the terminal closed) ends a verification as SIGTERM does -------------------------


def held_check(project: Project) -> tuple[Path, Path]:
    """A check that writes its pid and runs until ``hold`` is removed; the goal's first run
    passes it (nothing holds it yet)."""
    import sys

    hold, pid_file = project.scratch / "hold", project.scratch / "check.pid"
    command = [sys.executable, "-c", "import os, sys, time\nopen(sys.argv[2], 'w').write(str(os.getpid()))\n"
               "while os.path.exists(sys.argv[1]): time.sleep(0.02)", str(hold), str(pid_file)]
    project.recipe(checks=f"    - {{id: unit, acceptance: [AC1], command: {json.dumps(command)}}}\n", agent=False)
    assert project.run().exit_code == 0
    hold.touch()
    pid_file.unlink()
    return hold, pid_file


def assert_interrupted_and_gone(project: Project, check_pid: int) -> None:
    from helpers import wait_for

    from axpipe.process import pid_alive

    wait_for(lambda: not pid_alive(check_pid), timeout=10, what="the check to be gone, not orphaned")
    check = project.status()["checks"][0]
    receipt = next(row for row in project.receipts() if row["id"] == check["receipt"])
    assert (receipt["status"], receipt["summary"]) == ("error", "the check did not finish (interrupted)")


def hang_up_during_the_check(project: Project, hold: Path, pid_file: Path, *argv: str) -> tuple[int, str, int]:
    """Start ``axpipe argv``, send it SIGHUP once its (held) check runs; its exit code,
    output and the check's pid."""
    import os
    import signal
    import subprocess

    from helpers import AXPIPE, interrupts_as_default, wait_for

    running = subprocess.Popen([*AXPIPE, *argv], cwd=project.root, env={**os.environ, **project.env},
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               preexec_fn=interrupts_as_default)
    try:
        check_pid = int(wait_for(lambda: pid_file.exists() and pid_file.read_text(), what="the check to start"))
        running.send_signal(signal.SIGHUP)
        output, _ = running.communicate(timeout=60)
    finally:
        hold.unlink(missing_ok=True)
        running.kill()
    return running.returncode, output, check_pid


def test_sighup_to_verify_ends_the_check_and_finishes_its_receipt(project: Project) -> None:
    hold, pid_file = held_check(project)
    code, output, check_pid = hang_up_during_the_check(project, hold, pid_file, "verify", "unit")
    assert code == 130, output
    assert "axpipe: error: interrupted" in output
    assert_interrupted_and_gone(project, check_pid)


def test_closing_the_terminal_of_verify_ends_the_check(project: Project) -> None:
    """The real hang-up: verify's controlling terminal goes away. The kernel sends SIGHUP,
    and the terminal refuses every later write (EIO)."""
    import fcntl
    import os
    import subprocess
    import termios

    from helpers import AXPIPE, interrupts_as_default, wait_for

    hold, pid_file = held_check(project)
    primary, secondary = os.openpty()

    def take_terminal() -> None:  # the new session's controlling terminal, as a login shell's
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        interrupts_as_default()  # as under a login shell, whatever pytest runs under

    verifying = subprocess.Popen([*AXPIPE, "verify", "unit"], cwd=project.root, env={**os.environ, **project.env},
                                 stdin=secondary, stdout=secondary, stderr=secondary, start_new_session=True,
                                 preexec_fn=take_terminal)
    os.close(secondary)
    try:
        check_pid = int(wait_for(lambda: pid_file.exists() and pid_file.read_text(), what="the check to start"))
        os.close(primary)  # the terminal window closes
        verifying.wait(timeout=60)
    finally:
        hold.unlink(missing_ok=True)
        verifying.kill()
    assert verifying.returncode == 130
    assert_interrupted_and_gone(project, check_pid)


def test_verify_under_nohup_keeps_running_after_sighup(project: Project) -> None:
    import os
    import signal
    import subprocess

    from helpers import AXPIPE, wait_for

    hold, pid_file = held_check(project)
    verifying = subprocess.Popen([*AXPIPE, "verify", "unit"], cwd=project.root, env={**os.environ, **project.env},
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    try:
        wait_for(lambda: pid_file.exists() and pid_file.read_text(), what="the check to start")
        verifying.send_signal(signal.SIGHUP)
        wait_for(lambda: project.status()["checks"][0]["status"] == "running", what="the check to run on")
        hold.unlink()
        output, _ = verifying.communicate(timeout=60)
    finally:
        hold.unlink(missing_ok=True)
        verifying.kill()
    assert verifying.returncode == 0, output
    assert project.status()["checks"][0]["status"] == "passed"


@pytest.mark.parametrize("command", [("run", "recipe=calc"), ("goal", "resume")])
def test_sighup_to_run_and_goal_resume_ends_the_check(project: Project, command: tuple[str, ...]) -> None:
    hold, pid_file = held_check(project)
    (project.root / "calc.py").write_text("# changed: the complete goal is checked again\n")
    code, output, check_pid = hang_up_during_the_check(project, hold, pid_file, *command)
    assert code == 130, output
    assert_interrupted_and_gone(project, check_pid)


# -- checks whose verdict depends on git history bind HEAD -------------------------------------


def scope_recipe(project: Project) -> None:
    project.recipe(checks='    - {id: scope, kind: git-scope, acceptance: [AC1], params: {subject: "^inv: "}}\n',
                   acceptance='    AC1: {tag: closes, text: "only calc changes", check: scope}\n',
                   goal_extra="  source_paths: [calc.py]\n", extra="scope: [calc.py]\n", agent=False)


def test_a_history_check_goes_stale_when_head_moves_over_the_same_tree(project: Project) -> None:
    from helpers import git

    scope_recipe(project)
    project.run()  # plans the goal at the current HEAD; no commit in range yet
    (project.root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    git(project.root, "commit", "-qam", "inv: fix add")
    assert project.run().exit_code == 0
    head = git(project.root, "rev-parse", "HEAD").strip()
    (project.root / "other.txt").write_text("out of scope\n")
    git(project.root, "add", "other.txt")
    git(project.root, "commit", "-qm", "inv: add other")
    git(project.root, "rm", "-q", "other.txt")
    git(project.root, "commit", "-qm", "inv: remove other")  # the tree is as it was at `head`

    status = project.status()
    check = status["checks"][0]
    moved = git(project.root, "rev-parse", "HEAD").strip()
    assert check["status"] == "stale" and status["complete"] is False
    assert check["reason"] == (f"HEAD moved since it passed ({head[:12]} -> {moved[:12]}): this check's verdict "
                               "depends on git history, not only on the files")
    assert project.cli("goal", "resume").exit_code != 0  # checked again: it no longer passes
    verified = project.cli("verify", "scope")
    assert verified.exit_code == 1 and "other.txt" in verified.stdout


def test_a_file_check_stays_passed_when_only_head_moves(project: Project) -> None:
    from helpers import git

    project.recipe(turns=[FIX])
    assert project.run().exit_code == 0
    git(project.root, "commit", "-q", "--allow-empty", "-m", "nothing changes in the files")
    check = project.status()["checks"][0]
    assert (check["status"], check["reason"]) == ("passed", "passed on the current source")


def test_the_history_kinds_declare_it() -> None:
    from axpipe.plugin import registry

    declared = {name: bool(getattr(registry.load("axpipe.checks", name), "depends_on_history", False))
                for name in ("git-scope", "receipts", "command", "idempotent", "pytest")}
    assert declared == {"git-scope": True, "receipts": True, "command": False, "idempotent": False,
                        "pytest": False}


def test_a_receipts_check_goes_stale_after_an_empty_commit(project: Project) -> None:
    from helpers import git
    from review_fixtures import build

    build(project.root)  # review receipts whose final round reviewed HEAD
    project.recipe(checks='    - {id: reviewed, kind: receipts, acceptance: [AC1], root: review}\n',
                   acceptance='    AC1: {tag: closes, text: "receipts verify", check: reviewed}\n',
                   agent=False, outside=True)
    result = project.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    git(project.root, "commit", "-q", "--allow-empty", "-m", "after the last review")

    check = project.status()["checks"][0]
    assert check["status"] == "stale" and check["reason"].startswith("HEAD moved since it passed")
    verified = project.cli("verify", "reviewed")
    assert verified.exit_code == 1, verified.stdout + verified.stderr  # the final round no longer reviewed HEAD
