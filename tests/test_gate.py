"""`axpipe gate`: lint narrowed to changed lines, failing tests re-run at the baseline in a
throwaway worktree, fail-closed baselines, and the report. Real repositories, real ruff,
real pytest, real mypy."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import CLI
from helpers import AXPIPE, GIT_IDENTITY, git, interrupts_as_default

LINT = "ruff check --isolated --no-cache --select F --output-format concise ."
TEST = "python -m pytest -q -p no:cacheprovider --junitxml={junit_xml}"
CALC = "import os\n\n\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
TESTS = """from src.calc import add, sub


def test_add():
    assert add(1, 2) == 3


def test_sub():
    assert sub(3, 1) == 2


def test_known_broken():
    assert add(0, 0) == 1
"""


@pytest.fixture
def project(repo: Path) -> Path:
    """A baseline commit with a pre-existing lint finding (`import os`) and a failing test."""
    for name, text in {"src/__init__.py": "", "src/calc.py": CALC, "tests/__init__.py": "",
                       "tests/test_calc.py": TESTS, "src/legacy.py": "import json\n"}.items():
        (repo / name).parent.mkdir(exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "baseline")
    return repo


def edit(project: Path, old: str, new: str, path: str = "src/calc.py") -> None:
    target = project / path
    text = target.read_text()
    assert old in text
    target.write_text(text.replace(old, new))


def gate(cli: CLI, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli("gate", "--baseline", "HEAD", "--json", *args)
    assert result.stdout.startswith("{"), result.stderr
    return result.exit_code, json.loads(result.stdout)


def items(report: dict[str, Any], phase: str) -> list[tuple[str, str, str]]:
    found = next(item for item in report["phases"] if item["name"] == phase)
    return [(item["verdict"], item["subject"], item["why"]) for item in found["items"]]


def worktrees(project: Path) -> list[str]:
    listed = git(project, "worktree", "list", "--porcelain")
    return [line for line in listed.splitlines() if line.startswith("worktree ")]


# -- lint -------------------------------------------------------------------------------------


def test_a_new_finding_on_a_changed_line_fails_and_the_old_one_does_not(cli: CLI, project: Path) -> None:
    edit(project, "    return a - b\n", "    import sys\n    return a - b\n")
    code, report = gate(cli, "--lint", LINT)
    assert code == 1
    assert items(report, "lint") == [
        ("pre-existing", "src/calc.py:1:8", "line 1 was not changed"),
        ("blamed", "src/calc.py:9:12", "line 9 is one the change added or modified"),
        ("pre-existing", "src/legacy.py:1:8", "the change did not touch this file"),
    ]
    assert report["summary"] == "gate failed: lint failed (1 blamed)"


def test_old_findings_on_unchanged_lines_do_not_fail_the_gate(cli: CLI, project: Path) -> None:
    edit(project, "    return a - b\n", "    result = a - b\n    return result\n")
    code, report = gate(cli, "--lint", LINT)
    assert code == 0
    lint = report["phases"][0]
    assert lint["status"] == "passed"
    assert lint["summary"] == "exit code 1, but all 2 finding(s) are pre-existing"
    assert {verdict for verdict, _, _ in items(report, "lint")} == {"pre-existing"}


def test_an_untracked_file_is_all_changed_lines(cli: CLI, project: Path) -> None:
    (project / "src" / "new.py").write_text("x = 1\nimport re\n")
    code, report = gate(cli, "--lint", LINT)
    assert code == 1
    assert ("blamed", "src/new.py:2:8", "line 2 is one the change added or modified") in items(report, "lint")


@pytest.mark.parametrize("literal", ["0", "1"])
def test_an_untracked_file_counts_whatever_git_literal_pathspecs_says(cli: CLI, project: Path, literal: str) -> None:
    # the untracked listing uses the `:/` pathspec; read literally, it would list nothing
    (project / "src" / "new.py").write_text("x = 1\nimport re\n")
    result = cli("gate", "--baseline", "HEAD", "--json", "--lint", LINT, env={"GIT_LITERAL_PATHSPECS": literal})
    assert result.exit_code == 1, result.stderr
    assert ("blamed", "src/new.py:2:8", "line 2 is one the change added or modified") in items(
        json.loads(result.stdout), "lint")


@pytest.mark.parametrize("staged", [False, True], ids=["plain mv", "mv then git add -A"])
def test_a_moved_file_keeps_its_old_findings_whether_or_not_the_move_is_staged(cli: CLI, project: Path,
                                                                               staged: bool) -> None:
    (project / "src" / "calc.py").rename(project / "src" / "maths.py")
    edit(project, "    return a - b\n", "    import sys\n    return a - b\n", path="src/maths.py")
    if staged:
        git(project, "add", "-A")
    status = git(project, "status", "--porcelain")
    code, report = gate(cli, "--lint", LINT)
    assert code == 1
    assert items(report, "lint") == [
        ("pre-existing", "src/legacy.py:1:8", "the change did not touch this file"),
        ("pre-existing", "src/maths.py:1:8", "line 1 was not changed"),
        ("blamed", "src/maths.py:9:12", "line 9 is one the change added or modified"),
    ]
    assert git(project, "status", "--porcelain") == status  # the user's index is not written


def test_without_narrowing_every_finding_counts(cli: CLI, project: Path) -> None:
    edit(project, "    return a - b\n", "    result = a - b\n    return result\n")
    code, report = gate(cli, "--lint", LINT, "--no-narrow")
    assert code == 1
    assert [why for _, _, why in items(report, "lint")] == ["narrowing is off: every finding counts"] * 2
    assert report["narrow"] is False


def test_a_failing_lint_whose_output_names_no_line_fails_closed(cli: CLI, project: Path) -> None:
    code, report = gate(cli, "--lint", "python -c \"print('config error: bad rule'); raise SystemExit(2)\"")
    assert code == 1
    lint = report["phases"][0]
    assert lint["status"] == "failed"
    assert "no finding in its output reads as `path:line: message`" in lint["summary"]


def test_a_finding_in_a_path_with_parentheses_is_read_and_blamed(cli: CLI, project: Path) -> None:
    page = project / "app" / "(auth)" / "page.py"
    page.parent.mkdir(parents=True)
    page.write_text("x = 1\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "a page")
    page.write_text("import sys\nx = 1\n")
    code, report = gate(cli, "--lint", LINT)
    assert code == 1
    assert ("blamed", "app/(auth)/page.py:1:8", "line 1 is one the change added or modified") in items(report, "lint")


def test_a_finding_whose_path_is_not_under_the_project_root_is_blamed(cli: CLI, project: Path) -> None:
    # `cd src && ruff` prints `calc.py`, which the project's root does not have: not narrowable
    edit(project, "    return a - b\n", "    return a - b  # only a comment\n")
    code, report = gate(cli, "--lint", f"cd src && {LINT}")
    assert code == 1
    assert items(report, "lint") == [
        ("blamed", "calc.py:1:8", "calc.py is not a file under the project's root, so the finding cannot be narrowed "
                                  "(does the command print paths from another folder? they must be from the "
                                  "project's root, or absolute)"),
        ("blamed", "legacy.py:1:8", "legacy.py is not a file under the project's root, so the finding cannot be "
                                    "narrowed (does the command print paths from another folder? they must be from "
                                    "the project's root, or absolute)"),
    ]


def test_a_failing_lints_line_that_looks_like_a_place_but_is_not_read_counts(cli: CLI, project: Path) -> None:
    edit(project, "    return a - b\n", "    return a - b  # only a comment\n")
    code, report = gate(cli, "--lint", f"{LINT}; echo '  src/calc.py:9: an indented report line'; exit 1")
    assert code == 1
    assert items(report, "lint")[-1] == (
        "blamed", "(unread output)",
        "the line looks like a finding's place (`:N:`) but does not read as one, so it cannot be narrowed")
    assert [verdict for verdict, _, _ in items(report, "lint")[:-1]] == ["pre-existing", "pre-existing"]


def test_a_deletion_that_breaks_the_syntax_is_blamed_where_the_tool_reports_it(cli: CLI, project: Path) -> None:
    # deleting add()'s body: ruff reports the syntax error on `def sub`, a line the diff did not touch
    edit(project, "    return a + b\n", "")
    code, report = gate(cli, "--lint", LINT)
    assert code == 1
    blamed = [(subject, why) for verdict, subject, why in items(report, "lint") if verdict == "blamed"]
    assert blamed == [("src/calc.py:7:1", "a syntax error in a file the change touched counts wherever it is "
                                          "reported: it is where the tool stopped reading, not necessarily the "
                                          "line that broke the file")]


def test_a_missing_program_is_an_error_not_a_pass(cli: CLI, project: Path) -> None:
    code, report = gate(cli, "--lint", "no-such-linter-here .")
    assert code == 5
    assert report["phases"][0]["status"] == "error"


# -- tests, re-run at the baseline -----------------------------------------------------------


def test_a_failure_the_baseline_shares_is_pre_existing_and_not_blamed(cli: CLI, project: Path) -> None:
    edit(project, "    return a - b\n", "    return a - b  # unchanged behaviour\n")
    code, report = gate(cli, "--test", TEST)
    assert code == 0, report
    test = report["phases"][0]
    assert test["status"] == "passed"
    assert items(report, "test") == [("pre-existing", "tests.test_calc::test_known_broken",
                                      "it fails at the baseline too")]
    assert [attempt["where"] for attempt in test["attempts"]] == ["workspace", "baseline"]
    assert report["worktree"] is not None and report["worktree_removed"] is True
    assert not Path(report["worktree"]).exists()
    assert len(worktrees(project)) == 1
    assert list((project / ".axpipe" / "worktrees").iterdir()) == []


def test_a_new_failure_is_blamed_and_every_attempt_is_kept(cli: CLI, project: Path) -> None:
    edit(project, "    return a - b\n", "    return b - a\n")
    (project / "tests" / "test_more.py").write_text("def test_brand_new():\n    assert False\n")
    code, report = gate(cli, "--test", TEST)
    assert code == 1
    assert items(report, "test") == [
        ("pre-existing", "tests.test_calc::test_known_broken", "it fails at the baseline too"),
        ("blamed", "tests.test_calc::test_sub", "it passes at the baseline"),
        ("blamed", "tests.test_more::test_brand_new", "not in the baseline's results: a new (or renamed) test"),
    ]
    here, there = report["phases"][0]["attempts"]
    assert "3 failed" in Path(here["log"]).read_text() and "1 failed, 2 passed" in Path(there["log"]).read_text()
    assert Path(here["junit"]).is_file() and Path(there["junit"]).is_file()
    markdown = (Path(report["folder"]) / "report.md").read_text()
    assert "### Attempt 1: the workspace" in markdown and "### Attempt 2: the baseline" in markdown
    assert "1 failed, 2 passed" in markdown  # the baseline's output is in the report, not only the last run's
    assert len(worktrees(project)) == 1


READS_DATA = """from pathlib import Path

from src.calc import add


def test_against_expected():
    assert add(40, 2) == int(Path("data/expected.txt").read_text())
"""


def test_a_test_failing_at_the_baseline_for_another_reason_is_blamed(cli: CLI, project: Path) -> None:
    # data/ is ignored, so the baseline's worktree lacks it: FileNotFoundError there, an assertion here
    (project / ".gitignore").write_text("data/\n")
    (project / "tests" / "test_data.py").write_text(READS_DATA)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "a test reading ignored data")
    (project / "data").mkdir()
    (project / "data" / "expected.txt").write_text("42\n")
    edit(project, "    return a + b\n", "    return a + b - 1\n")
    code, report = gate(cli, "--test", TEST)
    assert code == 1
    found = {subject: (verdict, why) for verdict, subject, why in items(report, "test")}
    assert found["tests.test_data::test_against_expected"] == (
        "blamed", "it fails at the baseline too, but differently (there: FileNotFoundError: [Errno 2] No such file "
                  "or directory: 'data/expected.txt'; here: AssertionError: assert 41 == 42), so this failure is not "
                  "known to be old")
    assert found["tests.test_calc::test_add"] == ("blamed", "it passes at the baseline")


def test_the_same_failure_is_pre_existing_though_paths_and_addresses_differ(cli: CLI, project: Path) -> None:
    # the message holds the checkout's path (the worktree's at the baseline) and an object's address
    (project / "tests" / "test_where.py").write_text(
        "def test_where():\n    assert (__file__, object()) is None\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "a test whose message names its file")
    edit(project, "    return a - b\n", "    return a - b  # unchanged behaviour\n")
    code, report = gate(cli, "--test", TEST)
    assert code == 0, report
    assert items(report, "test") == [
        ("pre-existing", "tests.test_calc::test_known_broken", "it fails at the baseline too"),
        ("pre-existing", "tests.test_where::test_where", "it fails at the baseline too"),
    ]


def test_a_junit_path_the_command_names_is_read_here_and_at_the_baseline(cli: CLI, project: Path) -> None:
    edit(project, "    return a - b\n", "    return b - a\n")
    code, report = gate(cli, "--test", "python -m pytest -q -p no:cacheprovider --junitxml=.axpipe/artifacts/j.xml")
    assert code == 1
    assert [verdict for verdict, _, _ in items(report, "test")] == ["pre-existing", "blamed"]


def test_failures_a_command_hides_behind_exit_0_still_count(cli: CLI, project: Path) -> None:
    edit(project, "    return a - b\n", "    return b - a\n")
    code, report = gate(cli, "--test", TEST + " || true")
    assert code == 1
    assert report["phases"][0]["attempts"][0]["exit_code"] == 0
    assert [verdict for verdict, _, _ in items(report, "test")] == ["pre-existing", "blamed"]


def test_a_failing_run_without_junit_fails_closed(cli: CLI, project: Path) -> None:
    (project / ".axpipe").mkdir(exist_ok=True)
    stale = project / ".axpipe" / "old.xml"
    stale.write_text('<testsuite><testcase classname="t" name="x"/></testsuite>')
    code, report = gate(cli, "--test", "python -c \"raise SystemExit(1)\" --junitxml=.axpipe/old.xml")
    assert code == 1
    assert "left no JUnit XML" in report["phases"][0]["summary"]
    assert "{junit_xml}" in report["phases"][0]["summary"]
    assert not stale.exists()  # a previous run's results are never read as this run's


def _wait_for(path: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


SLOW_AT_BASELINE = """
import os, pathlib, sys, time
if os.environ["AXPIPE_GATE_WHERE"] == "baseline":
    pathlib.Path(sys.argv[1]).write_text(str(os.getpid()))
    time.sleep(120)
pathlib.Path(os.environ["AXPIPE_JUNIT_XML"]).write_text(
    '<testsuite><testcase classname="t" name="broken"><failure message="no"/></testcase></testsuite>')
sys.exit(1)
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_gate_removes_its_worktree_and_kills_the_run(project: Path, tmp_path: Path,
                                                                    sig: signal.Signals) -> None:
    script, marker = tmp_path / "slow.py", tmp_path / "pid"
    script.write_text(SLOW_AT_BASELINE)
    process = subprocess.Popen([*AXPIPE, "gate", "--baseline", "HEAD", "--test", f"python {script} {marker}"],
                               cwd=project, env={**os.environ, **GIT_IDENTITY}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, preexec_fn=interrupts_as_default)
    _wait_for(marker)
    assert len(worktrees(project)) == 2  # the baseline's worktree exists while its run sleeps
    process.send_signal(sig)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr
    assert len(worktrees(project)) == 1
    assert list((project / ".axpipe" / "worktrees").iterdir()) == []
    assert not _running(int(marker.read_text()))


def _running(pid: int) -> bool:
    """Whether ``pid`` still runs (a killed child nobody has reaped yet is a zombie, not running)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        if state in ("Z", "X"):
            return False
        time.sleep(0.05)
    return True


def test_a_worktree_left_by_a_killed_gate_is_removed_by_the_next(cli: CLI, project: Path) -> None:
    dead = 4_000_000  # above the kernel's pid limit: no process has it
    stale = project / ".axpipe" / "worktrees" / f"gate-{dead}-0badc0de"
    stale.parent.mkdir(parents=True)
    git(project, "worktree", "add", "--detach", "-q", str(stale), "HEAD")
    edit(project, "    return a - b\n", "    return b - a\n")
    code, _ = gate(cli, "--test", TEST)
    assert code == 1
    assert not stale.exists()
    assert len(worktrees(project)) == 1


# -- typecheck: a type error reaches unchanged lines ------------------------------------------


def test_typecheck_blames_a_new_error_on_an_unchanged_line_but_not_an_old_one(cli: CLI, project: Path) -> None:
    (project / "src" / "typed.py").write_text(
        "def size(text: str) -> int:\n    return len(text)\n\n\nWIDTH: int = size('abc')\nOLD: int = 'x'\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "typed")
    edit(project, "def size(text: str) -> int:", "def size(text: str) -> str:", "src/typed.py")
    edit(project, "    return len(text)", "    return text", "src/typed.py")
    code, report = gate(cli, "--typecheck", "mypy --no-incremental --hide-error-context src/typed.py")
    assert code == 1
    assert items(report, "typecheck") == [
        ("blamed", "src/typed.py:5", "on a line the change did not touch, but the baseline does not have it: the "
                                     "change caused it (type errors reach unchanged call sites)"),
        ("pre-existing", "src/typed.py:6", "the baseline has the same finding on the same line (src/typed.py:6)"),
    ]
    assert len(report["phases"][0]["attempts"]) == 2


def test_a_line_number_inside_a_typecheck_message_follows_the_shift(cli: CLI, project: Path) -> None:
    (project / "src" / "twice.py").write_text("def f() -> int:\n    return 1\n\n\ndef f() -> int:\n    return 2\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "f twice")
    edit(project, "def f() -> int:\n    return 1\n", "import os\n\n\ndef f() -> int:\n    return 1\n",
         "src/twice.py")
    code, report = gate(cli, "--typecheck", "mypy --no-incremental src/twice.py")
    found = next(item for item in report["phases"][0]["items"] if item["subject"] == "src/twice.py:8")
    assert found["message"] == 'Name "f" already defined on line 4'  # "on line 1" at the baseline
    assert (found["verdict"], found["why"]) == (
        "pre-existing", "the baseline has the same finding on the same line (src/twice.py:5)")
    assert code == 0, report


# A type checker in a few lines: every use of a word listed in banned.txt is a finding, with a
# message that does not name the word, so two findings on one line can be identical.
BANNED_CHECK = """import pathlib, re, sys
words = pathlib.Path("banned.txt").read_text().split()
found = 0
for number, line in enumerate(pathlib.Path("src/use.py").read_text().splitlines(), 1):
    for word in re.findall(r"\\w+", line):
        if word in words:
            print(f"src/use.py:{number}: error: a banned word  [banned]")
            found += 1
sys.exit(1 if found else 0)
"""


def test_two_identical_typecheck_findings_on_one_line_where_the_baseline_has_one(cli: CLI,
                                                                                  project: Path) -> None:
    (project / "check.py").write_text(BANNED_CHECK)
    (project / "banned.txt").write_text("foo\n")
    (project / "src" / "use.py").write_text("foo = bar = 1\nx = foo + bar\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "banned words")
    (project / "banned.txt").write_text("foo\nbar\n")  # src/use.py is not touched
    code, report = gate(cli, "--typecheck", "python check.py")
    assert code == 1
    line_two = [(verdict, why) for verdict, subject, why in items(report, "typecheck") if subject == "src/use.py:2"]
    assert sorted(line_two) == [
        ("blamed", "on a line the change did not touch, but the baseline does not have it: the change caused it "
                   "(type errors reach unchanged call sites)"),
        ("pre-existing", "the baseline has the same finding on the same line (src/use.py:2)"),
    ]


# -- baselines that cannot be resolved fail closed --------------------------------------------


def test_a_repository_without_commits_has_no_baseline(cli: CLI, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    result = cli("gate", "--lint", LINT, cwd=empty)
    assert result.exit_code == 2
    assert "no commit yet, so there is no baseline to narrow against" in result.stderr


def test_an_unknown_baseline_is_refused(cli: CLI, project: Path) -> None:
    result = cli("gate", "--lint", LINT, "--baseline", "no-such-branch")
    assert result.exit_code == 2
    assert "--baseline: 'no-such-branch' does not name a commit here" in result.stderr
    assert not (project / ".axpipe" / "gate").exists()


def test_the_first_commit_has_no_default_baseline(cli: CLI, repo: Path) -> None:
    result = cli("gate", "--lint", LINT)
    assert result.exit_code == 2
    assert "HEAD is the first commit and has no parent" in result.stderr


def test_a_shallow_clone_missing_the_baseline_fails_closed(cli: CLI, project: Path, tmp_path: Path) -> None:
    baseline = git(project, "rev-parse", "HEAD~1").strip()
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{project}", str(clone))
    default = cli("gate", "--lint", LINT, cwd=clone)
    assert default.exit_code == 2
    assert "HEAD's parent is not in this shallow clone" in default.stderr
    named = cli("gate", "--lint", LINT, "--baseline", baseline, cwd=clone)
    assert named.exit_code == 2
    assert "which is a shallow clone and may simply not have it" in named.stderr


@pytest.mark.parametrize("args, message", [
    ([], "name what to gate: --recipe NAME"),
    (["--lint", "  "], "--lint: the command is empty"),
    (["--lint", LINT, "--timeout", "0s"], "--timeout: 0s is below the minimum 1s"),
    (["--lint", LINT, "--timeout", "soon"], "--timeout:"),
    (["--lint", LINT, "x=1"], "overrides (x=1) need --recipe NAME"),
])
def test_bad_input_exits_2_and_writes_nothing(cli: CLI, project: Path, args: list[str], message: str) -> None:
    result = cli("gate", *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert not (project / ".axpipe").exists()


# -- the report -------------------------------------------------------------------------------


def _normal(text: str, project: Path) -> str:
    text = text.replace(str(project), "<repo>")
    text = re.sub(r"\b[0-9a-f]{40}\b", "<sha>", text)
    text = re.sub(r"\b[0-9a-f]{12}\b", "<sha12>", text)
    text = re.sub(r"gate/[0-9_-]+\b", "gate/<time>", text)
    text = re.sub(r"gate-\d+-[0-9a-f]+", "gate-<pid>-<id>", text)
    text = re.sub(r"after [0-9.]+ s", "after <t> s", text)
    text = re.sub(r"in [0-9.]+s", "in <t>s", text)
    return text


def test_the_markdown_report(cli: CLI, project: Path, snapshot: object) -> None:
    edit(project, "    return a - b\n", "    import sys\n    return b - a\n")
    result = cli("gate", "--baseline", "HEAD", "--lint", LINT, "--test", TEST)
    assert result.exit_code == 1
    assert _normal(result.stdout, project) == snapshot


def test_a_recipe_declares_the_gate(cli: CLI, project: Path) -> None:
    (project / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    (project / "recipes").mkdir()
    (project / "recipes" / "ci.yaml").write_text(f"# @package _global_\nname: ci\ngate:\n  baseline: HEAD\n"
                                                 f"  phases:\n    lint: \"{LINT}\"\n    test: \"{TEST}\"\n")
    edit(project, "    return a - b\n", "    return b - a\n")
    result = cli("gate", "--recipe", "ci", "--json")
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    assert [(phase["name"], phase["status"]) for phase in report["phases"]] == [("lint", "passed"),
                                                                               ("test", "failed")]
    assert report["baseline_given"] == "HEAD"
    assert cli("gate", "--recipe", "ci", "gate.narrow=false", "--json").exit_code == 1


def test_gate_help_says_how_tests_give_their_identity(cli: CLI) -> None:
    result = cli("gate", "--help")
    assert result.exit_code == 0
    assert "{junit_xml}" in result.stdout and "--baseline REV" in result.stdout
    assert "130 interrupted" in result.stdout and "count only if they pass there" not in result.stdout
    assert "fail\nthere the same way" in result.stdout


def test_the_gate_never_imports_hydra(project: Path) -> None:
    probe = ("import sys; from axpipe.cli import main; code = main(['gate', '--baseline', 'HEAD', '--lint', "
             f"{LINT!r}]); print('hydra' in sys.modules, code)")
    completed = subprocess.run([sys.executable, "-c", probe], cwd=project, capture_output=True, text=True)
    assert completed.stdout.strip().splitlines()[-1] == "False 0", completed.stderr


def test_the_json_report(cli: CLI, project: Path, snapshot: object) -> None:
    edit(project, "    return a - b\n", "    import sys\n    return b - a\n")
    code, report = gate(cli, "--lint", LINT, "--test", TEST)
    assert code == 1
    for phase in report["phases"]:
        for attempt in phase["attempts"]:
            assert Path(attempt["log"]).is_file()
            attempt.update(duration="<t>", output_tail="<tail>", log=Path(attempt["log"]).name,
                           junit=attempt["junit"] and Path(attempt["junit"]).name)
    assert json.loads(_normal(json.dumps(report), project)) == snapshot
