"""Review rounds with scripted review CLIs in real git repositories."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import RESOURCES, git, tree

from axpipe.errors import AxpipeError, ExitCode, InputError
from axpipe.recipe.validation import validate_recipe
from axpipe.review import revisions
from axpipe.review import round as review_round
from axpipe.review.round import RoundResult
from axpipe.run.events import EventLog

REVIEWER = str(RESOURCES / "reviewers" / "reviewer.py")


def reviewer(name: str, mode: str, *extra: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "command": [sys.executable, REVIEWER, mode, *extra], **fields}


def planned(*reviewers: dict[str, Any]) -> list[review_round.PlannedReviewer]:
    config = {"name": "r", "reviewers": list(reviewers)}
    recipe, _ = validate_recipe(config, config)
    return review_round.plan(recipe.reviewers, None)


def run(repo: Path, *reviewers: dict[str, Any], **options: Any) -> RoundResult:
    return review_round.run_round(workspace=repo, root=repo / ".axpipe" / "review", reviewers=planned(*reviewers),
                                  **options)


@pytest.fixture
def project(repo: Path) -> Path:
    (repo / "calc.py").write_text("def total(a, b):\n    return a - b\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "add total")
    (repo / ".git" / "info" / "exclude").write_text("/.axpipe/\n")
    return repo


def test_a_round_keeps_every_receipt_in_round_n(project: Path) -> None:
    events = EventLog(goal="g")
    result = run(project, reviewer("alpha", "findings", "F1"), reviewer("beta", "no-findings"), events=events)
    head = git(project, "rev-parse", "HEAD").strip()
    root = project / ".axpipe" / "review"
    assert result.completed and result.number == 1 and result.folder == root / "round-1"
    assert tree(root / "round-1") == [
        "alpha", "alpha/exit.txt", "alpha/prompt.md", "alpha/stderr.txt", "alpha/stdout.txt",
        "base.txt", "beta", "beta/exit.txt", "beta/prompt.md", "beta/stderr.txt", "beta/stdout.txt",
        "diff.patch", "revision.txt"]
    assert (root / "round-1" / "revision.txt").read_text() == head + "\n"
    assert (root / "round-1" / "base.txt").read_text() == git(project, "rev-parse", "HEAD~1")
    assert (root / "round-1" / "alpha" / "exit.txt").read_text() == "0\n"
    assert "+def total(a, b):" in (root / "round-1" / "diff.patch").read_text()
    prompt = (root / "round-1" / "alpha" / "prompt.md").read_text()
    assert f"Revision under review: {head}" in prompt and "- calc.py" in prompt and "+    return a - b" in prompt
    assert [run.verdict.findings for run in result.reviewers if run.verdict] == [("F1",), ()]
    assert not (root / "attempts").exists()
    kinds = [event["type"] for event in events.history]
    assert kinds == ["review.started", "review.finished", "review.started", "review.finished", "review.round"]


def test_the_prompt_can_go_on_stdin(project: Path) -> None:
    result = run(project, reviewer("alpha", "echo-stdin", stdin=True))
    assert result.completed
    assert "stdin matches the prompt file: True" in Path(result.reviewers[0].output).read_text()


def test_stderr_is_kept_apart_so_a_json_stream_stays_valid(project: Path) -> None:
    result = run(project, reviewer("alpha", "stderr-noise", output="jsonl"))
    folder = result.folder / "alpha"
    assert result.completed
    assert (folder / "stderr.txt").read_text() == "warning: deprecated flag\n"
    assert (folder / "stdout.jsonl").read_text() == '{"type": "text", "text": "VERDICT: no findings"}\n'
    assert not (folder / "stdout.txt").exists()


@pytest.mark.parametrize(("mode", "exit_text", "reason"), [
    ("fail", "3\n", "exit code 3: error: not logged in"),
    ("warn-only", "0\n", "exit code 0 but no verdict line; the output must end with `VERDICT: no findings` or "
                         "`VERDICT: findings <id>[, <id>...]`"),
])
def test_a_failed_reviewer_leaves_an_attempt_not_a_round(project: Path, mode: str, exit_text: str,
                                                         reason: str) -> None:
    result = run(project, reviewer("alpha", "no-findings"), reviewer("beta", mode))
    root = project / ".axpipe" / "review"
    assert not result.completed
    assert result.folder == root / "attempts" / "round-1" / "attempt-1"
    assert not (root / "round-1").exists()
    assert (result.folder / "beta" / "exit.txt").read_text() == exit_text
    assert [(run.name, run.passed, run.reason) for run in result.reviewers] == [
        ("alpha", True, "verdict: no findings"), ("beta", False, reason)]
    recorded = json.loads((result.folder / "attempt.json").read_text())
    assert recorded["status"] == "failed" and recorded["reasons"] == [f"beta: {reason}"]
    # The next round reuses the number, in a new attempt, and completes.
    again = run(project, reviewer("alpha", "no-findings"))
    assert (again.completed, again.number, again.folder) == (True, 1, root / "round-1")
    assert (root / "attempts" / "round-1" / "attempt-1" / "attempt.json").is_file()


def test_a_timed_out_reviewer_is_killed_and_recorded_as_124(project: Path) -> None:
    config = reviewer("slow", "sleep", timeout=1)
    result = run(project, config)
    assert not result.completed
    assert (result.folder / "slow" / "exit.txt").read_text() == "124\n"
    assert result.reviewers[0].reason == "timed out after 1 s"
    assert (result.folder / "slow" / "stdout.txt").read_text() == "Looking at calc.py...\n"


@pytest.mark.parametrize(("mode", "problem"), [
    ("commit", "HEAD moved from"),
    ("edit", "the checkout changed during the round: calc.py"),
])
def test_a_reviewer_that_changes_the_checkout_fails_the_round(project: Path, mode: str, problem: str) -> None:
    result = run(project, reviewer("alpha", mode))
    assert not result.completed
    assert result.reviewers[0].passed  # its own receipt is fine; the round is not
    assert problem in result.problems[0]


def test_later_rounds_review_from_the_first_rounds_base(project: Path) -> None:
    first_base = git(project, "rev-parse", "HEAD~1").strip()
    run(project, reviewer("alpha", "no-findings"))
    (project / "calc.py").write_text("def total(a, b):\n    return a + b\n")
    git(project, "commit", "-qam", "fix total")
    second = run(project, reviewer("alpha", "no-findings"))
    assert (second.number, second.base) == (2, first_base)
    assert second.revision == git(project, "rev-parse", "HEAD").strip()
    assert "+    return a + b" in (second.folder / "diff.patch").read_text()
    third = run(project, reviewer("alpha", "no-findings"), base="HEAD~1")
    assert third.base == git(project, "rev-parse", "HEAD~1").strip()


def test_the_first_commit_is_reviewed_against_the_empty_tree(repo: Path) -> None:
    result = run(repo, reviewer("alpha", "no-findings"))
    assert result.base == revisions.EMPTY_TREE
    assert "+a project" in (result.folder / "diff.patch").read_text()


def nothing_written(project: Path) -> bool:
    return not (project / ".axpipe" / "review").exists() or not any(
        item.name != ".lock" for item in (project / ".axpipe" / "review").iterdir())


@pytest.mark.parametrize(("setup", "options", "config", "error", "code"), [
    ("dirty", {}, {}, "the checkout has uncommitted changes (calc.py); a round reviews a commit", 2),
    (None, {"base": "no-such-ref"}, {}, "--base: 'no-such-ref' does not name a commit", 2),
    (None, {"max_diff_bytes": 10}, {}, "bytes, over the limit of 10", 2),
    (None, {}, {"prompt": "{{ dif }}"}, "reviewer 'alpha' prompt: 'dif' is undefined", 2),
    (None, {}, {"command": ["no-such-review-cli", "{prompt_file}"]},
     "reviewer 'alpha': program not found: 'no-such-review-cli'", 5),
    (None, {}, {"command": "cli --model {model}"}, "the command uses {model} but the reviewer has no `model`", 2),
])
def test_bad_input_is_refused_before_any_reviewer_runs(project: Path, setup: str | None, options: dict[str, Any],
                                                      config: dict[str, Any], error: str, code: int) -> None:
    if setup == "dirty":
        (project / "calc.py").write_text("changed\n")
    with pytest.raises(AxpipeError) as caught:
        run(project, {**reviewer("alpha", "no-findings"), **config}, **options)
    assert error in caught.value.message
    assert caught.value.exit_code == code
    assert nothing_written(project)


def test_a_command_reviewer_needs_a_command(project: Path) -> None:
    with pytest.raises(InputError, match="a `command` reviewer needs a `command`"):
        run(project, {"name": "alpha"})


def test_a_second_round_at_the_same_time_is_refused(project: Path) -> None:
    import fcntl

    root = project / ".axpipe" / "review"
    root.mkdir(parents=True)
    with (root / ".lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        with pytest.raises(AxpipeError) as caught:
            run(project, reviewer("alpha", "no-findings"))
    assert caught.value.exit_code == ExitCode.LOCKED


def stand_in(folder: Path, name: str, events: list[dict[str, Any]]) -> None:
    """A program named like a real review CLI that records its argv and stdin, then prints events."""
    folder.mkdir(exist_ok=True)
    script = folder / name
    lines = "".join(json.dumps(event) + "\n" for event in events)
    script.write_text(f"#!{sys.executable}\nimport json, sys\n"
                      f"open(sys.argv[0] + '.called', 'w').write(json.dumps([sys.argv[1:], sys.stdin.read()]))\n"
                      f"sys.stdout.write({lines!r})\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


@pytest.mark.parametrize(("kind", "program", "argv", "events"), [
    ("claude-code", "claude", ["-p", "--output-format", "stream-json", "--verbose", "--model", "m-1"],
     [{"type": "system", "subtype": "init"},
      {"type": "assistant", "message": {"content": [{"type": "text", "text": "VERDICT: no findings"}]}},
      {"type": "result", "subtype": "success", "is_error": False, "result": "VERDICT: no findings"}]),
    ("codex", "codex", ["exec", "--json", "--sandbox", "read-only", "--model", "m-1", "-"],
     [{"type": "thread.started", "thread_id": "t"},
      {"type": "item.completed", "item": {"type": "agent_message", "text": "VERDICT: no findings"}},
      {"type": "turn.completed", "usage": {}}]),
])
def test_presets_call_their_cli_the_documented_way(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   kind: str, program: str, argv: list[str],
                                                   events: list[dict[str, Any]]) -> None:
    # The real CLIs are paid services and are not installed here: a stand-in with the same
    # name on PATH records how it was called and answers in the CLI's event format.
    bin_dir = tmp_path / "bin"
    stand_in(bin_dir, program, events)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = run(project, {"name": program, "kind": kind, "model": "m-1"})
    assert result.completed, result.reviewers[0].reason
    called_argv, stdin = json.loads((bin_dir / f"{program}.called").read_text())
    assert called_argv == argv
    assert stdin == (result.folder / program / "prompt.md").read_text()
    assert (result.folder / program / "stdout.jsonl").is_file()


def test_the_gemini_preset_answers_in_text(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "gemini"
    script.write_text("#!/bin/sh\ncat > /dev/null\necho 'Nothing to report.'\necho 'VERDICT: no findings'\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = run(project, {"name": "gemini", "kind": "gemini-cli", "extra_args": ["--yolo"]})
    assert result.completed
    assert (result.folder / "gemini" / "stdout.txt").read_text() == "Nothing to report.\nVERDICT: no findings\n"


def test_a_preset_whose_cli_is_not_installed_is_an_environment_error(project: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    with pytest.raises(AxpipeError) as caught:
        run(project, {"name": "claude", "kind": "claude-code"})
    assert caught.value.exit_code == ExitCode.ENVIRONMENT
    assert caught.value.message == ("reviewer 'claude': program not found: 'claude' is not on PATH and is not an "
                                    "executable file")


@pytest.mark.parametrize("name", ["../escape", "a/b", "revision.txt", ".hidden"])
def test_a_reviewer_name_must_be_a_plain_folder_name(project: Path, name: str) -> None:
    with pytest.raises(InputError, match="cannot be folder names"):
        run(project, reviewer(name, "no-findings"))
    assert nothing_written(project)


def test_a_relative_program_is_found_in_the_repository(project: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    tools = project / "tools"
    tools.mkdir()
    script = tools / "review.sh"
    script.write_text("#!/bin/sh\necho 'VERDICT: no findings'\n")
    script.chmod(0o755)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "review tool")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the current directory does not matter; the repository does
    assert run(project, {"name": "tool", "command": ["./tools/review.sh"]}).completed
    with pytest.raises(AxpipeError) as caught:
        run(project, {"name": "tool", "command": ["./tools/missing.sh"]})
    assert "program not found: './tools/missing.sh'" in caught.value.message
