"""Fingerprint speed on a large tree, as ratios against git on the same tree in the same run.

    .venv/bin/python bench/fingerprint.py [--files 20000] [--mib 128] [--repeat 5]
                                          [--small 20] [--small-repeat 101]

It generates a committed git repository of FILES files holding MIB MiB in total (plus a
few modified and untracked files), then measures, alternating each sample with its
baseline:

- the full fingerprint (no stat cache: every byte read and hashed) against
  ``git ls-files -z | git hash-object --stdin-paths`` (git reading and hashing the same files)
  — goal: no slower (ratio <= 1);
- the repeated fingerprint of the unchanged tree (stat cache warm) against
  ``git status --porcelain`` — goal: within 2x;
- both against ``git add -A --dry-run`` + ``git ls-files -s`` for reference;
- on a small tree (SMALL files, as a tiny recipe's project), the repeated fingerprint
  against ``git status --porcelain`` started the same way (no shell), SMALL_REPEAT pairs:
  no target, it shows what the four git processes of a fingerprint cost.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from timing import compare, paired, spawn  # noqa: E402  (bench/timing.py)

from axpipe.goal import fingerprint  # noqa: E402


def generate(root: Path, files: int, total_bytes: int) -> None:
    rng = random.Random(7)
    average = total_bytes // files
    sizes = [rng.randint(average // 2, average * 3 // 2) for _ in range(files)]
    scale = total_bytes / sum(sizes)
    sizes = [max(1, int(size * scale)) for size in sizes]
    sizes[-1] += total_bytes - sum(sizes)  # exactly total_bytes in all
    for index, size in enumerate(sizes):
        folder = root / f"pkg{index % 200:03d}" / f"mod{index % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{index:05d}.txt").write_bytes(os.urandom(size))
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "b@x"}
    for command in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "tree"]):
        subprocess.run(command, cwd=root, check=True, env=env)
    old = time.time() - 3600
    for path in root.rglob("*.txt"):
        os.utime(path, (old, old))
    for index in range(100):  # modified tracked files
        path = next((root / f"pkg{index:03d}" / "mod0").glob("*.txt"))
        path.write_bytes(path.read_bytes()[:-1] + b"!")
        os.utime(path, (old, old))
    for index in range(200):  # untracked files
        path = root / "new" / f"u{index:03d}.txt"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(os.urandom(512))
        os.utime(path, (old, old))


def small_tree(root: Path, files: int) -> None:
    """A committed repository of ``files`` small source files, all older than any cache."""
    (root / "src").mkdir(parents=True)
    for index in range(files):
        (root / "src" / f"mod{index}.py").write_text(f"value = {index}\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "b@x"}
    for command in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "tree"]):
        subprocess.run(command, cwd=root, check=True, env=env)
    old = time.time() - 3600
    for path in (root / "src").iterdir():
        os.utime(path, (old, old))


def shell(command: str, cwd: Path) -> Callable[[], object]:
    return lambda: subprocess.run(command, shell=True, cwd=cwd, stdout=subprocess.DEVNULL, check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--mib", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--small", type=int, default=20)
    parser.add_argument("--small-repeat", type=int, default=101)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="axpipe-fp-bench-"))
    try:
        started = time.perf_counter()
        # 200 of the files are untracked: the tree holds exactly FILES entries, the limit's worth.
        generate(scratch, args.files - 200, args.mib * 1024 * 1024 - 200 * 512)
        print(f"generated {args.files} files, {args.mib} MiB, 100 modified and 200 untracked "
              f"({time.perf_counter() - started:.1f} s)")

        def full() -> object:
            result = fingerprint.compute(scratch, ["."], use_cache=False)
            assert result.fresh, result.reasons
            return result

        def cached() -> object:
            result = fingerprint.compute(scratch, ["."])
            assert result.fresh and result.hashed == 0, (result.reasons, result.hashed)
            return result

        fingerprint.compute(scratch, ["."])  # warm the stat cache
        rows = []
        hash_files = shell("git ls-files | git hash-object --stdin-paths > /dev/null", scratch)
        git_listing = shell("git add -A --dry-run > /dev/null && git ls-files -s > /dev/null", scratch)
        status = shell("git status --porcelain > /dev/null", scratch)
        ours, theirs, ratio = paired(full, hash_files, args.repeat)
        rows.append(("full fingerprint", "git ls-files | git hash-object --stdin-paths", ours, theirs, ratio,
                     ratio <= 1.0, "<= 1x"))
        ours, theirs, ratio = paired(cached, status, args.repeat)
        rows.append(("cached fingerprint", "git status --porcelain", ours, theirs, ratio, ratio <= 2.0, "<= 2x"))
        ours, theirs, ratio = paired(full, git_listing, args.repeat)
        rows.append(("full fingerprint", "git add -A --dry-run + git ls-files -s", ours, theirs, ratio, None, ""))
        ours, theirs, ratio = paired(cached, git_listing, args.repeat)
        rows.append(("cached fingerprint", "git add -A --dry-run + git ls-files -s", ours, theirs, ratio, None, ""))
        for label, baseline, ours, theirs, ratio, ok, target in rows:
            verdict = "" if ok is None else ("  met " if ok else "  MISS") + f" (target {target})"
            print(f"{label:<20} {ours:8.1f} ms vs {baseline:<46} {theirs:8.1f} ms: "
                  f"{ratio:5.2f}x{verdict}")
        print(f"(python {sys.version.split()[0]}, {os.cpu_count()} cores, median of {args.repeat})")
        small = scratch / "small"
        small_tree(small, args.small)

        def small_cached() -> object:
            result = fingerprint.compute(small, ["src"])
            assert result.fresh and result.hashed == 0, (result.reasons, result.hashed)
            return result

        fingerprint.compute(small, ["src"])
        found = compare(small_cached, spawn("git", "status", "--porcelain", cwd=small), args.small_repeat)
        baseline = f"git status --porcelain ({args.small} files)"
        print(f"{'small cached':<20} {found.ours:8.2f} ms vs {baseline:<46} "
              f"{found.theirs:8.2f} ms: {found.ratio:5.2f}x [{found.ratio_low:.2f}-{found.ratio_high:.2f}], "
              f"fastest {found.best_ratio:.2f}x (median of {args.small_repeat})")
        return 0 if all(ok is not False for *_, ok, _ in rows) else 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
