"""Goals end to end: contracts, receipts, the completion gate, agents, held-out checks,
budgets, progress and the headless goal CLI, driven by a scripted agent making real edits."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from goalkit import CALC, FIX, UNIT_CHECK, Project
from helpers import backdate, evidence_bytecode, git

from axpipe.goal.contract import digest_of

NOTES_CHECK = "import sys, pathlib\nsys.exit(pathlib.Path('NOTES').read_text().strip() != sys.argv[1])\n"


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Project:
    (repo / "notes_check.py").write_text(NOTES_CHECK)
    return Project(repo, tmp_path)


# -- plan, contract, sessions -------------------------------------------------------------


def test_an_assured_goal_completes_when_its_checks_pass_on_the_current_source(project: Project) -> None:
    project.recipe(turns=[FIX])
    result = project.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "goal is now complete" in result.stdout
    status = project.status()
    assert status["goal"]["status"] == "complete"
    assert [(check["id"], check["status"]) for check in status["checks"]] == [("unit", "passed")]
    assert status["budget"]["tokens_used"] == 120 and status["budget"]["steps_used"] == 1
    assert "a - b" not in (project.root / "calc.py").read_text()


def test_a_same_size_fix_in_the_same_second_is_checked_as_it_is_now(project: Project,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # The first pass imports calc.py (its check fails and Python caches the bytecode, in
    # axpipe's evidence cache, not the checkout); the second turn's fix keeps the size and
    # the modification time, as an edit within the same second would. The check must run
    # the fixed code, not the cached bytecode.
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    backdate(project.root / "calc.py")  # so the cache is not racy: only forgetting it after the turn helps
    project.recipe(turns=[{"say": "looking"}, {**FIX, "keep_mtime": True}])
    first = project.run()
    assert first.exit_code == 6, first.stdout + first.stderr
    assert evidence_bytecode(project.root, "calc") and not (project.root / "__pycache__").exists()
    second = project.run()
    assert second.exit_code == 0, second.stdout + second.stderr
    assert project.status()["goal"]["status"] == "complete"


def test_the_contract_is_frozen_with_the_baseline_and_stored_twice(project: Project) -> None:
    checks = ('    - {id: unit, acceptance: [AC1], command: "python3 -m unittest -q"}\n'
              '    - {id: since, acceptance: [AC1], command: "git diff --quiet {BASELINE} -- test_calc.py"}\n')
    project.recipe(checks=checks)
    project.run()
    head = git(project.root, "rev-parse", "HEAD").strip()
    document = json.loads((project.root / ".axpipe" / "goals" / "calc" / "contract.json").read_text())
    contract = document["contract"]
    assert contract["baseline"] == head
    assert contract["checks"][1]["command"] == f"git diff --quiet {head} -- test_calc.py"
    assert document["digest"] == digest_of(contract)
    assert project.status()["goal"]["contract_digest"] == document["digest"]


def test_running_again_continues_the_goal_in_a_new_session(project: Project) -> None:
    project.recipe(default={"say": "nothing to do"})
    first = project.run()
    assert first.exit_code == 6  # one pass, the goal still active
    session = project.status()["goal"]["session"]
    second = project.run()
    assert "goal calc continued in session" in second.stdout
    assert project.status()["goal"]["session"] != session


def test_editing_frozen_requirements_is_a_contract_mismatch(project: Project) -> None:
    project.recipe()
    project.run()
    project.recipe(checks=UNIT_CHECK.replace("unittest -q", "unittest -v"))
    result = project.run()
    assert result.exit_code == 2
    # refused before the run starts, like any input error: one message on stderr
    assert result.stderr.startswith("axpipe: error: contract mismatch: the frozen requirements of goal 'calc' "
                                    "changed")
    assert "check unit: command changed" in result.stderr
    assert "axpipe goal revise" in result.stderr


def test_a_contract_mismatch_is_refused_before_the_probe_and_leaves_no_run_folder(project: Project) -> None:
    import sqlite3

    marker = project.root / ".axpipe" / "probe-ran"
    probe = f'probe: "touch {marker}"\n'
    project.recipe(extra=probe)
    assert project.run().exit_code == 6
    marker.unlink()
    runs = project.root / ".axpipe" / "runs"
    before = sorted(path.relative_to(runs) for path in runs.rglob("*"))
    project.recipe(checks=UNIT_CHECK.replace("unittest -q", "unittest -v"), extra=probe)
    result = project.run()
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "contract mismatch" in result.stderr
    assert not marker.exists()  # the probe did not run
    assert sorted(path.relative_to(runs) for path in runs.rglob("*")) == before
    connection = sqlite3.connect(project.root / ".axpipe" / "state.db")
    assert connection.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
    assert connection.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 1
    connection.close()


def test_budget_overrides_are_not_frozen_requirements(project: Project) -> None:
    project.recipe()
    project.run()
    assert project.run("calc", "goal.budget.steps=50").exit_code == 6


def test_revise_makes_a_new_contract_old_receipts_cannot_satisfy_and_budgets_carry_over(project: Project) -> None:
    unit = '    - {id: unit, acceptance: [AC1], command: "python3 -m unittest -q"}\n'
    notes = '    - {id: notes, acceptance: [AC1], command: "python3 notes_check.py done"}\n'
    project.recipe(turns=[FIX], checks=unit + notes)
    assert project.run().exit_code == 6  # unit passes, notes does not
    old = project.status()
    assert [check["status"] for check in old["checks"]] == ["passed", "failed"]
    project.recipe(checks=unit + '    - {id: notes, acceptance: [AC1], command: "python3 notes_check.py ready"}\n')
    revised = project.cli("goal", "revise", "the notes say ready, not done")
    assert revised.exit_code == 0, revised.stderr
    new = project.status()
    assert new["goal"]["contract_digest"] != old["goal"]["contract_digest"]
    assert new["goal"]["status"] == "active"
    unit_state = new["checks"][0]
    assert unit_state["status"] == "missing"  # its passing receipt was made under the old contract
    assert new["budget"]["tokens_used"] == old["budget"]["tokens_used"] == 120
    stored = json.loads((project.root / ".axpipe" / "goals" / "calc" / "contract.json").read_text())
    assert stored["revises"] == old["goal"]["contract_digest"]
    assert stored["correction"] == "the notes say ready, not done"
    (project.root / "NOTES").write_text("ready\n")
    assert project.cli("verify", "unit").exit_code == 0
    assert project.cli("verify", "notes").exit_code == 0
    assert [check["status"] for check in project.status()["checks"]] == ["passed", "passed"]


def test_a_complete_goal_cannot_be_revised(project: Project) -> None:
    project.recipe(turns=[FIX])
    assert project.run().exit_code == 0
    project.recipe(checks='    - {id: unit, acceptance: [AC1], command: "python3 -m unittest -v"}\n')
    result = project.cli("goal", "revise", "verbose")
    assert result.exit_code == 2
    assert "is complete: finished work and exhausted budgets need a new goal" in result.stderr
    rerun = project.run()
    said = rerun.stdout + rerun.stderr
    assert rerun.exit_code == 2 and "contract mismatch" in said
    assert "axpipe goal clear --goal calc" in said and "goal revise" not in said  # it would be refused


def test_turning_assure_off_does_not_lift_a_complete_goals_frozen_contract(project: Project) -> None:
    project.recipe(turns=[FIX])
    assert project.run().exit_code == 0
    receipts = len(project.receipts())
    failing = '    - {id: more, acceptance: [AC1], command: "python3 -c \'raise SystemExit(1)\'"}\n'
    project.recipe(checks=UNIT_CHECK + failing, goal_extra="  assure: false\n")
    # The recipe is under the goal's source paths (the project), so its receipts no longer
    # hold and `goal resume` composes the edited recipe too.
    for result in (project.run(), project.cli("goal", "resume")):
        said = result.stdout + result.stderr
        assert result.exit_code == 2, said
        assert "contract mismatch" in said
        assert "assure changed from true to false (turning assurance off does not lift a frozen contract)" in said
        assert "axpipe goal clear --goal calc" in said
    assert len(project.receipts()) == receipts  # nothing ran
    assert project.status()["goal"]["status"] == "complete"


def test_revise_needs_a_changed_recipe(project: Project) -> None:
    project.recipe()
    project.run()
    result = project.cli("goal", "revise", "nothing really")
    assert result.exit_code == 2
    assert "unchanged: nothing to revise" in result.stderr


# -- receipts -------------------------------------------------------------------------------


def test_verify_records_a_receipt_with_every_field(project: Project) -> None:
    project.recipe()
    project.run()
    result = project.cli("verify", "unit", "--json")
    assert result.exit_code == 1  # add() still subtracts
    payload = json.loads(result.stdout)
    receipt = next(row for row in project.receipts() if row["id"] == payload["receipt"])
    status = project.status()
    assert receipt["goal_id"] == "calc" and receipt["session_id"] == status["goal"]["session"]
    assert receipt["workspace"] == str(project.root)
    assert receipt["contract_digest"] == status["goal"]["contract_digest"]
    assert receipt["command"] == "python3 -m unittest -q"
    assert (receipt["status"], receipt["exit_code"]) == ("failed", 1)
    assert receipt["fingerprint"] and receipt["started_at"] and receipt["finished_at"]
    assert "AssertionError" in receipt["output_tail"]
    assert Path(json.loads(receipt["artifacts"])[0]).is_file()


def test_verify_exit_codes(project: Project) -> None:
    tools = project.scratch / "tools"
    tools.mkdir()
    (tools / "site-tool").write_text("#!/bin/sh\necho site-tool 1.0\n")
    (tools / "site-tool").chmod(0o755)
    checks = ('    - {id: unit, acceptance: [AC1], command: "python3 -m unittest -q"}\n'
              '    - {id: tool, acceptance: [AC1], command: "site-tool --version"}\n'
              '    - {id: argv, acceptance: [AC1], command: [site-tool, --version]}\n')
    project.recipe(checks=checks, turns=[FIX])
    project.env["PATH"] = f"{tools}{os.pathsep}{os.environ['PATH']}"
    project.run()
    goals_folder = project.root / ".axpipe" / "goals"
    before = sorted(goals_folder.rglob("*"))
    unknown = project.cli("verify", "units")
    assert unknown.exit_code == 2 and "unknown check 'units' (did you mean 'unit'?)" in unknown.stderr
    assert sorted(goals_folder.rglob("*")) == before  # not even an empty events.jsonl: nothing ran
    assert project.cli("verify", "unit").exit_code == 0
    gone = project.cli("verify", "tool", env={"PATH": os.environ["PATH"]})  # the tool has gone from PATH
    assert gone.exit_code == 5, gone.stdout + gone.stderr  # environment not ready: the program is not there
    assert "tool: error (command not found: 'site-tool')" in gone.stdout  # the shell's "not found"
    argv = project.cli("verify", "argv", env={"PATH": os.environ["PATH"]})  # no shell: axpipe finds it missing
    assert argv.exit_code == 5, argv.stdout + argv.stderr
    assert "argv: error (command not found: 'site-tool' is not on PATH" in argv.stdout
    (project.root / "calc.py").write_text("def add(a, b):\n    return 0\n\n\ndef double(x):\n    return x * 2\n")
    assert project.cli("verify", "unit").exit_code == 1


def test_a_check_that_writes_into_the_source_gives_no_fresh_evidence(project: Project) -> None:
    project.recipe(checks='    - {id: unit, acceptance: [AC1], command: "python3 -m unittest -q > report.txt"}\n',
                   turns=[FIX])
    project.run()
    check = project.status()["checks"][0]
    assert check["status"] == "stale"
    assert "the check changed the source it verifies" in check["reason"]


def test_each_check_of_a_pass_starts_from_the_source_the_previous_one_left(
        project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # 3 checks: one fingerprint before the first and one after each (not two per check:
    # nothing runs between one check's end and the next one's start). The completion gate
    # judges on the last one: without reviewers nothing runs between verify and settle.
    checks = "".join(f'    - {{id: c{n}, acceptance: [AC1], command: "python3 -m unittest -q"}}\n' for n in range(3))
    project.recipe(checks=checks, acceptance='    AC1: {tag: closes, text: "add() adds", check: c0}\n',
                   agent=False)
    (project.root / "calc.py").write_text(CALC.replace("a - b", "a + b"))
    from axpipe import cli
    from axpipe.goal import fingerprint

    computed = []
    original = fingerprint.compute
    monkeypatch.setattr(fingerprint, "compute", lambda *a, **k: computed.append(1) or original(*a, **k))
    monkeypatch.chdir(project.root)
    assert cli.main(["run", "recipe=calc"]) == 0
    capsys.readouterr()
    assert len(computed) == 4
    assert [check["status"] for check in project.status()["checks"]] == ["passed"] * 3


# -- the completion gate ------------------------------------------------------------------


def test_an_edit_after_the_pass_makes_the_receipt_stale(project: Project) -> None:
    project.recipe(turns=[FIX])
    project.run()
    (project.root / "calc.py").write_text((project.root / "calc.py").read_text() + "\n# touched\n")
    check = project.status()["checks"][0]
    assert (check["status"], check["reason"]) == ("stale", "the source changed since it passed")


def test_a_failed_check_blocks_completion(project: Project) -> None:
    project.recipe()
    project.run()
    check = project.status()["checks"][0]
    assert check["status"] == "failed" and check["reason"] == "exit code 1"


def test_a_receipt_from_another_session_is_missing_here(project: Project) -> None:
    project.recipe(turns=[FIX])
    project.run()
    forked = project.cli("goal", "fork")
    assert forked.exit_code == 0 and "checks must run again there" in forked.stdout
    check = project.status()["checks"][0]
    assert check["status"] == "missing"
    assert check["reason"].startswith("no receipt in this session (the latest is from session s-")


def test_a_running_check_is_reported_as_running(project: Project) -> None:
    """The check is held open on a file outside the workspace for as long as the test
    needs, rather than for a short timeout that a slow `goal status` could miss."""
    import subprocess
    import sys

    from helpers import AXPIPE, wait_for

    hold = project.scratch / "hold"
    command = [sys.executable, "-c", "import os, sys, time\nwhile os.path.exists(sys.argv[1]): time.sleep(0.02)",
               str(hold)]
    project.recipe(checks=f"    - {{id: unit, acceptance: [AC1], command: {json.dumps(command)}}}\n")
    assert project.cli("run", "recipe=calc").exit_code == 0  # nothing holds the check yet
    hold.touch()
    verifying = subprocess.Popen([*AXPIPE, "verify", "unit"], cwd=project.root, env={**os.environ, **project.env},
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        running = wait_for(lambda: project.status()["checks"][0]["status"] == "running", what="a running check")
        assert running
    finally:
        hold.unlink(missing_ok=True)
        try:
            output, _ = verifying.communicate(timeout=60)
        finally:
            verifying.kill()
    assert verifying.returncode == 0, output
    assert project.status()["checks"][0]["status"] == "passed"  # released, the check ends and passes


def test_sigterm_to_verify_ends_the_check_and_finishes_its_receipt(project: Project) -> None:
    import signal
    import subprocess
    import sys

    from helpers import AXPIPE, wait_for

    from axpipe.process import pid_alive

    hold, pid_file = project.scratch / "hold", project.scratch / "check.pid"
    command = [sys.executable, "-c", "import os, sys, time\nopen(sys.argv[2], 'w').write(str(os.getpid()))\n"
               "while os.path.exists(sys.argv[1]): time.sleep(0.02)", str(hold), str(pid_file)]
    project.recipe(checks=f"    - {{id: unit, acceptance: [AC1], command: {json.dumps(command)}}}\n")
    assert project.cli("run", "recipe=calc").exit_code == 0  # nothing holds the check yet
    hold.touch()
    pid_file.unlink()
    verifying = subprocess.Popen([*AXPIPE, "verify", "unit"], cwd=project.root, env={**os.environ, **project.env},
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        check_pid = int(wait_for(lambda: pid_file.exists() and pid_file.read_text(), what="the check to start"))
        verifying.send_signal(signal.SIGTERM)
        output, _ = verifying.communicate(timeout=60)
    finally:
        hold.unlink(missing_ok=True)
        verifying.kill()
    assert verifying.returncode == 130, output
    wait_for(lambda: not pid_alive(check_pid), timeout=10, what="the check to be gone, not orphaned")
    check = project.status()["checks"][0]
    assert check["status"] != "running"  # the receipt says how it ended, with nothing left behind
    receipt = next(row for row in project.receipts() if row["id"] == check["receipt"])
    assert (receipt["status"], receipt["summary"]) == ("error", "the check did not finish (interrupted)")


def test_sigterm_to_goal_resume_ends_the_agent_and_says_so(project: Project) -> None:
    import signal
    import subprocess

    from helpers import AXPIPE, wait_for

    from axpipe.process import pid_alive
    from axpipe.runtime.processes import descendants

    project.recipe(turns=[{"say": "first"}, {"sleep": 120}])
    assert project.run().exit_code == 6  # active, with the agent's next turn to come
    resuming = subprocess.Popen([*AXPIPE, "goal", "resume"], cwd=project.root, env={**os.environ, **project.env},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: len(project.prompts()) == 2, what="the agent's second turn")
        agent = wait_for(lambda: descendants(resuming.pid), what="the agent process")
        resuming.send_signal(signal.SIGTERM)
        output, errors = resuming.communicate(timeout=60)
    finally:
        resuming.kill()
    assert resuming.returncode == 130, errors
    wait_for(lambda: not any(pid_alive(pid) for pid in agent), timeout=10, what="the agent to be gone")
    last = json.loads(output.strip().splitlines()[-1])
    assert (last["type"], last["exit_code"]) == ("goal.resume_finished", 130)


def test_receipts_from_another_workspace_are_stale(project: Project, tmp_path: Path) -> None:
    project.recipe(turns=[FIX])
    project.run()
    moved = tmp_path / "moved"
    shutil.move(str(project.root), moved)
    project.root = moved
    check = project.status()["checks"][0]
    assert check["status"] == "stale" and check["reason"].startswith("verified in another workspace")


def test_no_fresh_evidence_blocks_completion(project: Project) -> None:
    project.recipe(turns=[{**FIX, "say": "and a link"}])
    (project.root / "link.py").symlink_to(project.root / "calc.py")
    result = project.run()
    assert result.exit_code == 6
    check = project.status()["checks"][0]
    assert check["status"] == "stale" and "symlink: link.py" in check["reason"]


def test_an_unassured_goal_completes_on_a_passing_verification_after_its_last_edit(project: Project) -> None:
    project.recipe(turns=[FIX], goal_extra="  assure: false\n")
    result = project.run()
    assert result.exit_code == 0
    status = project.status()
    assert status["goal"]["assured"] is False and status["goal"]["contract"] == "no assurance contract"
    assert status["goal"]["contract_digest"] is None
    assert "no assurance contract" in project.cli("goal", "status").stdout
    assert not (project.root / ".axpipe" / "goals" / "calc" / "contract.json").exists()


# -- agents ---------------------------------------------------------------------------------


def test_the_agent_gets_the_pinned_environment_and_a_rendered_prompt(project: Project) -> None:
    project.recipe(turns=[{"write": {"env-seen.json": ""}, "say": "x"}],
                   extra='work:\n  prompt: "Make {{ goal.objective }} true. Turn {{ iteration }}."\n')
    project.run()
    prompt = project.prompts()[0]
    assert prompt.startswith("Make calc.add adds its arguments true. Turn 1.")
    assert "`unit`: missing (never verified); runs `python3 -m unittest -q`" in prompt


def test_files_the_agent_edits_join_the_fingerprint(project: Project) -> None:
    project.recipe(turns=[{**FIX, "write": {"notes/outside.txt": "v1"}}],
                   goal_extra='  source_paths: ["calc.py", "test_calc.py"]\n')
    assert project.run().exit_code == 0
    (project.root / "notes" / "outside.txt").write_text("v2")  # outside source_paths, but edited by the agent
    assert project.status()["checks"][0]["status"] == "stale"


def test_a_non_autonomous_agent_at_a_permission_prompt_pauses_the_goal(project: Project) -> None:
    project.recipe(turns=[{"ask": "Allow editing calc.py? [y/N]"}], agent_extra="  autonomous: false\n")
    result = project.run()
    assert result.exit_code == 6
    status = project.status()
    assert status["goal"]["status"] == "paused"
    assert status["goal"]["reason"] == "the agent stopped at a permission prompt: 'Allow editing calc.py? [y/N]'"
    assert not any(row for row in project.receipts())  # the tick stopped before verify


def test_a_recipe_prompt_template_error_is_a_config_error(project: Project) -> None:
    project.recipe(extra='work:\n  prompt: "{{ goal.nope }}"\n')
    result = project.run()
    assert result.exit_code == 2
    assert "work.prompt: 'dict object' has no attribute 'nope'; variables available: checks, goal" \
        in result.stdout + result.stderr


# -- held-out checks ------------------------------------------------------------------------

HIDDEN_COMMAND = "python3 -c 'import calc; assert calc.double(21) == 42, \"SECRET-ORACLE\"'"
HIDDEN_PURPOSE = "SECRET-PURPOSE doubling on unseen inputs"


def held_out_checks(hidden_command: str = HIDDEN_COMMAND) -> str:
    return ('    - {id: unit, acceptance: [AC1], command: "python3 -m unittest -q"}\n'
            f'    - id: hidden\n      acceptance: [AC1]\n      held_out: true\n'
            f'      command: {json.dumps(hidden_command)}\n      purpose: "{HIDDEN_PURPOSE}"\n')


def _all_text_under(root: Path) -> str:
    chunks = []
    for path in root.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            chunks.append(path.read_bytes().decode("utf-8", errors="replace"))
    dump = project_dump(root / ".axpipe" / "state.db")
    return "\n".join(chunks) + dump


def project_dump(database: Path) -> str:
    import sqlite3

    if not database.exists():
        return ""
    return "\n".join(sqlite3.connect(database).iterdump())


def test_held_out_text_never_reaches_the_agent_or_its_workspace(project: Project, tmp_path: Path) -> None:
    broken = "python3 -c 'import calc; assert calc.double(21) == 0, \"SECRET-ORACLE\"'"
    project.recipe(checks=held_out_checks(broken), turns=[FIX], default={"say": "again"},
                   goal_extra="  no_progress_limit: 1\n", outside=True)
    project.run()
    project.run()
    project.cli("verify", "hidden")
    prompts = project.prompts()
    assert len(prompts) == 2
    for text in [*prompts, _all_text_under(project.root)]:
        for secret in ("SECRET-ORACLE", "SECRET-PURPOSE", "calc.double(21)"):
            assert secret not in text
    private = (tmp_path / "private").rglob("*.log")
    assert any("SECRET-ORACLE" in path.read_text() for path in private)  # kept, but outside the workspace


def test_a_private_folder_inside_the_workspace_is_refused(project: Project) -> None:
    project.recipe(checks=held_out_checks(), agent=False, outside=True)
    inside = project.root / "private"
    result = project.cli("run", "recipe=calc", env={"AXPIPE_PRIVATE_DIR": str(inside)})
    assert result.exit_code == 2
    assert (f"goal.checks[1].held_out: AXPIPE_PRIVATE_DIR: the private folder {inside} is inside the workspace "
            f"{project.root}, where the agent could read the held-out checks") in result.stderr
    assert "Nothing was run and nothing was written." in result.stderr
    assert not inside.exists() and not (project.root / ".axpipe").exists()  # refused before the lock or a run


def test_a_multirun_leaves_no_held_out_text_in_hydras_sweep_record(project: Project) -> None:
    # Hydra's sweeper writes the whole composed config to multirun.yaml before the first job.
    broken = "python3 -c 'import calc; assert calc.double(21) == 0, \"SECRET-ORACLE\"'"
    project.recipe(checks=held_out_checks(broken), agent=False, outside=True)
    result = project.cli("run", "-m", "recipe=calc", "goal.budget.steps=20,21")
    assert result.exit_code != 2, result.stderr
    records = list((project.root / ".axpipe" / "runs" / "multirun").rglob("multirun.yaml"))
    assert len(records) == 1 and "hidden" in records[0].read_text()  # the check is named, not described
    text = _all_text_under(project.root)
    for secret in ("SECRET-ORACLE", "SECRET-PURPOSE", "calc.double(21)"):
        assert secret not in text


def test_visible_green_with_a_failing_held_out_check_is_bad_success(project: Project) -> None:
    broken = "python3 -c 'import calc; assert calc.double(21) == 0'"
    project.recipe(checks=held_out_checks(broken), turns=[FIX])
    result = project.cli("run", "recipe=calc", "--json")
    assert result.exit_code == 6
    assert any(event["type"] == "goal.bad_success" for event in project.events(result))
    status = project.status()
    assert status["goal"]["bad_success"] is True
    assert {check["id"]: check["status"] for check in status["checks"]} == {"unit": "passed", "hidden": "failed"}
    assert "bad success" in project.cli("goal", "status").stdout


def test_a_held_out_check_counts_for_completion(project: Project) -> None:
    project.recipe(checks=held_out_checks(), turns=[FIX])
    assert project.run().exit_code == 0


def test_a_moved_checkout_gets_its_held_out_descriptions_back_from_the_recipe(
        project: Project, tmp_path: Path) -> None:
    # The private folder is keyed by the workspace's path: after a move it is empty, and the
    # recipe (which still matches the frozen contract) is where the descriptions come from.
    project.recipe(checks=held_out_checks(), turns=[FIX], outside=True)
    assert project.run().exit_code == 0
    moved = tmp_path / "moved-checkout"
    shutil.move(project.root, moved)
    project.root = moved
    result = project.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "verify  2 of 2 checks passed" in result.stdout
    assert project.cli("verify", "hidden").exit_code == 0


def test_goal_resume_in_a_moved_checkout_gets_the_held_out_descriptions_back(
        project: Project, tmp_path: Path) -> None:
    project.recipe(checks=held_out_checks(), turns=[{"say": "looking"}, FIX], goal_extra="  no_progress_limit: 1\n",
                   outside=True)
    first = project.run()
    assert first.exit_code != 0 and project.status()["goal"]["status"] != "complete", first.stdout
    moved = tmp_path / "moved-checkout"
    shutil.move(project.root, moved)
    project.root = moved
    result = project.cli("goal", "resume")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert project.status()["complete"] is True


# -- budgets, progress, blocked -----------------------------------------------------------


def test_tokens_budget_gives_one_wrap_up_turn_then_budget_limited(project: Project) -> None:
    project.recipe(default={"say": "working", "tokens": 120}, goal_extra="  budget: {tokens: 100}\n")
    assert project.run().exit_code == 6
    result = project.cli("goal", "resume")
    assert result.exit_code == 4
    prompts = project.prompts()
    assert len(prompts) == 2 and "## Wrap up" in prompts[1] and "tokens budget is spent" in prompts[1]
    assert result.stderr.strip().splitlines()[-1] == "Goal budget_limited: calc.add adds its arguments"
    assert project.run().exit_code == 4  # an exhausted budget needs a new goal


def test_a_complete_goal_whose_source_changed_is_not_complete_to_status_or_resume(project: Project) -> None:
    project.recipe(turns=[FIX], default={"say": "nothing to do"}, goal_extra="  no_progress_limit: 1\n")
    assert project.run().exit_code == 0
    assert project.cli("goal", "resume").exit_code == 0  # the receipts still hold: nothing runs
    assert len(project.prompts()) == 1
    (project.root / "calc.py").write_text(CALC)  # add() subtracts again
    text = project.cli("goal", "status").stdout
    assert "status:      complete when last settled, but that no longer holds on the current source" in text
    assert "every check passed on the current source" not in text
    assert project.status()["complete"] is False
    result = project.cli("goal", "resume")
    assert result.exit_code == 6, result.stderr  # reopened, driven, and paused: not "complete", exit 0
    events = project.events(result)
    reopened = next(index for index, event in enumerate(events) if event["type"] == "goal.status")
    assert (events[reopened]["previous"], events[reopened]["goal_status"]) == ("complete", "active")
    assert events[reopened]["reason"].startswith("reopened: unit failed")
    rerun = next(index for index, event in enumerate(events) if event["type"] == "check.finished")
    assert rerun < reopened  # the checks ran again before the goal reopened ...
    first_work = next(event for event in events if event.get("phase") == "work" and "status" in event)
    assert first_work["status"] == "skipped"  # ... with no agent turn before them
    assert result.stderr.strip().splitlines()[-1] == "Goal paused: calc.add adds its arguments"


def test_tokens_budget(project: Project) -> None:
    project.recipe(default={"tokens": 600}, goal_extra="  budget: {tokens: 1000}\n")
    assert project.run().exit_code == 6
    result = project.cli("goal", "resume")
    assert result.exit_code == 4
    status = project.status()
    assert status["goal"]["status"] == "budget_limited"
    assert status["goal"]["reason"].startswith("tokens budget (1200 of 1000 tokens) spent")


def test_time_budget(project: Project) -> None:
    project.recipe(default={"sleep": 1.2}, goal_extra="  budget: {time: 1s}\n")
    project.run()
    result = project.cli("goal", "resume")
    assert result.exit_code == 4
    assert project.status()["goal"]["reason"].startswith("time budget")


def test_a_wrap_up_turn_that_completes_the_goal_completes_it(project: Project) -> None:
    project.recipe(turns=[{"say": "nothing yet", "tokens": 120}, FIX], goal_extra="  budget: {tokens: 100}\n")
    project.run()
    assert project.cli("goal", "resume").exit_code == 0


def test_no_progress_adds_recovery_guidance_then_pauses(project: Project) -> None:
    project.recipe(default={"say": "trying the same thing"}, goal_extra="  no_progress_limit: 2\n")
    project.run()
    result = project.cli("goal", "resume")
    assert result.exit_code == 6
    prompts = project.prompts()
    assert ["Recovery guidance" in prompt for prompt in prompts] == [False, False, True]
    status = project.status()
    assert status["goal"]["status"] == "paused"
    assert status["goal"]["reason"] == "no new passing evidence in 3 ticks; recovery guidance did not help"


def test_progress_resets_the_no_progress_count(project: Project) -> None:
    checks = ('    - {id: unit, acceptance: [AC1], command: "python3 -m unittest -q"}\n'
              '    - {id: notes, acceptance: [AC1], command: "python3 notes_check.py done"}\n')
    project.recipe(checks=checks, goal_extra="  no_progress_limit: 1\n", turns=[
        {"say": "nothing"}, FIX, {"say": "nothing"}, {"write": {"NOTES": "done"}}])
    project.run()
    assert project.cli("goal", "resume").exit_code == 0


def test_a_complete_block_request_blocks_the_goal(project: Project) -> None:
    blocked = {"kind": "external-service", "reason": "the staging database is down",
               "external_change": "restart staging", "evidence": ["$RECEIPT"], "no_independent_work": True}
    project.recipe(turns=[{"say": "first look"}, {"blocked": blocked}])
    project.run()
    result = project.cli("goal", "resume")
    assert result.exit_code == 3
    status = project.status()
    assert status["goal"]["status"] == "blocked"
    assert status["goal"]["blocked"]["external_change"] == "restart staging"
    assert status["goal"]["blocked"]["evidence"][0].startswith("r-")


def test_an_incomplete_block_request_is_refused(project: Project) -> None:
    blocked = {"kind": "x", "reason": "y", "external_change": "z", "evidence": ["r-nope"],
               "no_independent_work": True}
    project.recipe(turns=[{"blocked": blocked}])
    result = project.cli("run", "recipe=calc", "--json")
    refused = [event for event in project.events(result) if event["type"] == "goal.block_refused"]
    assert refused and "not receipts of this goal: r-nope" in refused[0]["reason"]
    assert project.status()["goal"]["status"] == "active"


# -- the headless goal CLI ----------------------------------------------------------------


def test_resume_drives_to_completion_with_events_on_stdout(project: Project, tmp_path: Path) -> None:
    project.recipe(turns=[{"say": "looking"}, FIX])
    project.run()
    log = tmp_path / "resume.jsonl"
    result = project.cli("goal", "resume", "--event-log", str(log))
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines and all(json.loads(line)["goal"] == "calc" for line in lines)
    assert log.read_text().splitlines() == lines
    assert result.stderr.strip().splitlines()[-1] == "Goal complete: calc.add adds its arguments"


def test_resume_of_a_paused_goal_continues_it(project: Project) -> None:
    project.recipe(turns=[{"say": "x"}, FIX])
    project.run()
    assert project.cli("goal", "pause").exit_code == 0
    assert project.status()["goal"]["status"] == "paused"
    assert project.cli("goal", "resume").exit_code == 0


def test_resume_idle_timeout_exits_124(project: Project) -> None:
    project.recipe(turns=[{"say": "x"}], default={"sleep": 5})  # the second turn goes quiet
    project.run()
    result = project.cli("goal", "resume", "--idle-timeout-ms", "700", timeout=60)
    assert result.exit_code == 124
    assert result.stderr.strip().splitlines()[-1] == "Goal active: calc.add adds its arguments"


def test_resume_session_errors(project: Project) -> None:
    project.recipe()
    project.run()
    # an unknown id given as input is an input error (exit 2), whether a goal's or a session's
    for option, value, said in (("--session", "s-nope", "no session 's-nope'"),
                                ("--goal", "nosuch", "unknown goal 'nosuch'")):
        result = project.cli("goal", "resume", option, value)
        assert result.exit_code == 2 and said in result.stderr, result.stderr
    project.recipe(name="other")
    project.run("other")
    ambiguous = project.cli("goal", "resume")
    assert ambiguous.exit_code == 1 and "several resumable goals: " in ambiguous.stderr


def test_status_with_only_settled_goals_shows_the_latest(project: Project) -> None:
    project.recipe(turns=[FIX])
    assert project.run().exit_code == 0
    project.recipe(name="other")
    assert project.run("other").exit_code == 0  # calc.py is fixed already: complete at once
    result = project.cli("goal", "status")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("Goal other: calc.add adds its arguments\n  status:      complete")
    assert project.status()["goal"]["id"] == "other"
    assert project.cli("goal", "resume").exit_code == 1  # acting on a goal still needs it named


def test_status_without_any_goal(project: Project) -> None:
    result = project.cli("goal", "status")
    assert result.exit_code == 2 and "no goal has been planned here" in result.stderr


def test_clear_removes_the_goal(project: Project) -> None:
    project.recipe()
    project.run()
    assert project.cli("goal", "clear").exit_code == 0
    assert not (project.root / ".axpipe" / "goals" / "calc").exists()
    assert project.cli("goal", "status").exit_code == 1
    assert project.run().exit_code == 6  # planned afresh


def test_status_json_shape(project: Project, snapshot: object) -> None:
    project.recipe(turns=[FIX])
    project.run()
    status = project.status()
    for volatile in ("contract_digest", "baseline", "session"):
        status["goal"][volatile] = f"<{volatile}>"
    status["checks"][0]["receipt"] = "<receipt>"
    status["fingerprint"]["digest"] = "<digest>"
    status["budget"]["time_used"] = "<seconds>"
    assert status == snapshot


def test_running_a_complete_goal_again_re_verifies_it_and_a_regression_reopens_it(project: Project) -> None:
    project.recipe(turns=[FIX])
    assert project.run().exit_code == 0
    again = project.run()
    assert again.exit_code == 0 and "complete; re-verifying it" in again.stdout
    assert len(project.prompts()) == 1  # no agent turn for a complete goal
    assert len([row for row in project.receipts() if row["check_id"] == "unit"]) == 2
    (project.root / "calc.py").write_text((project.root / "calc.py").read_text().replace("a + b", "a * b"))
    broken = project.run()
    assert broken.exit_code == 6
    status = project.status()
    assert status["goal"]["status"] == "active" and status["goal"]["reason"].startswith("reopened: unit failed")


def test_a_goal_id_that_is_not_one_folder_name_is_a_config_error(project: Project) -> None:
    (project.root / "src").mkdir()
    (project.root / "src" / "keep.py").write_text("x = 1\n")
    project.recipe(goal_extra='  id: "../../src"\n')
    result = project.run()
    assert result.exit_code == 2
    assert "goal.id: '../../src' is not a valid id (a letter or digit, then letters, digits, '.', '_', '-')" \
        in result.stderr
    assert sorted(path.name for path in (project.root / "src").iterdir()) == ["keep.py"]
    assert not (project.root / ".axpipe").exists()


def test_goal_clear_refuses_a_stored_goal_id_that_would_leave_the_goals_folder(project: Project) -> None:
    import sqlite3

    project.recipe(turns=[FIX])
    assert project.run().exit_code == 0
    (project.root / "src").mkdir()
    (project.root / "src" / "keep.py").write_text("x = 1\n")
    # A store from before goal ids were validated (or edited by hand) may hold such an id.
    connection = sqlite3.connect(project.root / ".axpipe" / "state.db")
    connection.execute("PRAGMA foreign_keys = OFF")
    tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        columns = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
        for column in ("goal_id", "id") if table == "goals" else ("goal_id",):
            if column in columns:
                connection.execute(f"UPDATE {table} SET {column} = '../../src' WHERE {column} = 'calc'")
    connection.commit()
    connection.close()
    result = project.cli("goal", "clear", "--goal", "../../src")
    assert result.exit_code == 2, result.stderr
    assert "goal id '../../src' is not a folder name" in result.stderr
    assert (project.root / "src" / "keep.py").is_file()
    assert project.status("--goal", "../../src")["goal"]["id"] == "../../src"  # nothing was removed


def test_goal_and_session_of_another_goal_are_refused(project: Project) -> None:
    project.recipe(default={"say": "nothing"})
    project.recipe(name="other", default={"say": "nothing"})
    assert project.run("calc").exit_code == 6
    assert project.run("other").exit_code == 6
    other = project.status("--goal", "other")["goal"]["session"]
    receipts = len(project.receipts())
    for args in (("verify", "unit"), ("goal", "status"), ("goal", "resume")):
        result = project.cli(*args, "--goal", "calc", "--session", other)
        assert result.exit_code == 2, (args, result.stdout, result.stderr)
        assert f"--session {other} belongs to goal 'other', not to --goal calc" in result.stderr
    assert len(project.receipts()) == receipts
    mine = project.status("--goal", "calc")["goal"]["session"]
    assert project.status("--goal", "calc", "--session", mine)["goal"]["id"] == "calc"


def _schedule_of(project: Project) -> list[tuple[str, str]]:
    listed = json.loads(project.cli("schedule", "list", "--json").stdout)
    return [(task["id"], task["schedule"]) for task in listed]


def test_a_refused_plan_leaves_the_schedule_as_it_was(project: Project) -> None:
    schedule = 'schedule:\n  - {id: nightly, daily: "%s", recipe: calc}\n'
    project.recipe(turns=[FIX], extra=schedule % "02:30")
    assert project.run().exit_code == 0
    registered = _schedule_of(project)
    assert registered == [("nightly", "daily 02:30")]
    project.recipe(checks=UNIT_CHECK.replace("unittest -q", "unittest -v"), extra=schedule % "03:45")
    result = project.run()
    assert result.exit_code == 2 and "contract mismatch" in result.stdout + result.stderr
    assert _schedule_of(project) == registered


def test_a_budget_limited_goal_refused_by_the_plan_does_not_register_its_schedule(project: Project) -> None:
    project.recipe(default={"say": "working", "tokens": 120}, goal_extra="  budget: {tokens: 100}\n")
    assert project.run().exit_code == 6
    assert project.cli("goal", "resume").exit_code == 4
    project.recipe(default={"say": "working", "tokens": 120}, goal_extra="  budget: {tokens: 100}\n",
                   extra='schedule:\n  - {id: nightly, daily: "03:45", recipe: calc}\n')
    result = project.run()
    assert result.exit_code == 4 and "budget_limited: an exhausted budget needs a new goal" in result.stdout
    assert _schedule_of(project) == []


def test_a_glob_in_source_paths_is_a_config_error(project: Project) -> None:
    project.recipe(goal_extra='  source_paths: ["*.py", recipes]\n')
    result = project.run()
    assert result.exit_code == 2
    assert "goal.source_paths[0]: '*.py' is a pattern, and source paths are read literally" in result.stderr
    assert not (project.root / ".axpipe").exists()


def test_a_source_path_that_exists_nowhere_is_warned_about_at_plan_time(project: Project) -> None:
    project.recipe(turns=[FIX], goal_extra="  source_paths: [calc.py, test_calc.py, tset_calc.py]\n")
    result = project.cli("run", "recipe=calc", "--json")
    assert result.exit_code == 0, result.stderr  # not refused: a goal may be meant to create the path
    warnings = [event["warning"] for event in project.events(result) if event["type"] == "goal.warning"
                and event["warning"].startswith("goal.source_paths")]  # (and "goal.checks[0] ... already fails")
    assert warnings == ["goal.source_paths[2]: 'tset_calc.py' exists neither in the work tree nor in git, so the "
                        "fingerprint covers no file there until one appears (a typo leaves the files you meant "
                        "unchecked)"]
    again = project.run()
    assert again.exit_code == 0
    assert "warning: goal.source_paths[2]: 'tset_calc.py' exists neither" in again.stdout  # a re-verify says so too


# -- the frozen contract after freezing ------------------------------------------------------


def test_a_check_that_already_fails_when_frozen_is_warned_about(project: Project) -> None:
    checks = (UNIT_CHECK + '    - {id: lint, acceptance: [AC1], command: "python3 -c \'import sys; sys.exit(3)\'"}\n'
              '    - {id: notes, acceptance: [AC1], command: "python3 -c \'open(\\"notes.txt\\", \\"w\\")\'"}\n')
    project.recipe(turns=[FIX], checks=checks)
    result = project.cli("run", "recipe=calc", "--json")
    assert result.exit_code == 6, result.stderr  # the lint barrier never passes
    warnings = [event["warning"] for event in project.events(result) if event["type"] == "goal.warning"]
    assert len(warnings) == 2, warnings
    assert warnings[0].startswith("already failing before any work: goal.checks[0] (check 'unit'): exit code 1; "
                                  "goal.checks[1] (check 'lint'): exit code 3. That is expected of a check the goal "
                                  "is meant to make pass; one that guards what the goal leaves alone (a barrier)")
    assert warnings[1].startswith("goal.checks[2] (check 'notes') wrote into the tree it verifies (notes.txt; "
                                  "put back)")
    started = next(event for event in project.events(result) if event["type"] == "unit.started")
    assert "notes.txt" not in git(project.root, "ls-tree", "-r", "--name-only", started["tree"]).split()  # put back
    plan_end = next(index for index, event in enumerate(project.events(result)) if event["type"] == "goal.planned")
    first_turn = next(index for index, event in enumerate(project.events(result)) if event["type"] == "agent.started")
    assert plan_end < first_turn  # said at plan time, before any work
    text = project.run()  # the goal exists now: nothing is frozen again, nothing warned
    assert "already fails before any work" not in text.stdout


def test_a_contract_file_edited_or_deleted_by_hand_is_restored_with_a_warning(project: Project) -> None:
    project.recipe(turns=[{"say": "looking"}], default={"say": "still looking"})
    assert project.run().exit_code == 6
    path = project.root / ".axpipe" / "goals" / "calc" / "contract.json"
    frozen = path.read_text()
    path.write_text(frozen.replace("python3 -m unittest -q", "true"))  # a person (or an agent) edits it
    again = project.run()
    assert "warning: .axpipe/goals/calc/contract.json had been edited: restored from the store" in again.stdout
    assert path.read_text() == frozen
    path.unlink()
    resumed = project.cli("goal", "resume", "--idle-timeout-ms", "60000")
    assert "axpipe: warning: .axpipe/goals/calc/contract.json was missing: restored from the store" in resumed.stderr
    assert any(event["type"] == "goal.warning" and "was missing" in event["warning"]
               for event in project.events(resumed))
    assert path.read_text() == frozen
    path.write_text("{not json")
    verified = project.cli("verify", "unit")
    assert "contract.json was not readable JSON: restored from the store" in verified.stderr
    assert path.read_text() == frozen
