"""How each runner lists the tests it collects, as a :class:`Collection` (see
:mod:`axpipe.guard.runner_tests`, which chooses the runner and the folder).

- pytest: ``--collect-only`` with a small plugin that writes each item's node id and
  whether its ``skip``/``skipif``/``xfail`` marks apply here (pytest's own evaluation);
- unittest: the default discovery through ``unittest.TestLoader``, skips read from the
  ``__unittest_skip__`` marks;
- vitest: ``vitest list --json`` (names, not statuses); jest: ``jest --listTests --json``
  (files only).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import field
from pathlib import Path

from axpipe.records import record

TIMEOUT = 120.0   # seconds a listing may take

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
    if runner == "vitest":  # "<file> > <describe> > <test>": the file is the key's other half
        return test.split(" > ", 1)[1] if " > " in test else test
    return test


def listing(runner: Runner, where: Path, env: dict[str, str]) -> Collection:
    """What ``runner`` collects in ``where``, run with ``env``."""
    if runner.name == "pytest":
        return _pytest(runner, where, env)
    if runner.name == "unittest":
        return _listing(runner, [*runner.program, "-c", _UNITTEST_LISTING], where, env)
    if runner.name == "vitest":
        return _vitest(runner, where, env)
    if runner.name == "jest":
        return _jest(runner, where, env)
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
