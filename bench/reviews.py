"""Reviews and receipts: overhead as ratios against baselines measured in the same run.

    .venv/bin/python bench/reviews.py [--repeat N]

Targets (issue 7):
- ``axpipe receipts verify`` of a two-round set with one regression test within 2x of running
  that test's file with pytest directly (the part nothing can avoid: the verifier runs whole
  files, so that a missing name is reported rather than aborting pytest);
- ``axpipe receipts verify --help`` starts within 5x ``python -I -c pass`` and never imports Hydra;
- reading the verdict of a 20 MB JSONL event stream within 2x of ``json.loads`` of every line;
- a review round of 4 scripted reviewers adds at most 25 ms per reviewer over running the same
  4 commands with ``subprocess.run``.

Run it with the venv's own python (not a pyenv shim, which adds ~85 ms to every start).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from cli import imports_hydra  # noqa: E402  (bench/cli.py)
from timing import paired, spawn  # noqa: E402  (bench/timing.py)

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@axpipe.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@axpipe.invalid"}
REVIEWER = "import sys; sys.stdin.read() if False else None; print('Looked.'); print('VERDICT: no findings')\n"



def receipts_project(base: Path) -> Path:
    """The tests' valid receipt set (two rounds, one fixed finding with a regression test)."""
    from review_fixtures import build

    repo = base / "receipts"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    (repo / "README.md").write_text("bench\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "initial"], cwd=repo, check=True)
    build(repo)
    return repo


def stream(path: Path, megabytes: int) -> None:
    """A Claude-Code-shaped event stream: tool calls and results, then the final text."""
    tool = json.dumps({"type": "assistant", "message": {"content": [
        {"type": "tool_use", "name": "Read", "input": {"file_path": "src/calc.py"}}]}})
    result = json.dumps({"type": "user", "message": {"content": [
        {"type": "tool_result", "content": "def add(a, b):\n    return a + b\n" * 20}]}})
    thought = json.dumps({"type": "assistant", "message": {"content": [
        {"type": "text", "text": "Reading the next file to check the call sites."}]}})
    with path.open("w") as handle:
        while handle.tell() < megabytes * 1024 * 1024:
            handle.write(f"{tool}\n{result}\n{thought}\n")
        final = {"type": "assistant", "message": {"content": [{"type": "text", "text": "VERDICT: no findings"}]}}
        handle.write(json.dumps(final) + "\n")


def verdict_ratio(base: Path, repeat: int) -> tuple[float, float, float]:
    from axpipe.review.verdicts import parse_jsonl

    path = base / "stdout.jsonl"
    stream(path, 20)

    def ours() -> None:
        assert parse_jsonl(path.read_text()).findings == ()

    def baseline() -> None:
        for line in path.read_text().splitlines():
            json.loads(line)

    return paired(ours, baseline, repeat, warmup=1)


def round_overhead(base: Path, repeat: int) -> tuple[float, float]:
    from axpipe.recipe.validation import validate_recipe
    from axpipe.review import round as review_round

    repo = base / "round"
    repo.mkdir()
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=env)
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "review.py").write_text(REVIEWER)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "calc"], cwd=repo, check=True, env=env)
    commands = [[PY, "-I", "review.py"] for _ in range(4)]
    config = {"name": "bench", "reviewers": [{"name": f"r{n}", "command": command}
                                             for n, command in enumerate(commands)]}
    recipe, _ = validate_recipe(config, config)
    planned = review_round.plan(recipe.reviewers, None)

    def ours() -> None:
        root = Path(tempfile.mkdtemp(dir=base))
        result = review_round.run_round(workspace=repo, root=root, reviewers=planned)
        assert result.completed
        shutil.rmtree(root)

    def baseline() -> None:
        for command in commands:
            subprocess.run(command, cwd=repo, capture_output=True, check=True)

    ours_ms, baseline_ms, _ = paired(ours, baseline, repeat)
    return ours_ms, baseline_ms


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=15, help="samples per measurement (median)")
    repeat = parser.parse_args().repeat
    subprocess.run([PY, "-m", "compileall", "-q", str(ROOT / "axpipe"), str(ROOT / "plugins")],
                   check=True, stdout=subprocess.DEVNULL)
    os.environ.update(GIT_ENV)
    console_script = Path(PY).parent / "axpipe"
    axpipe = [str(console_script)] if console_script.exists() else [PY, "-m", "axpipe"]
    rows: list[tuple[str, str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="axpipe-bench-reviews-") as scratch:
        base = Path(scratch)
        repo = receipts_project(base)
        verify = spawn(*axpipe, "receipts", "verify", "--root", "review", cwd=repo)
        pytest_alone = spawn(PY, "-m", "pytest", "-q", "tests/test_calc.py", cwd=repo, ok=(0, 1))
        ours, theirs, ratio = paired(verify, pytest_alone, repeat)
        print(f"{'axpipe receipts verify':<32} {ours:7.1f} ms vs pytest of its file {theirs:7.1f} ms: "
              f"{ratio:4.2f}x")
        rows.append(("receipts verify vs pytest of the file", f"{ratio:.2f}x (target <= 2x)", ratio <= 2))
        started, python_pass, ratio = paired(spawn(*axpipe, "receipts", "verify", "--help", cwd=repo),
                                             spawn(PY, "-I", "-c", "pass", cwd=repo), repeat)
        hydra = imports_hydra("receipts", "verify", "--root", "review", cwd=repo)
        print(f"{'axpipe receipts verify --help':<32} {started:7.1f} ms vs python -I -c pass {python_pass:6.1f} ms: "
              f"{ratio:4.2f}x  verify imports hydra: {hydra}")
        rows.append(("receipts verify start-up", f"{ratio:.2f}x (target <= 5x, no Hydra)", ratio <= 5 and not hydra))
        sys.path.insert(0, str(ROOT))
        ours, theirs, ratio = verdict_ratio(base, max(repeat // 3, 5))
        print(f"{'verdict of a 20 MB stream':<32} {ours:7.1f} ms vs json.loads per line {theirs:7.1f} ms: "
              f"{ratio:4.2f}x")
        rows.append(("verdict of a 20 MB JSONL stream", f"{ratio:.2f}x (target <= 2x)", ratio <= 2))
        ours, theirs = round_overhead(base, repeat)
        extra = (ours - theirs) / 4
        print(f"{'review round, 4 reviewers':<32} {ours:7.1f} ms vs 4 x subprocess.run {theirs:7.1f} ms: "
              f"+{extra:.1f} ms per reviewer")
        rows.append(("review round overhead", f"+{extra:.1f} ms per reviewer (target <= 25 ms)", extra <= 25))
    print("\nresult")
    for label, figure, ok in rows:
        print(f"  {'met ' if ok else 'MISS'}  {label:<34} {figure}")
    print(f"\n(python {sys.version.split()[0]}, {os.cpu_count()} cores, median of {repeat}, "
          f"{time.strftime('%Y-%m-%d')})")
    return 0 if all(ok for _, _, ok in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
