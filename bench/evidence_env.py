"""What the evidence environment costs a check, as ratios against the same command run
the way a user runs it, in the same run.

    .venv/bin/python bench/evidence_env.py [--modules 300] [--repeat 21]

It generates a committed git repository with MODULES small modules and a test file
importing them all, then measures, alternating each sample with its baseline:

- ``python -c 'import the modules'`` as a check runs it: ``evidence_env.variables`` (the
  racy scan of the cached entries included) then the command with those variables, the
  cache outside the checkout warm, against the same command in the user's environment
  with its ``__pycache__/`` in the checkout warm — goal: within 1.1x;
- ``python -m pytest -q`` on the test file, the same two ways — goal: within 1.1x;
- ``evidence_env.variables`` alone (a git call and the scan of MODULES cached entries);
- once each, cold: the first evidence run with an empty cache (the standard library and
  pytest are compiled into it) against the first plain run (only the project's modules
  are compiled; the installed ones carry bytecode), as one figure per machine, not per run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from timing import compare, median_ms  # noqa: E402  (bench/timing.py)

from axpipe.evidence import env as evidence_env  # noqa: E402

PLAIN = {key: value for key, value in os.environ.items()
         if key not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "PYTEST_ADDOPTS")}


def make_project(root: Path, modules: int) -> None:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    for number in range(modules):
        (root / "pkg" / f"m{number}.py").write_text(
            "import json\n\n\n" + "".join(f"def f{i}(x):\n    return json.dumps([x, {i}])\n\n\n" for i in range(20)))
    imports = "".join(f"import pkg.m{number}\n" for number in range(modules))
    (root / "test_all.py").write_text(imports + "\n\ndef test_all():\n    assert pkg.m0.f1(1) == '[1, 1]'\n")
    (root / "pytest.ini").write_text("[pytest]\naddopts = -p no:hydra_pytest -p no:syrupy -p no:cacheprovider\n")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=root, check=True)


def run(command: list[str], root: Path, evidence: bool) -> None:
    env = {**PLAIN, **evidence_env.variables(root, PLAIN)} if evidence else PLAIN
    completed = subprocess.run(command, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if completed.returncode != 0:
        raise SystemExit(f"{command} failed: {completed.stderr.decode()[-500:]}")


def once(command: list[str], root: Path, evidence: bool) -> float:
    started = time.perf_counter()
    run(command, root, evidence)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="axpipe-bench-evidence-") as scratch:
        os.environ["XDG_CACHE_HOME"] = str(Path(scratch) / "cache")  # an empty evidence cache
        root = Path(scratch) / "project"
        make_project(root, args.modules)
        importing = [sys.executable, "-c", "import test_all"]
        pytest = [sys.executable, "-m", "pytest", "-q", "test_all.py"]
        cold_ours = once(pytest, root, evidence=True)
        cold_theirs = once(pytest, root, evidence=False)
        print(f"{args.modules} modules; python {sys.version.split()[0]}, {os.cpu_count()} cores, "
              f"median of {args.repeat}")
        for label, command in (("import", importing), ("pytest", pytest)):
            found = compare(lambda command=command: run(command, root, True),
                            lambda command=command: run(command, root, False), args.repeat)
            print(f"{label:<8} evidence {found.ours:7.1f} ms vs user's {found.theirs:7.1f} ms: "
                  f"ratio {found.ratio:.2f} [{found.ratio_low:.2f}, {found.ratio_high:.2f}] "
                  f"(best {found.best_ratio:.2f}); goal <= 1.1: {found.verdict(1.1)}")
        scan = median_ms(lambda: evidence_env.variables(root, PLAIN), args.repeat)
        print(f"variables() alone: {scan:.1f} ms (a git call and the racy scan of {args.modules + 2} entries)")
        print(f"cold pytest run: evidence {cold_ours:.0f} ms (empty cache) vs user's {cold_theirs:.0f} ms "
              "(no __pycache__ yet)")


if __name__ == "__main__":
    main()
