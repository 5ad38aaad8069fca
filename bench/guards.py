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

--history RANGE (repeatable, e.g. main, main..my-branch) also judges every non-merge
commit of RANGE in this repository as a patch beside its parent's files (git archive):
real, presumably honest work, where every finding is worth a look.
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

from timing import paired  # noqa: E402  (bench/timing.py)

from axpipe.guarding import find_cheating  # noqa: E402
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


def history(ranges: list[str], scratch: Path) -> None:
    import io
    import tarfile

    from axpipe.guarding import check_change

    def git(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True)

    commits: list[str] = []
    for spec in ranges:
        revisions = spec.split("..", 1)
        arguments = [revisions[1], f"^{revisions[0]}"] if len(revisions) == 2 else revisions
        listed = git("rev-list", "--no-merges", *arguments).stdout.decode().split()
        commits.extend(commit for commit in listed if commit not in commits)
    judged = fired = files = 0
    for commit in commits:
        if git("rev-parse", "--verify", "--quiet", f"{commit}^").returncode:
            continue  # a root commit has no parent to diff against
        folder = scratch / "history" / commit[:12]
        folder.mkdir(parents=True)
        with tarfile.open(fileobj=io.BytesIO(git("archive", f"{commit}^").stdout)) as archive:
            archive.extractall(folder, filter="data")
        patch = git("diff", "-M", f"{commit}^", commit).stdout.decode("utf-8", errors="replace")
        report = check_change(folder, patch=patch, patch_source=commit[:12])
        judged, files = judged + 1, files + len(report.changes.files)
        if report.findings:
            fired += 1
            subject = git("log", "-1", "--format=%s", commit).stdout.decode().strip()
            print(f"  {commit[:8]} {subject[:70]}")
            for finding in report.findings:
                print(f"      {finding.describe()[:160]}")
    print(f"history: {fired} of {judged} commits fired ({files} changed files the guards inspect)\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7, help="samples per timing (median)")
    parser.add_argument("--large-files", type=int, default=10_000, help="files in the scale repository")
    parser.add_argument("--history", action="append", default=[], metavar="RANGE",
                        help="also judge every commit of RANGE (main, main..branch); repeatable")
    args = parser.parse_args()
    subprocess.run([PY, "-m", "compileall", "-q", str(ROOT / "axpipe"), str(ROOT / "plugins")], check=True,
                   stdout=subprocess.DEVNULL)
    cases = load_corpus(CORPUS)
    with tempfile.TemporaryDirectory(prefix="axpipe-bench-guards-") as scratch:
        bench = Workbench(CORPUS, Path(scratch))
        met = accuracy(cases, bench)
        per_diff(cases, bench, args.repeat)
        command(cases, bench, args.repeat)
        large_repository(Path(scratch), args.large_files, args.repeat)
        if args.history:
            history(args.history, Path(scratch))
        shutil.rmtree(Path(scratch) / "cases", ignore_errors=True)
    print("result")
    print(f"  {'met ' if met else 'MISS'}  every cheating diff caught by its class, no honest diff rejected "
          "(git and patch modes)")
    print(f"\n(python {sys.version.split()[0]}, {os.cpu_count()} cores)")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
