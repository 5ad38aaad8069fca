"""replx end to end: the budget guard, success conditions, iterations, guards, phases,
prose targets and the report, with a scripted agent making real edits in a git repository."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import CLI
from helpers import backdate, evidence_bytecode, git, tree, write_recipe

AGENT = Path(__file__).resolve().parent / "agents" / "scripted_agent.py"

CALC = "def add(a, b):\n    return a - b\n"
TEST_CALC = """import unittest

from calc import add


class CalcTests(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)


if __name__ == "__main__":
    unittest.main()
"""
FIX = {"replace": [["calc.py", "a - b", "a + b"]]}
SKIPPED = "    @unittest.skip('flaky')\n    def test_add(self):"
CHEAT = {"replace": [["test_calc.py", "    def test_add(self):", SKIPPED]]}


def make_calc(repo: Path) -> Path:
    """``repo`` with a committed calc.py whose add() subtracts, and its failing unittest."""
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(TEST_CALC)
    (repo / ".gitignore").write_text("__pycache__/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "calc")
    return repo


@pytest.fixture
def calc(repo: Path) -> Path:
    return make_calc(repo)


def agent_command(tmp_path: Path, turns: list[dict[str, Any]], default: dict[str, Any] | None = None) -> str:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"turns": turns, "default": default or {}}))
    log = tmp_path / "prompts.jsonl"
    return (f"env SCRIPTED_AGENT_PLAN={shlex.quote(str(plan))} SCRIPTED_AGENT_LOG={shlex.quote(str(log))} "
            f"{shlex.quote(sys.executable)} {shlex.quote(str(AGENT))}")


def prompts(tmp_path: Path) -> list[str]:
    log = tmp_path / "prompts.jsonl"
    return [json.loads(line)["prompt"] for line in log.read_text().splitlines()] if log.exists() else []


def report_of(result: Any) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads(result.stdout)
    return payload


def normalize(text: str, *paths: Path) -> str:
    for path in paths:
        text = text.replace(str(path), "<path>")
    return re.sub(r"\(\d+\.\d+s\)|in \d+\.\d+s", "(<time>)", text)


# -- the budget guard -------------------------------------------------------------------


@pytest.mark.parametrize("budget", ["0", "-1", "33", "500", "2.5", "four", ""])
def test_the_budget_guard_refuses_without_clamping_or_editing(cli: CLI, calc: Path, tmp_path: Path,
                                                              budget: str) -> None:
    before = tree(calc)
    result = cli("repair", "python3 -m unittest -q", "--budget", budget, "--json",
                 "--agent-command", agent_command(tmp_path, [FIX]))
    assert result.exit_code == 2
    report = report_of(result)
    assert report["status"] == "input-error" and report["iterations"] == []
    assert report["reason"] == f"budget must be an integer from 1 to 32, got {budget}"
    assert f"axpipe: error: budget must be an integer from 1 to 32, got {budget}" in result.stderr
    assert tree(calc) == before and git(calc, "status", "--porcelain") == ""
    assert prompts(tmp_path) == []


@pytest.mark.parametrize("budget", ["1", "4", "32"])
def test_budgets_in_range_are_accepted(cli: CLI, calc: Path, tmp_path: Path, budget: str) -> None:
    result = cli("repair", "python3 -m unittest -q", "--budget", budget, "--json",
                 "--agent-command", agent_command(tmp_path, [FIX]))
    assert report_of(result)["budget"] == int(budget)


def test_a_recipe_budget_out_of_range_names_the_guard(cli: CLI, calc: Path) -> None:
    write_recipe(calc / "recipes", "fix", 'name: fix\nagent: {kind: ruff-fix}\nrepair: {target: "ruff check ."}\n')
    (calc / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    result = cli("run", "recipe=fix", "repair.budget=500")
    assert result.exit_code == 2
    assert "repair.budget: budget must be an integer from 1 to 32, got 500" in result.stderr


# -- iterations -------------------------------------------------------------------------


def test_a_fix_at_the_first_call_resolves_in_two_of_four(cli: CLI, calc: Path, tmp_path: Path) -> None:
    result = cli("repair", "python3 -m unittest -q", "--json", "--agent-command", agent_command(tmp_path, [FIX]))
    assert result.exit_code == 0, result.stderr
    report = report_of(result)
    assert (report["status"], report["iterations_used"], report["budget"]) == ("resolved", 2, 4)
    assert report["iterations"][0]["exit_code"] == 1 and report["iterations"][0]["fix"] == "calc.py (+1 -1)"
    assert report["iterations"][1]["exit_code"] == 0
    assert report["final_diff"] == "calc.py (+1 -1)"


def test_a_same_size_fix_in_the_same_second_is_not_hidden_by_cached_bytecode(
        cli: CLI, calc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `a - b` to `a + b` keeps calc.py's size; with its modification time kept too (an edit
    # within the second of the last import looks the same), Python would still trust the
    # bytecode the first run cached, and the fix would seem not to work.
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    backdate(calc / "calc.py")  # so the cache is not racy: only forgetting it after the fix helps
    result = cli("repair", "python3 -m unittest -q", "--json",
                 "--agent-command", agent_command(tmp_path, [{**FIX, "keep_mtime": True}]))
    assert result.exit_code == 0, result.stdout + result.stderr
    report = report_of(result)
    assert (report["status"], report["iterations_used"]) == ("resolved", 2)
    assert report["iterations"][0]["exit_code"] == 1 and report["iterations"][1]["exit_code"] == 0
    assert (calc / "calc.py").read_text() == CALC.replace("a - b", "a + b")
    assert evidence_bytecode(calc, "calc") and not (calc / "__pycache__").exists()


def test_the_final_diff_is_the_agents_change_not_what_the_runs_cached(cli: CLI, repo: Path, tmp_path: Path) -> None:
    # No .gitignore: bytecode or a pytest cache the target's runs left would be in the diff.
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(TEST_CALC)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "calc")
    result = cli("repair", "python3 -m pytest -q", "--json", "--agent-command", agent_command(tmp_path, [FIX]))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert report_of(result)["final_diff"] == "calc.py (+1 -1)"
    left = git(repo, "status", "--porcelain", "--ignored", "--untracked-files=all").splitlines()
    assert [line for line in left if not line.startswith("!! .axpipe/")] == [" M calc.py"]


def test_budget_one_is_verified_by_a_final_run(cli: CLI, calc: Path, tmp_path: Path) -> None:
    result = cli("repair", "python3 -m unittest -q", "--budget", "1", "--json",
                 "--agent-command", agent_command(tmp_path, [FIX]))
    report = report_of(result)
    assert (report["status"], report["iterations_used"], len(report["iterations"])) == ("resolved", 1, 1)


def test_the_agent_gets_the_failure_in_its_prompt_and_failure_file(cli: CLI, calc: Path, tmp_path: Path) -> None:
    seen = tmp_path / "failure-copy.json"
    copy = {"say": "looking", "write": {}}
    turns = [copy, FIX]
    command = agent_command(tmp_path, turns)
    command = f"sh -c 'cp \"$AXPIPE_FAILURE_FILE\" {seen}; exec {command}'"
    result = cli("repair", "python3 -m unittest -q", "--json", "--agent-command", command)
    assert result.exit_code == 0, result.stderr + result.stdout
    failure = json.loads(seen.read_text())
    assert {"command", "exit_code", "output_tail", "iteration"} <= set(failure)
    assert failure["command"] == "python3 -m unittest -q" and failure["exit_code"] == 1
    assert "AssertionError: -1 != 5" in failure["output_tail"]
    assert "test_calc.py" in failure["files"]
    second = prompts(tmp_path)[1]
    assert "## Earlier iterations" in second and "iteration 1: observed failure: AssertionError: -1 != 5" in second


def test_an_exhausted_budget_is_unresolved_and_says_what_to_do(cli: CLI, calc: Path, tmp_path: Path) -> None:
    result = cli("repair", "python3 -m unittest -q", "--budget", "2", "--json",
                 "--agent-command", agent_command(tmp_path, [], default={"write": {"notes.txt": "tried"}}))
    assert result.exit_code == 4
    report = report_of(result)
    assert (report["status"], report["iterations_used"]) == ("unresolved", 2)
    assert report["last_failure"].startswith("`python3 -m unittest -q`: exit code 1")
    assert report["applied"] == ["iteration 1: notes.txt (+1 -0)"]
    assert report["next_step"].startswith("run `python3 -m unittest -q` and read the last failure")
    assert "the condition does not hold: the target is not repaired" in report["not_validated"]


# -- conditions -------------------------------------------------------------------------

SMOKE = """import pathlib, sys
ok = pathlib.Path("feature.txt").read_text().strip() == "on"
print("smoke: PASS 14 checks" if ok else "smoke: FAIL 2 checks")
"""


def test_the_oracle_decides_by_its_line_with_exit_zero_both_times(cli: CLI, calc: Path, tmp_path: Path) -> None:
    (calc / "smoke.py").write_text(SMOKE)
    (calc / "feature.txt").write_text("off\n")
    git(calc, "add", "-A")
    git(calc, "commit", "-q", "-m", "smoke")
    result = cli("repair", "python3 smoke.py", "--until-line", r"^smoke: PASS", "--json",
                 "--agent-command", agent_command(tmp_path, [{"write": {"feature.txt": "on\n"}}]))
    report = report_of(result)
    assert report["condition"] == "a line matching '^smoke: PASS' in the output (the exit code is not the condition)"
    assert [iteration["exit_code"] for iteration in report["iterations"]] == [0, 0]
    assert report["iterations"][1]["oracle_line"] == "smoke: PASS 14 checks"
    assert report["status"] == "resolved"


def test_no_match_condition(cli: CLI, calc: Path, tmp_path: Path) -> None:
    (calc / "build.py").write_text("print('WARNING: old api')\n")
    git(calc, "add", "-A")
    git(calc, "commit", "-q", "-m", "build")
    result = cli("repair", "python3 build.py", "--condition", "no-match", "--json", "--agent-command",
                 agent_command(tmp_path, [{"write": {"build.py": "print('built')\n"}}]))
    report = report_of(result)
    assert report["condition"] == "no output line matching '(?i)warning' and exit code 0"
    assert report["status"] == "resolved" and report["iterations_used"] == 2


def test_pytest_condition_counts_the_tests_that_passed(cli: CLI, calc: Path, tmp_path: Path) -> None:
    (calc / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    git(calc, "commit", "-qam", "a pytest test")
    result = cli("repair", f"{sys.executable} -m pytest -q", "--condition", "pytest", "--json",
                 "--agent-command", agent_command(tmp_path, [FIX]))
    assert result.exit_code == 0, result.stderr
    report = report_of(result)
    assert report["condition"] == "pytest exits 0 with no failure and at least 1 test(s) passed"
    assert report["status"] == "resolved"


def test_idempotent_condition(cli: CLI, calc: Path, tmp_path: Path) -> None:
    (calc / "gen.py").write_text("open('out.txt', 'a').write('x')\n")
    git(calc, "add", "-A")
    git(calc, "commit", "-q", "-m", "gen")
    result = cli("repair", "python3 gen.py", "--condition", "idempotent", "--json", "--agent-command",
                 agent_command(tmp_path, [{"write": {"gen.py": "open('out.txt', 'w').write('x')\n"}}]))
    report = report_of(result)
    assert report["iterations"][0]["result"].endswith("(not idempotent: the workspace changed between the runs)")
    assert report["status"] == "resolved"


@pytest.mark.parametrize(("args", "message"), [
    (["--condition", "vibes"], "repair.success.kind: unknown check kind 'vibes'"),
    (["--condition", "oracle"], "the success condition cannot be verified: repair.success.line: missing required key"),
    (["--until-line", "("], "the success condition cannot be verified: repair.success.line: not a valid regular"),
])
def test_a_condition_that_cannot_be_verified_stops_before_iteration_1(cli: CLI, calc: Path, tmp_path: Path,
                                                                      args: list[str], message: str) -> None:
    result = cli("repair", "python3 -m unittest -q", *args, "--json",
                 "--agent-command", agent_command(tmp_path, [FIX]))
    assert result.exit_code == 2
    assert report_of(result)["reason"].startswith(message)
    assert prompts(tmp_path) == [] and git(calc, "status", "--porcelain") == ""


# -- guards -----------------------------------------------------------------------------


def test_a_cheating_fix_is_reverted_counted_and_named(cli: CLI, calc: Path, tmp_path: Path) -> None:
    (calc / "unrelated.txt").write_text("work in progress\n")  # the user's own, uncommitted
    # --allow-test-edits: the guards judge the test edit (protected tests revert it first, below)
    result = cli("repair", "python3 -m unittest -q", "--json", "--allow-test-edits", "--agent-command",
                 agent_command(tmp_path, [CHEAT, FIX]))
    assert result.exit_code == 0, result.stderr
    report = report_of(result)
    first = report["iterations"][0]
    assert first["guard"] == "skipped-test"
    assert first["fix"].startswith("rejected by the skipped-test guard (test_calc.py:")
    assert report["discarded"] == ["iteration 1: test_calc.py (+1 -0) (skipped-test)"]
    assert report["iterations_used"] == 3
    assert "@unittest.skip" not in (calc / "test_calc.py").read_text()
    assert (calc / "unrelated.txt").read_text() == "work in progress\n"
    told = prompts(tmp_path)[1]
    assert "## Your last fix was rejected and reverted" in told and "skipped-test" in told


# -- phases -----------------------------------------------------------------------------


def test_phases_narrow_to_build_and_test_after_lint_is_clean(cli: CLI, calc: Path, tmp_path: Path) -> None:
    (calc / "lint.py").write_text("import pathlib, sys\nsys.exit('TODO' in pathlib.Path('calc.py').read_text())\n")
    (calc / "calc.py").write_text("# TODO tidy\n" + CALC)
    (calc / "runs.log").write_text("")
    git(calc, "add", "-A")
    git(calc, "commit", "-q", "-m", "phases")
    lint = "echo lint >> runs.log && python3 lint.py"
    test = "echo test >> runs.log && python3 -m unittest -q"
    whole = f"{lint} && {test}"
    turns = [{"replace": [["calc.py", "# TODO tidy\n", ""]]}, FIX]
    result = cli("repair", whole, "--json", "--phases", f"lint={lint},test={test}",
                 "--agent-command", agent_command(tmp_path, turns))
    assert result.exit_code == 0, result.stderr
    report = report_of(result)
    assert [(iteration["phase"], iteration["command"]) for iteration in report["iterations"]] == [
        ("lint", lint), ("test", test), (None, whole)]
    assert report["applied"][0] == "iteration 1 (lint only): calc.py (+0 -1)"
    runs = (calc / "runs.log").read_text().split()
    assert runs == [
        "lint", "lint",                  # 1: the whole (stops at lint), then lint alone: lint fails
        "lint", "test", "lint", "test",  # 2: the whole (lint now clean, test fails), lint alone, then test
        "test", "lint", "lint", "test",  # 3: test only, lint once more, then the whole: the condition holds
    ]


# -- prose targets -----------------------------------------------------------------------


def test_a_prose_target_gets_its_command_derived_and_printed_first(cli: CLI, calc: Path, tmp_path: Path) -> None:
    derive = {"write": {}}
    command = agent_command(tmp_path, [derive, FIX])
    command = f"sh -c 'test \"$AXPIPE_ITERATION\" = 0 && echo \"python3 -m unittest -q\" > \"$AXPIPE_COMMAND_FILE\" " \
              f"|| exec {command}'"
    result = cli("repair", "all the calculator tests pass", "--json", "--agent-command", command)
    assert result.exit_code == 0, result.stderr + result.stdout
    report = report_of(result)
    assert (report["target_kind"], report["command"], report["derived_command"]) == (
        "end state", "python3 -m unittest -q", True)
    text = cli("repair", "all the calculator tests pass", "--agent-command", command).stdout
    assert "(end state; verified by `python3 -m unittest -q`, derived by the agent)" in text


def test_a_prose_target_without_a_derivable_command_is_an_input_error(cli: CLI, calc: Path, tmp_path: Path) -> None:
    result = cli("repair", "everything is lovely", "--json", "--agent-command", agent_command(tmp_path, []))
    assert result.exit_code == 2
    assert report_of(result)["reason"].startswith("the agent could not derive a verifying command")


def test_no_agent_is_an_input_error(cli: CLI, calc: Path) -> None:
    result = cli("repair", "python3 -m unittest -q", "--json")
    assert result.exit_code == 2
    assert report_of(result)["reason"].startswith("a repair needs an agent")


def test_an_unknown_guard_is_refused_before_the_agent_edits_anything(cli: CLI, calc: Path, tmp_path: Path) -> None:
    before = tree(calc)
    result = cli("repair", "python3 -m unittest -q", "--json", "--guards", "python,nosuch",
                 "--agent-command", agent_command(tmp_path, [FIX]))
    assert result.exit_code == 2
    report = report_of(result)
    assert report["status"] == "input-error" and report["iterations"] == []
    assert report["reason"] == ("--guards: unknown guard 'nosuch'; available: condition, javascript, python "
                                "(entry point group axpipe.guards)")
    # Known from the command line alone, like a bad budget: refused before .axpipe/ exists.
    assert tree(calc) == before
    assert prompts(tmp_path) == [] and git(calc, "status", "--porcelain") == ""


def test_an_unknown_agent_is_refused_and_its_report_does_not_claim_nothing_was_written(cli: CLI, calc: Path) -> None:
    result = cli("repair", "python3 -m unittest -q", "--json", "--agent", "nosuch")
    assert result.exit_code == 2
    reason = report_of(result)["reason"]
    assert reason.startswith("repair.agent.kind: unknown agent 'nosuch'; available: ")
    assert "nothing was written" not in reason + result.stderr  # the report itself was written


def test_outside_git_a_repair_is_refused_and_writes_nothing(cli: CLI, tmp_path: Path) -> None:
    folder = tmp_path / "not-a-repository"
    folder.mkdir()
    result = cli("repair", "python3 -c pass", "--json", "--agent", "ruff-fix", cwd=folder)
    assert result.exit_code == 2
    assert report_of(result)["reason"] == "repair needs a git repository: the guards judge each iteration's diff"
    assert list(folder.iterdir()) == []


def test_an_empty_target_is_nothing_actionable(cli: CLI, calc: Path, tmp_path: Path) -> None:
    result = cli("repair", "  ", "--json", "--agent-command", agent_command(tmp_path, []))
    assert result.exit_code == 2 and report_of(result)["reason"] == "nothing actionable: the target is empty"


def test_a_target_that_already_holds_resolves_at_once(cli: CLI, calc: Path, tmp_path: Path) -> None:
    result = cli("repair", "python3 -c pass", "--json", "--agent-command", agent_command(tmp_path, []))
    report = report_of(result)
    assert (report["status"], report["iterations_used"]) == ("resolved", 1) and prompts(tmp_path) == []


# -- the report -------------------------------------------------------------------------


def test_report_shapes(cli: CLI, calc: Path, tmp_path: Path, snapshot: object) -> None:
    resolved = cli("repair", "python3 -m unittest -q", "--allow-test-edits", "--agent-command",
                   agent_command(tmp_path / "a", [CHEAT, FIX]) if (tmp_path / "a").mkdir() is None else "")
    git(calc, "checkout", "-q", ".")
    unresolved = cli("repair", "python3 -m unittest -q", "--budget", "1", "--agent-command",
                     agent_command(tmp_path / "b", []) if (tmp_path / "b").mkdir() is None else "")
    refused = cli("repair", "python3 -m unittest -q", "--budget", "500", "--agent-command", "true")
    assert (resolved.exit_code, unresolved.exit_code, refused.exit_code) == (0, 4, 2)
    # stdout is the live progress lines, then the report
    assert "# replx" + normalize(resolved.stdout.split("# replx", 1)[1], calc) == snapshot(name="resolved")
    assert "# replx" + normalize(unresolved.stdout.split("# replx", 1)[1], calc) == snapshot(name="unresolved")
    assert refused.stdout == snapshot(name="input-error")


def test_the_report_is_written_to_the_run_folder_and_report_path(cli: CLI, calc: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    result = cli("repair", "python3 -m unittest -q", "--report", str(target),
                 "--agent-command", agent_command(tmp_path, [FIX]))
    assert result.exit_code == 0
    assert json.loads(target.read_text())["status"] == "resolved"
    written = list((calc / ".axpipe" / "runs").glob("*/*-repair/report.md"))
    assert len(written) == 1 and written[0].read_text().startswith("# replx: python3 -m unittest -q")
    assert (written[0].parent / "report.json").is_file()


def test_json_report_pins_its_fields(cli: CLI, calc: Path, tmp_path: Path) -> None:
    report = report_of(cli("repair", "python3 -m unittest -q", "--json",
                           "--agent-command", agent_command(tmp_path, [FIX])))
    assert {"target", "condition", "budget", "status", "iterations_used", "iterations", "final_diff",
            "not_validated"} <= set(report)
    assert {"n", "command", "exit_code", "oracle_line", "diagnosis", "fix", "guard"} <= set(report["iterations"][0])


# -- through a recipe -------------------------------------------------------------------


def test_a_recipe_repair_with_an_override(cli: CLI, calc: Path, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"turns": [{}, {}, FIX]}))
    write_recipe(calc / "recipes", "fixer", f"""
name: fixer
agent:
  kind: command
  command: [{json.dumps(sys.executable)}, {json.dumps(str(AGENT))}]
  env: {{SCRIPTED_AGENT_PLAN: {json.dumps(str(plan))}}}
repair:
  target: "python3 -m unittest -q"
  budget: 2
""")
    (calc / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    short = cli("run", "recipe=fixer")
    assert short.exit_code == 4 and "Status: unresolved" in short.stdout
    git(calc, "checkout", "-q", "calc.py")
    longer = cli("run", "recipe=fixer", "repair.budget=4")
    assert longer.exit_code == 0, longer.stdout
    reports = sorted((calc / ".axpipe" / "runs").glob("*/*/report.md"))
    assert "- Status: resolved" in reports[-1].read_text()


def test_the_ruff_fix_agent_needs_ruff(calc: Path) -> None:
    # axpipe puts its own scripts folder (where the ruff extra lives) on every command's PATH,
    # so a missing ruff can only be shown with a PATH that has no ruff on it at all.
    from axpipe_builtin.agents import RuffFixAgent, RuffFixParams

    from axpipe.interfaces import AgentRequest, AgentStatus

    (calc / "bad.py").write_text("import os\n")
    request = AgentRequest(prompt="fix", prompt_file=calc / "prompt.md", cwd=calc, env={"PATH": "/usr/bin:/bin"},
                           timeout=30, autonomous=True, params=RuffFixParams())
    outcome = RuffFixAgent().run(request)
    assert outcome.status == AgentStatus.ERROR
    assert outcome.summary == "ruff is not installed: pip install 'axpipe[ruff]'"
    assert (calc / "bad.py").read_text() == "import os\n"
