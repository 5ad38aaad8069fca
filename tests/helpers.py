"""Helpers shared by the tests (importable as ``helpers``; fixtures live in conftest)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
RESOURCES = Path(__file__).resolve().parent / "resources"
AXPIPE = [sys.executable, "-m", "axpipe"]

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "axpipe tests", "GIT_AUTHOR_EMAIL": "tests@axpipe.invalid",
    "GIT_COMMITTER_NAME": "axpipe tests", "GIT_COMMITTER_EMAIL": "tests@axpipe.invalid",
}


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` and return its stdout; fails the test on a non-zero exit."""
    completed = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                               env={**os.environ, **GIT_IDENTITY})
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def evidence_bytecode(folder: Path, module: str) -> list[Path]:
    """The bytecode of ``folder``/``module``.py that axpipe's evidence runs cached, outside
    the checkout (axpipe.evidence.bytecode.evidence_prefix, under this test's cache folder)."""
    from axpipe.evidence import bytecode

    mirror = bytecode.evidence_prefix() / str(folder.resolve()).lstrip(os.sep)
    return sorted(mirror.glob(f"{module}.*.pyc"))


def backdate(path: Path, seconds: float = 60) -> None:
    """Make ``path`` look last modified ``seconds`` ago: bytecode compiled from it now is then
    not "racy" (axpipe.evidence.bytecode.forget_racy keeps it), as on a project edited long before."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def project_venv(folder: Path, *, with_pytest: bool = True, modules: dict[str, str] | None = None) -> Path:
    """A real venv at ``folder`` (no pip: quick to make), as a project keeps its own: its
    site-packages holds ``modules`` (name → source) and, ``with_pytest``, reaches the pytest
    these tests run with (a ``.pth`` file). Returns its ``bin/python``."""
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    found = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                           check=True, capture_output=True, text=True)
    site = Path(found.stdout.strip())
    if with_pytest:
        (site / "axpipe-tests.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    for name, source in (modules or {}).items():
        (site / name).write_text(source)
    return python


@dataclass
class Completed:
    """What a CLI call returned."""

    exit_code: int
    stdout: str
    stderr: str


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120) -> Completed:
    """``python -m axpipe ARGS`` as a subprocess."""
    completed = subprocess.run([*AXPIPE, *args], cwd=cwd, capture_output=True, text=True,
                               env={**os.environ, **(env or {})}, timeout=timeout)
    return Completed(completed.returncode, completed.stdout, completed.stderr)


T = TypeVar("T")


def wait_for(condition: Callable[[], T | None], *, timeout: float = 60.0, what: str = "the condition") -> T:
    """Poll ``condition`` until it returns something truthy and return that; fail the test
    after ``timeout`` seconds (generous: it only matters when the test is failing)."""
    give_up = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > give_up:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def command_line(pid: int) -> str:
    """The command line of process ``pid`` (empty once it has ended)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def tree(path: Path) -> list[str]:
    """Every file and folder under ``path`` except ``.git`` internals, for before/after checks."""
    return sorted(str(item.relative_to(path)) for item in path.rglob("*") if ".git" not in item.parts)


def interrupts_as_default() -> None:
    """``preexec_fn`` for a child a test interrupts: SIGINT and SIGHUP get their default
    meaning there. Children inherit an ignored signal: pytest-xdist's workers ignore SIGINT
    and ``nohup pytest`` ignores SIGHUP, and axpipe leaves an ignored signal ignored (as
    ``nohup`` and a shell's background jobs ask), so the test would wait in vain."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


# The body of a recipe with one goal and one passing check (`echo hello`).
HELLO_GOAL = """
goal:
  objective: "say hello"
  acceptance:
    AC1: {tag: closes, text: "it says hello", check: greet}
  checks:
    - {id: greet, acceptance: [AC1], command: "echo hello"}
"""


# A recipe with a free variable (`batch`) for sweeps: `-m recipe=batch batch=a,b`. Each job's
# check leaves `.axpipe/batch-<batch>.txt`, so a test can see which jobs ran.
BATCH_RECIPE = """
name: batch
description: A recipe with a free variable, fanned out with -m.
batch: invoices
goal:
  objective: "migrate ${batch}"
  acceptance:
    AC1: {tag: closes, text: "batch ${batch} migrated", check: migrated}
  checks:
    - {id: migrated, acceptance: [AC1], command: "echo migrating ${batch} > .axpipe/batch-${batch}.txt"}
"""


def hello_library(repo: Path, header: str = "name: hello\n") -> Path:
    """``repo`` with its own recipe library (``axpipe.yaml``'s ``recipe_paths``) holding the
    recipe ``hello``: ``header`` then :data:`HELLO_GOAL`."""
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    write_recipe(repo / "recipes", "hello", header + HELLO_GOAL.lstrip("\n"))
    return repo


def write_recipe(folder: Path, name: str, body: str) -> Path:
    """Write ``<folder>/<name>.yaml`` with the ``# @package _global_`` header."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text("# @package _global_\n" + body.lstrip("\n"))
    return path


def edit_after_git_answers(monkeypatch: Any, path: Path, text: str) -> None:
    """Make the fingerprint's next git questions be followed, before any file is read, by
    ``path`` getting ``text``: a write racing git (git said "clean", the bytes then changed).
    ``monkeypatch.undo()`` ends it."""
    from axpipe.goal import fingerprint

    asking = fingerprint._git_all

    def then_edit(root: Path, commands: list[tuple[list[str], bool]]) -> list[bytes]:
        answers = asking(root, commands)
        path.write_text(text)
        return answers

    monkeypatch.setattr(fingerprint, "_git_all", then_edit)
