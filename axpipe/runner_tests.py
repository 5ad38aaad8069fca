"""The tests a project's runner collects: test identity from the runner, not from text.

The guards read the change's text; the runner decides what runs. A test renamed out of
``python_files``, a file a configuration now ignores, a test shadowed by a redefinition, a
``skipif`` whose condition now holds: the runner sees each for what it is. Comparing what
it collects at the baseline and after the change answers "is this test still run?" where
the text can only guess; it also tells a test renamed, parametrised or split (still
collected) from one deleted.

Runners, chosen from the commands the success condition runs (a repair's target, ``axpipe
guard --command``) or named (``--runner``):

- ``pytest``: ``--collect-only`` with a small plugin that writes each item's node id and
  whether its ``skip``/``skipif``/``xfail`` marks apply here (pytest's own evaluation);
- ``unittest``: the default discovery (``test*.py``) through ``unittest.TestLoader``;
- ``vitest``: ``vitest list --json`` (names, not statuses);
- ``jest``: ``jest --listTests --json`` (test files only).

Listing leaves the checkout as it was: it runs in the evidence environment
(:mod:`axpipe.evidence_env`: bytecode in axpipe's cache, no ``.pytest_cache``); the baseline
is listed in a copy of the base tree's blobs (no filter of the repository runs) in a
temporary folder outside the checkout, with the checkout's ``node_modules`` linked in for a
JavaScript runner. A runner that cannot run, or exits
with a collection error, yields a :class:`Collection` with ``error`` set: nothing is known
from it, and the guards judge from the text and say so.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import field
from pathlib import Path

from axpipe.records import record

TIMEOUT = 120.0   # seconds a listing may take
RUNNERS = ("pytest", "unittest", "vitest", "jest")

# Written next to the listing, imported by pytest with -p: node ids and whether each
# item's skip, skipif and xfail marks apply in this environment (pytest's own evaluation).
_PYTEST_PLUGIN = '''
import json, os


def pytest_collection_finish(session):
    try:
        from _pytest.skipping import evaluate_skip_marks, evaluate_xfail_marks
    except ImportError:
        evaluate_skip_marks = evaluate_xfail_marks = None
    found = []
    for item in session.items:
        status = "run"
        try:
            if evaluate_skip_marks is not None and evaluate_skip_marks(item):
                status = "skip"
            elif evaluate_xfail_marks is not None and evaluate_xfail_marks(item):
                status = "xfail"
        except Exception:
            status = "unknown"
        found.append([item.nodeid, status, str(item.path) if hasattr(item, "path") else str(item.fspath)])
    with open(os.environ["AXPIPE_COLLECTED"], "w", encoding="utf-8") as out:
        json.dump({"items": found, "errors": len(session.testsfailed and [1] or [])}, out)
'''

_UNITTEST_LISTING = '''
import json, sys, unittest

def walk(suite):
    for test in suite:
        if isinstance(test, unittest.TestSuite):
            yield from walk(test)
        else:
            yield test

suite = unittest.TestLoader().discover(".")
found = []
errors = 0
for test in walk(suite):
    name = test.id()
    if name.startswith("unittest.loader._FailedTest"):
        errors += 1
        continue
    method = getattr(test, test._testMethodName, None) if hasattr(test, "_testMethodName") else None
    skipped = getattr(type(test), "__unittest_skip__", False) or getattr(method, "__unittest_skip__", False)
    xfail = getattr(method, "__unittest_expecting_failure__", False)
    found.append([name, "skip" if skipped else "xfail" if xfail else "run", ""])
json.dump({"items": found, "errors": errors}, sys.stdout)
'''


@record
class Runner:
    """A runner and how to start it: the Python interpreter for pytest and unittest, the
    program's command for a JavaScript runner."""

    name: str
    program: list[str]


@record
class Collection:
    """What one runner collected in one folder: test id -> ``run``, ``skip``, ``xfail`` (or
    ``listed`` when the runner does not say), with each test's file (relative to the folder)."""

    runner: str
    tests: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)   # test id -> its file
    error: str | None = None

    @property
    def known(self) -> bool:
        return self.error is None

    def names(self) -> dict[tuple[str, str], str]:
        """``(file, name)`` -> status, with the name as the guards spell it
        (``TestCalc.test_add``, ``cart > adds``) and parameters dropped (a case is its test's)."""
        found: dict[tuple[str, str], str] = {}
        for test, status in self.tests.items():
            key = (self.files.get(test, ""), _guard_name(self.runner, test))
            if found.get(key) in (None, "skip", "xfail") or status == "run":
                found[key] = status if found.get(key) != "run" else "run"
        return found


def _guard_name(runner: str, test: str) -> str:
    if runner == "pytest":
        name = test.split("::", 1)[1] if "::" in test else test
        return name.split("[", 1)[0].replace("::", ".")
    if runner == "unittest":
        parts = test.split(".")
        return ".".join(parts[-2:]) if len(parts) >= 2 else test
    return test


def detect(root: Path, commands: Sequence[str], named: str | None = None) -> Runner | None:
    """The runner ``named``, or the first one the condition's ``commands`` run; None when
    none is known. A ``pytest`` console script is run by its own interpreter (its shebang),
    so the listing imports what the tests import."""
    for command in commands:
        try:
            words = shlex.split(command)
        except ValueError:
            continue
        words = [word for word in words if "=" not in word or word.startswith("-")]
        while words and words[0] in ("env", "exec", "time", "uv", "poetry", "pdm", "hatch", "run", "npx", "pnpm",
                                     "yarn", "bunx"):
            words = words[1:]
        if not words:
            continue
        program = Path(words[0]).name
        if program.startswith("python") and words[1:3] in (["-m", "pytest"], ["-m", "unittest"]):
            found = Runner(words[2], [words[0]])
        elif program in ("pytest", "py.test"):
            found = Runner("pytest", _interpreter(words[0], root))
        elif program in ("vitest", "jest"):
            found = Runner(program, [words[0]] if "/" in words[0] else _node_program(root, program))
        else:
            continue
        if named is None or named == found.name:
            return found
    if named in ("pytest", "unittest"):
        import sys

        return Runner(named, [sys.executable])
    if named in ("vitest", "jest"):
        return Runner(named, _node_program(root, named))
    return None


def _interpreter(script: str, root: Path) -> list[str]:
    """The interpreter a console script starts with (``#!/.../python``), else this one."""
    import sys

    path = shutil.which(script, path=os.pathsep.join([str(root), os.environ.get("PATH", "")])) or script
    try:
        with open(path, "rb") as handle:
            first = handle.readline().decode(errors="replace").strip()
    except OSError:
        return [sys.executable]
    if first.startswith("#!") and "python" in first:
        return shlex.split(first[2:])[:1]
    return [sys.executable]


def _node_program(root: Path, name: str) -> list[str]:
    local = root / "node_modules" / ".bin" / name
    return [str(local)] if local.exists() else [name]


def collect(runner: Runner, folder: Path, *, project: str = "") -> Collection:
    """What ``runner`` collects in ``folder`` (the project's folder ``project`` below it)."""
    where = folder / project if project else folder
    from axpipe import evidence_env

    # the environment of every command axpipe runs for its own evidence: no bytecode, no
    # .pytest_cache in the checkout, and none read from it
    env = evidence_env.environment(folder)
    try:
        if runner.name == "pytest":
            return _pytest(runner, where, env)
        if runner.name == "unittest":
            return _listing(runner, [*runner.program, "-c", _UNITTEST_LISTING], where, env)
        if runner.name == "vitest":
            return _vitest(runner, where, env)
        if runner.name == "jest":
            return _jest(runner, where, env)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Collection(runner.name, error=f"{runner.name} could not run: {error}")
    return Collection(runner.name, error=f"no listing for the runner {runner.name}")


def _pytest(runner: Runner, where: Path, env: dict[str, str]) -> Collection:
    with tempfile.TemporaryDirectory(prefix="axpipe-collect-") as scratch:
        (Path(scratch) / "axpipe_collect_plugin.py").write_text(_PYTEST_PLUGIN, encoding="utf-8")
        output = Path(scratch) / "collected.json"
        python_path = os.pathsep.join(part for part in (scratch, env.get("PYTHONPATH", "")) if part)
        completed = subprocess.run(
            [*runner.program, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-p",
             "axpipe_collect_plugin"], cwd=where, capture_output=True, timeout=TIMEOUT,
            env={**env, "PYTHONPATH": python_path, "AXPIPE_COLLECTED": str(output)})
        if completed.returncode not in (0, 5) or not output.exists():
            return Collection("pytest", error=_failure("pytest", completed))
        data = json.loads(output.read_text(encoding="utf-8"))
    collection = Collection("pytest")
    for nodeid, status, path in data["items"]:
        collection.tests[nodeid] = status
        collection.files[nodeid] = _relative(path, where) if path else nodeid.split("::", 1)[0]
    return collection


def _listing(runner: Runner, argv: list[str], where: Path, env: dict[str, str]) -> Collection:
    completed = subprocess.run(argv, cwd=where, capture_output=True, timeout=TIMEOUT, env=env)
    try:
        data = json.loads(completed.stdout)
    except ValueError:
        return Collection(runner.name, error=_failure(runner.name, completed))
    if completed.returncode != 0 or data.get("errors"):
        return Collection(runner.name, error=_failure(runner.name, completed) if completed.returncode else
                          f"{runner.name} could not import {data['errors']} test module(s)")
    collection = Collection(runner.name)
    for name, status, _path in data["items"]:
        collection.tests[name] = status
        module = name.rsplit(".", 2)[0] if name.count(".") >= 2 else name
        collection.files[name] = module.replace(".", "/") + ".py"
    return collection


def _vitest(runner: Runner, where: Path, env: dict[str, str]) -> Collection:
    completed = subprocess.run([*runner.program, "list", "--json"], cwd=where, capture_output=True, timeout=TIMEOUT,
                               env={**env, "CI": "1", "FORCE_COLOR": "0"})
    try:
        items = json.loads(completed.stdout)
    except ValueError:
        return Collection("vitest", error=_failure("vitest", completed))
    if completed.returncode != 0:
        return Collection("vitest", error=_failure("vitest", completed))
    collection = Collection("vitest")
    for item in items:
        name = str(item.get("name", ""))
        file = _relative(str(item.get("file", "")), where)
        test = f"{file} > {name}"
        collection.tests[test] = "listed"
        collection.files[test] = file
    return collection


def _jest(runner: Runner, where: Path, env: dict[str, str]) -> Collection:
    completed = subprocess.run([*runner.program, "--listTests", "--json"], cwd=where, capture_output=True,
                               timeout=TIMEOUT, env={**env, "CI": "1"})
    try:
        files = json.loads(completed.stdout)
    except ValueError:
        return Collection("jest", error=_failure("jest", completed))
    collection = Collection("jest")
    for path in files:
        file = _relative(str(path), where)
        collection.tests[file] = "listed"
        collection.files[file] = file
    return collection


def _relative(path: str, where: Path) -> str:
    try:
        return Path(path).resolve().relative_to(where.resolve()).as_posix()
    except ValueError:
        return path


def _failure(runner: str, completed: subprocess.CompletedProcess[bytes]) -> str:
    lines = [line for line in (completed.stdout + completed.stderr).decode(errors="replace").splitlines()
             if line.strip()]
    tail = lines[-1].strip() if lines else f"exit code {completed.returncode}"
    return f"{runner} could not list the tests (exit code {completed.returncode}: {tail[:200]})"


@contextmanager
def baseline(root: Path, tree: str) -> Iterator[Path]:
    """The base tree ``tree`` of the repository at ``root``, written to a temporary folder
    outside the checkout (removed afterwards), with the checkout's ``node_modules`` linked
    in so a JavaScript runner finds its packages. Nothing is written in the checkout, and
    the files are git's blobs as stored: no filter or hook of the repository runs."""
    with tempfile.TemporaryDirectory(prefix="axpipe-baseline-") as scratch:
        folder = Path(scratch) / "tree"
        folder.mkdir()
        listed = subprocess.run(["git", "ls-tree", "-r", "-z", "--full-tree", tree], cwd=root, capture_output=True)
        if listed.returncode != 0:
            raise OSError(f"git ls-tree {tree[:12]} failed: {listed.stderr.decode(errors='replace').strip()}")
        entries = []
        for entry in listed.stdout.split(b"\0"):
            if b"\t" not in entry:
                continue
            head, name = entry.split(b"\t", 1)
            mode, kind, blob = head.decode().split()
            if kind == "blob":
                entries.append((mode, blob, os.fsdecode(name)))
        _write_blobs(root, folder, entries)
        modules = root / "node_modules"
        if modules.is_dir() and not (folder / "node_modules").exists():
            (folder / "node_modules").symlink_to(modules)
        yield folder


def _write_blobs(root: Path, folder: Path, entries: list[tuple[str, str, str]]) -> None:
    """Write each (mode, blob, path) under ``folder`` from one ``git cat-file --batch``."""
    if not entries:
        return
    batch = subprocess.run(["git", "cat-file", "--batch"], cwd=root, capture_output=True,
                           input="".join(f"{blob}\n" for _mode, blob, _path in entries).encode())
    output, position = batch.stdout, 0
    for mode, _blob, path in entries:
        header_end = output.index(b"\n", position)
        size = int(output[position:header_end].split()[2])
        data = output[header_end + 1:header_end + 1 + size]
        position = header_end + 1 + size + 1
        target = folder / path
        if not target.resolve().is_relative_to(folder.resolve()):
            continue  # a path that leaves the folder is not written
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            target.symlink_to(os.fsdecode(data))
            continue
        target.write_bytes(data)
        if mode == "100755":
            target.chmod(0o755)
