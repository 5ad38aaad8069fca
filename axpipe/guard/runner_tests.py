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
(:mod:`axpipe.evidence.env`: bytecode in axpipe's cache, no ``.pytest_cache``); the baseline
is listed in a copy of the base tree's blobs (no filter of the repository runs) in a
temporary folder outside the checkout, with the checkout's ``node_modules`` linked in for a
JavaScript runner. A runner that cannot run, or exits
with a collection error, yields a :class:`Collection` with ``error`` set: nothing is known
from it, and the guards judge from the text and say so.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from axpipe import git
from axpipe.evidence import env as evidence_env
from axpipe.guard.runner_listings import Collection, Runner, listing

__all__ = ["RUNNERS", "Collection", "Runner", "baseline", "collect", "detect"]

RUNNERS = ("pytest", "unittest", "vitest", "jest")

# Written next to the listing, imported by pytest with -p: node ids and whether each
# item's skip, skipif and xfail marks apply in this environment (pytest's own evaluation).


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
    # the environment of every command axpipe runs for its own evidence: no bytecode, no
    # .pytest_cache in the checkout, and none read from it
    env = evidence_env.environment(folder)
    try:
        return listing(runner, where, env)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Collection(runner.name, error=f"{runner.name} could not run: {error}")


@contextmanager
def baseline(root: Path, tree: str) -> Iterator[Path]:
    """The base tree ``tree`` of the repository at ``root``, written to a temporary folder
    outside the checkout (removed afterwards), with the checkout's ``node_modules`` linked
    in so a JavaScript runner finds its packages. Nothing is written in the checkout, and
    the files are git's blobs as stored: no filter or hook of the repository runs."""
    with tempfile.TemporaryDirectory(prefix="axpipe-baseline-") as scratch:
        folder = Path(scratch) / "tree"
        folder.mkdir()
        listed = git.run(root, "ls-tree", "-r", "-z", "--full-tree", tree)
        if listed.returncode != 0:
            raise OSError(f"git ls-tree {tree[:12]} failed: {listed.stderr.decode(errors='replace').strip()}")
        entries = []
        for entry in listed.stdout.split(b"\0"):
            if b"\t" not in entry:
                continue
            head, name = entry.split(b"\t", 1)
            mode, kind, blob = head.decode().split()
            if kind == "blob":
                entries.append((mode, blob, git.decode(name)))
        _write_blobs(root, folder, entries)
        modules = root / "node_modules"
        if modules.is_dir() and not (folder / "node_modules").exists():
            (folder / "node_modules").symlink_to(modules)
        yield folder


def _write_blobs(root: Path, folder: Path, entries: list[tuple[str, str, str]]) -> None:
    """Write each (mode, blob, path) under ``folder`` from one ``git cat-file --batch``."""
    if not entries:
        return
    batch = git.run(root, "cat-file", "--batch", input="".join(f"{blob}\n" for _mode, blob, _path in entries).encode())
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
