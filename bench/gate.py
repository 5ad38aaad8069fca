"""Costs of the gate and the unit contracts, as ratios against baselines measured in the same run.

    .venv/bin/python bench/gate.py [--repeat N] [--files N] [--commits N] [--broken N]

- ``axpipe gate`` (lint + tests, one failing test re-run at the baseline in a worktree)
  against running the same commands by hand: lint, tests, ``git worktree add``, tests in
  the worktree, ``git worktree remove``;
- a **broken change**: a ``src/``-layout project installed with ``pip install -e`` into a
  venv of its own (pytest, hatchling and editables from the package index), ``--broken``
  tests the change breaks and one that failed before it, gated with ``pytest -x`` and with
  a plain ``pytest``. Beside the timing (against the same commands by hand), a correctness
  figure: in how many of the runs the gate blamed exactly the broken tests and called only
  the old one pre-existing. Anything below all of them exits 1;
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


PYPROJECT = """[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "calc"
version = "0.1"

[tool.hatch.build.targets.wheel]
packages = ["src/calc"]
"""


def broken_project(folder: Path, broken: int) -> tuple[Path, dict[str, str]]:
    """A committed src-layout project installed in editable mode in a venv of its own, and the
    change that breaks ``broken`` of its tests (one more failed before it); the environment
    whose PATH finds that venv's python."""
    venv, root = folder / "venv", folder / "broken"
    subprocess.run([PY, "-m", "venv", "--without-pip", str(venv)], check=True)
    (root / "src" / "calc").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / ".gitignore").write_text("__pycache__/\n")
    (root / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    tests = "".join(f"\n\ndef test_add_{n}():\n    assert add({n}, {n}) == {2 * n}\n" for n in range(1, broken + 1))
    (root / "tests" / "test_calc.py").write_text("from calc import add\n\n\ndef test_a_known_failure():\n"
                                                 "    assert add(0, 0) == 1\n" + tests)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "calc")
    pip = [PY, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "pytest", "hatchling", "editables"], check=True, capture_output=True)
    subprocess.run([*pip, "--no-build-isolation", "--no-deps", "-e", str(root)], check=True, capture_output=True)
    (root / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a - b\n")
    return root, {**ENV, "PATH": str(venv / "bin") + os.pathsep + ENV["PATH"]}


def bench_broken(folder: Path, repeat: int, broken: int) -> tuple[list[str], bool]:
    """The gate on a broken change, under ``-x`` and with the editable install: timing, and
    whether every run blamed exactly the broken tests."""
    root, env = broken_project(folder, broken)
    rows, right = [], True
    for label, test in (("-x", "python -m pytest -q -x -p no:cacheprovider"),
                        ("plain", "python -m pytest -q -p no:cacheprovider")):
        row, all_right = _broken_row(folder, root, env, broken, label, test, repeat)
        rows.append(row)
        right = right and all_right
    return rows, right


def _broken_row(folder: Path, root: Path, env: dict[str, str], broken: int, label: str, test: str,
                repeat: int) -> tuple[str, bool]:
    import json

    head = git(root, "rev-parse", "HEAD").strip()
    expected = {f"tests.test_calc::test_add_{n}" for n in range(1, broken + 1)}
    outcomes: list[bool] = []
    blamed_counts: list[int] = []

    def axpipe() -> None:
        completed = subprocess.run([PY, "-m", "axpipe", "gate", "--baseline", "HEAD", "--json", "--test", test,
                                    "--report-dir", str(folder / "broken-report")], cwd=root, env=env,
                                   capture_output=True, text=True)
        items = json.loads(completed.stdout)["phases"][0]["items"]
        blamed = {item["subject"] for item in items if item["verdict"] == "blamed"}
        old = {item["subject"] for item in items if item["verdict"] == "pre-existing"}
        blamed_counts.append(len(blamed & expected))
        outcomes.append(completed.returncode == 1 and blamed == expected
                        and old == {"tests.test_calc::test_a_known_failure"})

    def by_hand() -> None:  # the same work: the suite here, a worktree, the suite there
        junit = folder / "by-hand.xml"
        subprocess.run(f"{test} --junitxml={junit}", shell=True, cwd=root, env=env, capture_output=True)
        tree = folder / "by-hand-broken"
        git(root, "worktree", "add", "--detach", "-q", str(tree), head)
        subprocess.run(f"{test} --junitxml={junit}", shell=True, cwd=tree, env=env, capture_output=True)
        git(root, "worktree", "remove", "--force", str(tree))

    ours, theirs, ratio = paired(axpipe, by_hand, repeat)
    row = (f"broken change, {label:5} {broken} tests  {ours:7.1f} ms vs the commands by hand {theirs:7.1f} ms: "
           f"{ratio:.2f}x; blamed all {broken} in {sum(outcomes)}/{len(outcomes)} runs "
           f"(fewest blamed: {min(blamed_counts)})")
    return row, all(outcomes)


def bench_scope(folder: Path, repeat: int, files: int) -> str:
    from axpipe.unit.scope import Scope, check_contract
    from axpipe.unit.units import starting_point

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
        start, end = starting_point(root).tree, starting_point(root).tree
        check_contract(root, scope, baseline=base, start_tree=start, end_tree=end)

    def status_twice() -> None:
        for _ in range(2):
            git(root, "status", "--porcelain", "-uall")

    ours, theirs, ratio = paired(contract, status_twice, repeat)
    return (f"scope contract, {files} files         {ours:7.1f} ms vs git status x2          {theirs:7.1f} ms: "
            f"{ratio:.2f}x")


def bench_git_scope(folder: Path, repeat: int, commits: int) -> str:
    from axpipe_builtin.commit_scope import check

    from axpipe.unit.scope import Scope

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
    parser.add_argument("--broken", type=int, default=9, help="tests the broken change breaks")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="axpipe-bench-gate-"))
    right = True
    try:
        print(bench_gate(folder, args.repeat))
        rows, right = bench_broken(folder, args.repeat, args.broken)
        print("\n".join(rows))
        print(bench_scope(folder, args.repeat, args.files))
        print(bench_git_scope(folder, args.repeat, args.commits))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if not right:
        raise SystemExit("the gate passed or misjudged a broken change: see the correctness figures above")


if __name__ == "__main__":
    main()
