"""The guards on the labelled corpus: precision and recall per class, and time per diff
against `git diff --stat` on the same repository, measured in the same run.

    .venv/bin/python bench/guards.py [--repeat N] [--large-files N]

Goal (issue 4): every cheating diff in the corpus caught by its class, no honest diff
rejected, judged from a git repository and from a patch beside its files. The patch-only
column (no files, hunks alone) is the documented degraded mode and is reported, not a goal.

Timing, paired sample by sample as in bench/cli.py:
- in process: `find_cheating(root)` (what the repair loop calls) per corpus diff;
- the command: `axpipe guard` as a process (start-up included) on a few diffs;
- scale: the same one-file change in a repository of --large-files files.

--history also judges the honest history of real public repositories
(bench/guards_history/repositories.yaml), read from clones under --repos DIR, and compares
every flagged commit with its label (bench/guards_history/labels.yaml); see
bench/guard_history.py. --history-only skips the corpus and the timings above.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
sys.path.insert(0, str(ROOT))

import guard_history  # noqa: E402  (bench/guard_history.py)
from timing import paired  # noqa: E402  (bench/timing.py)

from axpipe.guard.run import find_cheating  # noqa: E402
from axpipe.testing.guard_corpus import MODES, CorpusCase, Workbench, load_corpus, score  # noqa: E402

CORPUS = ROOT / "tests" / "resources" / "guards"
CLI_SAMPLE = ("py-skip-decorator", "py-branch-on-list-input", "js-tobe-to-defined", "ts-honest-fix-pluralize",
              "py-honest-split-test-file")


def git_stat(root: Path) -> Callable[[], object]:
    return lambda: subprocess.run(["git", "diff", "--stat", "HEAD"], cwd=root, stdout=subprocess.DEVNULL, check=True)


def accuracy(cases: list[CorpusCase], bench: Workbench) -> bool:
    met = True
    print(f"corpus: {len(cases)} diffs, {sum(not c.honest for c in cases)} cheating, "
          f"{sum(c.honest for c in cases)} honest\n")
    print(f"{'mode':<11} {'class':<20} {'caught':>6} {'missed':>6} {'false':>6} {'precision':>9} {'recall':>7}")
    for mode in MODES:
        results = [(case, bench.judge(case, mode)) for case in cases]
        for name, entry in score(results).items():
            print(f"{mode:<11} {name:<20} {entry.caught:>6} {entry.missed:>6} {entry.false_alarms:>6} "
                  f"{entry.precision:>9.2f} {entry.recall:>7.2f}")
        rejected = [case.id for case, findings in results if case.honest and findings]
        missed = [case.id for case, findings in results
                  if not case.honest and case.label not in {finding.guard for finding in findings}]
        print(f"{mode:<11} honest diffs rejected: {len(rejected)}/{sum(c.honest for c in cases)}"
              f"{'  ' + ', '.join(rejected) if rejected else ''}")
        if missed and mode != "patch-only":
            print(f"{mode:<11} missed: {', '.join(missed)}")
        if mode != "patch-only":
            met = met and not rejected and not missed
        print()
    return met


def per_diff(cases: list[CorpusCase], bench: Workbench, repeat: int) -> None:
    ours, theirs, ratios = [], [], []
    for case in cases:
        root = bench.before(case)
        subprocess.run(["git", "apply", "-"], cwd=root, input=case.diff, text=True, check=True)
        context = case.context()
        mine, base, ratio = paired(lambda root=root, context=context: find_cheating(root, "HEAD", context),
                                   git_stat(root), repeat, warmup=1)
        ours.append(mine)
        theirs.append(base)
        ratios.append(ratio)
    print(f"in process, per corpus diff ({len(cases)} diffs, median of {repeat} pairs each):")
    print(f"  find_cheating  median {statistics.median(ours):6.1f} ms  (max {max(ours):.1f})")
    print(f"  git diff --stat median {statistics.median(theirs):6.1f} ms")
    print(f"  ratio          median {statistics.median(ratios):6.2f}x  (max {max(ratios):.2f}x)\n")


def command(cases: list[CorpusCase], bench: Workbench, repeat: int) -> None:
    console = Path(PY).parent / "axpipe"
    axpipe = [str(console)] if console.exists() else [PY, "-m", "axpipe"]
    print(f"the command, as a process (median of {repeat} pairs):")
    sample = [case for case in cases if case.id in CLI_SAMPLE]
    for case in sample:
        root = bench.before(case)
        subprocess.run(["git", "apply", "-"], cwd=root, input=case.diff, text=True, check=True)

        def run(root: Path = root) -> None:
            subprocess.run([*axpipe, "guard"], cwd=root, stdout=subprocess.DEVNULL, check=False)

        mine, base, ratio = paired(run, git_stat(root), repeat)
        print(f"  axpipe guard  {case.id:<28} {mine:6.1f} ms vs git diff --stat {base:5.1f} ms: {ratio:5.1f}x")
    # Where the time goes: interpreter start, then axpipe's start-up (plugins list loads no guard).
    baselines = (("python -I -c pass", [PY, "-I", "-c", "pass"]), ("axpipe plugins list", [*axpipe, "plugins", "list"]))
    for label, argv in baselines:
        mine, base, ratio = paired(run, lambda argv=argv: subprocess.run(argv, stdout=subprocess.DEVNULL), repeat)
        print(f"  axpipe guard  {sample[-1].id:<28} {mine:6.1f} ms vs {label} {base:5.1f} ms: {ratio:5.1f}x")
    print()


def large_repository(scratch: Path, files: int, repeat: int) -> None:
    """The same small cheat in a repository of ``files`` Python files: cost follows the change."""
    root = scratch / "large"
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    for number in range(files // 2):
        (root / "pkg" / f"mod{number}.py").write_text(
            f"def f{number}(x):\n    return x * {number + 2}\n" + "# padding\n" * 40)
        (root / "tests" / f"test_mod{number}.py").write_text(
            f"from pkg.mod{number} import f{number}\n\n\ndef test_f{number}():\n    assert f{number}(3) == "
            f"{3 * (number + 2)}\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "large"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env, stdout=subprocess.DEVNULL)
    (root / "pkg" / "mod7.py").write_text("def f7(x):\n    if x == 3:\n        return 27\n    return x * 9\n")
    (root / "tests" / "test_mod8.py").write_text((root / "tests" / "test_mod8.py").read_text().replace(
        "def test_f8", "import pytest\n\n@pytest.mark.skip\ndef test_f8"))
    found = find_cheating(root)
    assert {finding.guard for finding in found} == {"hardcoded-expected", "skipped-test"}, found
    mine, base, ratio = paired(lambda: find_cheating(root), git_stat(root), repeat)
    print(f"a repository of {files} files, 2 of them changed (median of {repeat} pairs):")
    print(f"  find_cheating {mine:6.1f} ms vs git diff --stat {base:5.1f} ms: {ratio:5.2f}x\n")


def large_test_file(scratch: Path, repeat: int) -> bool:
    """A 12-line change in a 6,000-line test file (Python and JavaScript): the cost follows
    the change, not the size of the file (issue 21: no commit above 2 s)."""
    root = scratch / "big-test-file"
    (root / "tests").mkdir(parents=True)
    python = "import pytest\n\nfrom calc import add\n\n" + "".join(
        f"\n\ndef test_add_{n}():\n    result = add({n}, 1)\n    assert result == {n + 1}\n"
        f"    assert isinstance(result, int)\n    assert result > {n - 1}\n    # case {n}\n" for n in range(760))
    javascript = "import { describe, expect, it } from 'vitest';\nimport { add } from '../calc.js';\n\n" + \
        "describe('add', () => {\n" + "".join(
            f"  it('adds {n}', () => {{\n    const result = add({n}, 1);\n    expect(result).toBe({n + 1});\n"
            f"    expect(result).toBeGreaterThan({n - 1});\n    // case {n}\n  }});\n\n" for n in range(860)) + "});\n"
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "tests" / "test_calc.py").write_text(python)
    (root / "tests" / "calc.test.js").write_text(javascript)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "big"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env, stdout=subprocess.DEVNULL)
    lines = {name: (root / "tests" / name).read_text().count("\n") for name in ("test_calc.py", "calc.test.js")}
    for name, old, new in (("test_calc.py", "    assert result == 301\n", "    assert result\n"),
                           ("calc.test.js", "    expect(result).toBe(401);\n", "    expect(result).toBeTruthy();\n")):
        path = root / "tests" / name
        text = path.read_text().replace(old, new)
        for n in (302, 303, 304, 305, 306):  # a dozen changed lines in all
            text = text.replace(f"    // case {n}\n", f"    // case {n}, reworded\n")
        path.write_text(text)
    found = find_cheating(root)
    assert {finding.guard for finding in found} == {"loosened-assertion"}, found
    mine, base, ratio = paired(lambda: find_cheating(root), git_stat(root), repeat)
    print(f"a 12-line change in test files of {lines['test_calc.py']} (Python) and {lines['calc.test.js']} "
          f"(JavaScript) lines (median of {repeat} pairs):")
    print(f"  find_cheating {mine:6.1f} ms vs git diff --stat {base:5.1f} ms: {ratio:5.2f}x\n")
    return mine <= 2000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7, help="samples per timing (median)")
    parser.add_argument("--large-files", type=int, default=10_000, help="files in the scale repository")
    parser.add_argument("--history", action="store_true",
                        help="also judge real repositories' history (bench/guards_history/)")
    parser.add_argument("--history-only", action="store_true", help="only the history, no corpus or timings")
    parser.add_argument("--repos", type=Path, default=Path(os.environ.get(
        "AXPIPE_BENCH_REPOS", Path.home() / ".cache" / "axpipe" / "bench-repos")),
                        help="folder of clones named owner+name (default $AXPIPE_BENCH_REPOS or "
                             "~/.cache/axpipe/bench-repos)")
    parser.add_argument("--repo", action="append", default=[], help="only this repository (owner/name)")
    parser.add_argument("--dump", type=Path, help="write every flagged commit's findings to this JSON file")
    args = parser.parse_args()
    subprocess.run([PY, "-m", "compileall", "-q", str(ROOT / "axpipe"), str(ROOT / "plugins")], check=True,
                   stdout=subprocess.DEVNULL)
    if args.history_only:
        with tempfile.TemporaryDirectory(prefix="axpipe-bench-history-") as scratch:
            return 0 if guard_history.run(args.repos, Path(scratch), args.repeat, args.dump, args.repo) else 1
    cases = load_corpus(CORPUS)
    with tempfile.TemporaryDirectory(prefix="axpipe-bench-guards-") as scratch:
        bench = Workbench(CORPUS, Path(scratch))
        accurate = accuracy(cases, bench)
        per_diff(cases, bench, args.repeat)
        command(cases, bench, args.repeat)
        large_repository(Path(scratch), args.large_files, args.repeat)
        large = large_test_file(Path(scratch), args.repeat)
        real = guard_history.run(args.repos, Path(scratch), args.repeat, args.dump, args.repo) \
            if args.history else True
        shutil.rmtree(Path(scratch) / "cases", ignore_errors=True)
    print("result")
    print(f"  {'met ' if accurate else 'MISS'}  every cheating diff caught by its class, no honest diff rejected "
          "(git and patch modes)")
    print(f"  {'met ' if large else 'MISS'}  a 12-line change in a 6,000-line test file judged within 2 s")
    if args.history:
        print(f"  {'met ' if real else 'MISS'}  real history: the goals above (see its own lines)")
    print(f"\n(python {sys.version.split()[0]}, {os.cpu_count()} cores)")
    return 0 if accurate and large and real else 1


if __name__ == "__main__":
    sys.exit(main())
