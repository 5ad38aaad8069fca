"""What a repair must never leave behind: an edit made while deriving a prose target's
command, a rejected fix the agent staged, an "idempotent" verdict without a fingerprint,
an internal error for a typo. Real git repositories, the real CLI, scripted agents."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from conftest import CLI
from helpers import git
from test_repair import CHEAT, FIX, SKIPPED, agent_command, make_calc, prompts, report_of

DERIVE = "python3 -m unittest -q"


def deriving(tmp_path: Path, edit: str, *, command: str | None = DERIVE) -> str:
    """An agent that, asked to derive the verifying command (AXPIPE_ITERATION=0), runs the
    shell ``edit`` in the workspace and writes ``command``; later turns fix calc.py."""
    write = f' && echo {shlex.quote(command)} > "$AXPIPE_COMMAND_FILE"' if command else ""
    later = agent_command(tmp_path, [FIX, FIX])
    script = f'if [ "$AXPIPE_ITERATION" = 0 ]; then {edit}{write}; else exec {later}; fi'
    return f"sh -c {shlex.quote(script)}"


# -- 1: deriving a prose target's command edits nothing --------------------------------

SKIP_THE_TEST = ("python3 -c \"import pathlib; p = pathlib.Path('test_calc.py'); "
                 "p.write_text(p.read_text().replace('    def test_add(self):', "
                 "\\\"    @unittest.skip('flaky')\\n    def test_add(self):\\\"))\"")


def test_a_derivation_that_skips_the_test_is_refused_and_reverted(cli: CLI, calc: Path, tmp_path: Path) -> None:
    result = cli("repair", "the calculator tests pass", "--json", "--agent-command", deriving(tmp_path, SKIP_THE_TEST))
    assert result.exit_code == 2, result.stdout + result.stderr
    report = report_of(result)
    assert report["status"] == "input-error" and report["iterations"] == []
    assert report["reason"].startswith("the agent edited test_calc.py (+1 -0) while deriving the verifying command")
    assert report["reason"].endswith("the edit was reverted")
    assert "@unittest.skip" not in (calc / "test_calc.py").read_text()
    assert git(calc, "status", "--porcelain") == ""
    assert prompts(tmp_path) == []  # no iteration ran


def test_a_derivation_that_fixes_the_code_without_a_command_leaves_the_code_as_it_was(
        cli: CLI, calc: Path, tmp_path: Path) -> None:
    edit = "sed -i 's/a - b/a + b/' calc.py && git add calc.py && echo new > extra.txt"
    result = cli("repair", "the calculator tests pass", "--json", "--agent-command",
                 deriving(tmp_path, edit, command=None))
    assert result.exit_code == 2
    assert report_of(result)["reason"].startswith("the agent edited calc.py (+1 -1), extra.txt (+1 -0) while deriving")
    assert (calc / "calc.py").read_text().endswith("return a - b\n") and not (calc / "extra.txt").exists()
    assert git(calc, "status", "--porcelain") == "" and git(calc, "diff", "--cached") == ""


def test_a_derivation_that_only_writes_its_command_goes_on_to_the_iterations(
        cli: CLI, calc: Path, tmp_path: Path) -> None:
    result = cli("repair", "the calculator tests pass", "--json", "--agent-command", deriving(tmp_path, "true"))
    assert result.exit_code == 0, result.stdout + result.stderr
    report = report_of(result)
    assert (report["command"], report["derived_command"], report["status"]) == (DERIVE, True, "resolved")
    assert report["final_diff"] == "calc.py (+1 -1)"


# -- 2: a rejected fix leaves the index as it was ---------------------------------------


def test_a_rejected_fix_the_agent_staged_leaves_the_index_too(cli: CLI, calc: Path, tmp_path: Path) -> None:
    # The user's own staged and unstaged work, from before the repair, stays as it was.
    (calc / "notes.txt").write_text("staged by the user\n")
    git(calc, "add", "notes.txt")
    (calc / "README.md").write_text("edited, not staged\n")
    staged_before = git(calc, "diff", "--cached")
    cheat = {**CHEAT, "write": {"conftest.py": "collect_ignore = ['test_calc.py']\n"},
             "run": ["git add test_calc.py conftest.py"]}
    result = cli("repair", "python3 -m unittest -q", "--json", "--allow-test-edits", "--agent-command",
                 agent_command(tmp_path, [cheat, FIX]))
    assert result.exit_code == 0, result.stdout + result.stderr
    report = report_of(result)
    assert report["iterations"][0]["guard"] == "skipped-test"
    assert report["final_diff"] == "calc.py (+1 -1)"
    assert git(calc, "diff", "--cached") == staged_before  # nothing of the cheat is staged
    assert sorted(git(calc, "status", "--porcelain").splitlines()) == [" M README.md", " M calc.py", "A  notes.txt"]
    assert not (calc / "conftest.py").exists()
    assert SKIPPED not in (calc / "test_calc.py").read_text()


def test_a_rejected_fix_the_agent_committed_is_undone_with_the_users_staging_kept(
        cli: CLI, calc: Path, tmp_path: Path) -> None:
    (calc / "notes.txt").write_text("staged by the user\n")
    git(calc, "add", "notes.txt")
    head = git(calc, "rev-parse", "HEAD")
    cheat = {**CHEAT, "run": ["git commit -q -m skip test_calc.py"]}
    result = cli("repair", "python3 -m unittest -q", "--budget", "1", "--json", "--agent-command",
                 agent_command(tmp_path, [cheat]))
    assert result.exit_code == 4
    assert report_of(result)["next_step"].startswith("1 fix(es) were rejected by guards: fix the code under test, "
                                                     "not the tests;")
    assert git(calc, "rev-parse", "HEAD") == head
    assert git(calc, "status", "--porcelain").splitlines() == ["A  notes.txt"]


# -- 5: idempotence needs a fingerprint and a command that works -------------------------

APPEND = "open('out.txt', 'a').write('x')\n"


def test_idempotence_without_a_fingerprint_is_refused_not_resolved(cli: CLI, calc: Path, tmp_path: Path) -> None:
    (calc / "gen.py").write_text(APPEND)
    (calc / "link.py").symlink_to("calc.py")
    git(calc, "add", "-A")
    git(calc, "commit", "-q", "-m", "gen and a symlink")
    result = cli("repair", "python3 gen.py", "--condition", "idempotent", "--json", "--agent-command", "true")
    assert result.exit_code == 2, result.stdout
    assert report_of(result)["reason"] == ("the success condition cannot be verified: the workspace has no fresh "
                                           "fingerprint (symlink: link.py)")
    assert not (calc / "out.txt").exists()  # nothing ran


def test_a_fingerprint_lost_during_the_repair_is_an_error_not_a_match(cli: CLI, calc: Path, tmp_path: Path) -> None:
    # The generator itself makes a symlink: from then on the workspace has no fingerprint.
    (calc / "gen.py").write_text("import os\nos.path.lexists('link.py') or os.symlink('calc.py', 'link.py')\n")
    git(calc, "add", "-A")
    git(calc, "commit", "-q", "-m", "gen")
    result = cli("repair", "python3 gen.py", "--condition", "idempotent", "--budget", "1", "--json",
                 "--agent-command", agent_command(tmp_path, []))
    assert result.exit_code == 4, result.stdout
    first = report_of(result)["iterations"][0]
    assert first["result"] == ("exit code 0 (cannot verify idempotence: no fresh workspace fingerprint after the first "
                               "run (symlink: link.py))")


def test_a_command_that_crashes_the_same_way_twice_is_not_idempotent(cli: CLI, calc: Path, tmp_path: Path) -> None:
    (calc / "gen.py").write_text("import no_such_module\n")
    git(calc, "add", "-A")
    git(calc, "commit", "-q", "-m", "gen")
    fixed = "open('out.txt', 'w').write('x')\n"
    result = cli("repair", "python3 gen.py", "--condition", "idempotent", "--json",
                 "--agent-command", agent_command(tmp_path, [{"write": {"gen.py": fixed}}]))
    assert result.exit_code == 0, result.stdout
    report = report_of(result)
    assert report["condition"] == ("idempotent: two runs both exit 0 and give the same output and workspace "
                                   "fingerprint")
    assert report["iterations"][0]["result"] == ("exit code 1 (not idempotent: the first run ended with exit code 1; "
                                                 "the second run ended with exit code 1)")
    assert report["iterations_used"] == 2


def test_the_idempotent_kind_never_matches_two_missing_fingerprints(tmp_path: Path) -> None:
    # The kind's side of the contract, for every caller (repairs, goal checks): a fingerprint
    # callable that returns None is no fingerprint, and two of them are not "the same".
    from axpipe.interfaces import CheckRequest, CheckStatus
    from axpipe.plugin import registry

    kind = registry.load("axpipe.checks", "idempotent")
    request = CheckRequest(check_id="gen", command=[sys.executable, "-c", "pass"], params=None, cwd=tmp_path,
                           timeout=60, fingerprint=lambda: None)
    outcome = kind.run(request)
    assert outcome.status is CheckStatus.ERROR
    assert outcome.summary == "cannot verify idempotence: no fresh workspace fingerprint after the first run"
    steady = CheckRequest(check_id="gen", command=[sys.executable, "-c", "pass"], params=None, cwd=tmp_path,
                          timeout=60, fingerprint=lambda: "same")
    assert kind.run(steady).status is CheckStatus.PASSED  # the control: the same fingerprint twice


# -- 6: a typo in the agent's command is an input error ----------------------------------


@pytest.mark.parametrize(("command", "reason"), [
    ("echo 'unbalanced", "--agent-command: not a valid shell command (No closing quotation): \"echo 'unbalanced\""),
    ("no-such-fixer --fix", "--agent-command: the agent's program 'no-such-fixer' is not on PATH"),
])
def test_a_bad_agent_command_is_refused_naming_the_option(cli: CLI, calc: Path, command: str, reason: str) -> None:
    result = cli("repair", "python3 -m unittest -q", "--json", "--agent-command", command)
    assert result.exit_code == 2, result.stderr
    assert report_of(result)["reason"] == reason
    assert f"axpipe: error: {reason}" in result.stderr and "internal error" not in result.stderr
    assert git(calc, "status", "--porcelain") == ""


def test_a_bad_agent_command_in_a_recipe_names_its_config_path(cli: CLI, calc: Path) -> None:
    from helpers import write_recipe

    write_recipe(calc / "recipes", "fix", f"""name: fix
repair:
  target: "python3 -m unittest -q"
  agent: {{kind: command, command: {json.dumps("echo 'unbalanced")}}}
""")
    (calc / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    result = cli("run", "recipe=fix")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "repair.agent.command: not a valid shell command (No closing quotation)" in result.stdout + result.stderr
    assert (calc / "calc.py").read_text().endswith("a - b\n")


@pytest.fixture
def calc(repo: Path) -> Path:
    return make_calc(repo)

