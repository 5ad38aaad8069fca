"""Costs of the gate and the unit contracts, as ratios against baselines measured in the same run.

    .venv/bin/python bench/gate.py [--repeat N] [--files N] [--commits N]

- ``axpipe gate`` (lint + tests, one failing test re-run at the baseline in a worktree)
  against running the same commands by hand: lint, tests, ``git worktree add``, tests in
  the worktree, ``git worktree remove``;
- the scope contract of a unit (two snapshots of the tree and the diff) on a tree of
  ``--files`` files, against ``git status --porcelain -uall`` twice;
- the ``git-scope`` check over ``--commits`` commits, against ``git log --name-status`` of
  the same range (which is what a path-filtered check would read).

Run it with the venv's own python.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import paired  # bench/timing.py

PY = sys.executable
BIN = str(Path(PY).parent)
ENV = {**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", ""), "GIT_AUTHOR_NAME": "b",
       "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
LINT = "ruff check --isolated --no-cache --select F --output-format concise ."
TEST = "python -m pytest -q -p no:cacheprovider --junitxml={junit_xml}"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, env=ENV, check=True, capture_output=True, text=True).stdout


def shell(command: str, cwd: Path) -> None:
    subprocess.run(command, shell=True, cwd=cwd, env=ENV, capture_output=True)


def gate_project(folder: Path) -> Path:
    root = folder / "gate"
    (root / "tests").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "calc.py").write_text("import os\n\n\ndef add(a, b):\n    return a + b\n")
    tests = "".join(f"def test_{n}():\n    assert {n} == {n}\n\n\n" for n in range(30))
    (root / "tests" / "test_calc.py").write_text("from calc import add\n\n\n" + tests +
                                                 "def test_add():\n    assert add(1, 2) == 3\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    (root / "calc.py").write_text("import os\n\n\ndef add(a, b):\n    return a - b\n")
    return root


def bench_gate(folder: Path, repeat: int) -> str:
    root = gate_project(folder)
    head = git(root, "rev-parse", "HEAD").strip()
    junit = folder / "junit.xml"
    test = TEST.replace("{junit_xml}", str(junit))

    def by_hand() -> None:
        shell(LINT, root)
        shell(test, root)
        tree = folder / "by-hand-tree"
        git(root, "worktree", "add", "--detach", "-q", str(tree), head)
        shell(test, tree)
        git(root, "worktree", "remove", "--force", str(tree))

    def axpipe() -> None:
        subprocess.run([PY, "-m", "axpipe", "gate", "--baseline", "HEAD", "--lint", LINT, "--test", TEST,
                        "--report-dir", str(folder / "report")], cwd=root, env=ENV, capture_output=True)

    ours, theirs, ratio = paired(axpipe, by_hand, repeat)
    return f"axpipe gate, 1 test re-run         {ours:7.1f} ms vs the commands by hand {theirs:7.1f} ms: {ratio:.2f}x"


def bench_scope(folder: Path, repeat: int, files: int) -> str:
    from axpipe.scope import Scope, check_contract
    from axpipe.units import starting_point

    root = folder / "scope"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for number in range(files):
        path = root / "src" / f"pkg{number % 50}" / f"m{number}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {number}\n" * 20)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "tree")
    base = git(root, "rev-parse", "HEAD").strip()
    for number in range(20):
        (root / "src" / f"pkg{number}" / f"m{number}.py").write_text("changed\n")
    scope = Scope(["src/**"])

    def contract() -> None:
        _, _, start, _ = starting_point(root)
        _, _, end, _ = starting_point(root)
        check_contract(root, scope, baseline=base, start_tree=start, end_tree=end)

    def status_twice() -> None:
        for _ in range(2):
            git(root, "status", "--porcelain", "-uall")

    ours, theirs, ratio = paired(contract, status_twice, repeat)
    return (f"scope contract, {files} files         {ours:7.1f} ms vs git status x2          {theirs:7.1f} ms: "
            f"{ratio:.2f}x")


def bench_git_scope(folder: Path, repeat: int, commits: int) -> str:
    from axpipe.commit_scope import check
    from axpipe.scope import Scope

    root = folder / "commits"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README").write_text("x\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    base = git(root, "rev-parse", "HEAD").strip()
    for number in range(commits):
        path = root / "src" / f"f{number % 25}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"x = {number}\n")
        git(root, "add", "-A")
        git(root, "commit", "-qm", f"T-{number:03d}: step")
    scope = Scope(["src/**"])

    def ours_check() -> None:
        assert check(root, baseline=base, scope=scope, subject=r"^T-\d{3}: ").ok

    def log() -> None:
        git(root, "log", "--name-status", "-M", "-C", f"{base}..HEAD")

    ours, theirs, ratio = paired(ours_check, log, repeat)
    return (f"git-scope, {commits} commits          {ours:7.1f} ms vs git log --name-status  {theirs:7.1f} ms: "
            f"{ratio:.2f}x ({(ours - theirs) / commits:.2f} ms per commit)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--commits", type=int, default=200)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="axpipe-bench-gate-"))
    try:
        print(bench_gate(folder, args.repeat))
        print(bench_scope(folder, args.repeat, args.files))
        print(bench_git_scope(folder, args.repeat, args.commits))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
