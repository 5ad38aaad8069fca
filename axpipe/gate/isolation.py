"""A baseline run that runs the baseline's code (DESIGN §8), or a reason why it may not have.

The baseline's worktree sits inside the workspace (``.axpipe/worktrees/``), and the
project's environment is the workspace's: a run there may still reach the workspace's
files, and then its failures are the change's own, not the baseline's. So each baseline run
of the test phase is **isolated** where the gate can do it:

- **Python**: ``hook/sitecustomize.py`` goes first on ``PYTHONPATH``. In every Python
  process of the run it turns the import paths that name a workspace folder (an editable
  install's ``.pth`` line or import finder, ``PYTHONPATH``, a ``.pth`` file of the user's,
  ``src/`` and flat layouts alike) into the worktree's same folder, and records every
  workspace file the process opens. ``PYTHONPATH`` entries in the workspace are moved the
  same way for programs that are not Python.
- **Node**: Node looks for packages in every ``node_modules`` from the file's folder up,
  so from the worktree it would find the workspace's, and a linked package
  (``node_modules/lib -> ../packages/lib``, npm workspaces) would be the workspace's code.
  Each ``node_modules`` folder the workspace has (untracked, as installed) gets a twin in
  the worktree whose entries point at the same installed packages, except that a link into
  the project's own files points at the worktree's copy, and a linked package the baseline
  did not have is a stub that resolves to nothing, so the look-up stops there.

and **checked** where it cannot: after the run, the files the hook recorded and every path
the run printed or reported (tracebacks, stack traces, file names in the report) are
compared with the files the change touched. A baseline run that read or named one of them
is not a baseline: :func:`workspace_files` lists them, and the gate blames rather than
calls anything pre-existing. A Python runner whose processes never loaded the hook (``python
-I``, a tool that drops ``PYTHONPATH``) is not shown to be isolated either (:attr:`Isolation.python_ran`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from types import TracebackType

from axpipe import git

_HOOK = Path(__file__).with_name("hook") / "sitecustomize.py"
_BYTECODE = re.compile(r"^(?P<folder>(?:.*/)?)__pycache__/(?P<name>[^/.]+)\.[^/]+\.pyc$")


class Isolation:
    """The environment of one baseline run, and what it recorded (``with`` removes the hook)."""

    def __init__(self, top: Path, tree: Path, skip: list[Path]) -> None:
        self.top, self.tree, self.skip = top, tree, skip  # the work tree's top, the worktree's top
        self.folder: Path | None = None

    def __enter__(self) -> Isolation:
        self.folder = Path(tempfile.mkdtemp(prefix="axpipe-baseline-"))
        (self.folder / "hook").mkdir()
        shutil.copyfile(_HOOK, self.folder / "hook" / "sitecustomize.py")
        (self.folder / "record.txt").touch()
        _mirror_node_modules(self.top, self.tree)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def tops(self) -> list[str]:
        """The work tree's top as given and resolved (a path through a symlink is spelled both ways)."""
        return list(dict.fromkeys([str(self.top), os.path.realpath(self.top)]))

    def environment(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` with the hook first on ``PYTHONPATH`` and workspace paths in ``PYTHONPATH``
        and ``NODE_PATH`` moved to the worktree."""
        assert self.folder is not None
        moved = {name: os.pathsep.join(self._moved(part) for part in env[name].split(os.pathsep))
                 for name in ("PYTHONPATH", "NODE_PATH") if env.get(name)}
        python_path = os.pathsep.join(part for part in (str(self.folder / "hook"), moved.get("PYTHONPATH")) if part)
        skip = [str(self.tree), *(str(path) for path in self.skip)]
        skip += [os.path.realpath(path) for path in skip]
        return {**env, **moved, "PYTHONPATH": python_path, "AXPIPE_BASELINE_TOP": os.pathsep.join(self.tops()),
                "AXPIPE_BASELINE_TREE": str(self.tree), "AXPIPE_BASELINE_SKIP": os.pathsep.join(skip),
                "AXPIPE_BASELINE_RECORD": str(self.folder / "record.txt")}

    def _moved(self, part: str) -> str:
        for top in self.tops():
            if part and os.path.isabs(part) and (part == top or part.startswith(top + os.sep)):
                there = os.path.join(self.tree, os.path.relpath(part, top))
                return there if os.path.exists(there) else part
        return part

    def _record(self) -> list[str]:
        assert self.folder is not None
        try:
            return (self.folder / "record.txt").read_text(encoding="utf-8", errors="surrogateescape").splitlines()
        except OSError:
            return []

    @property
    def python_ran(self) -> bool:
        """Whether a Python process of the run loaded the hook."""
        return any(line.startswith("python ") for line in self._record())

    def opened(self) -> list[str]:
        """The workspace files (absolute) the run's Python processes opened."""
        return [line.split(" ", 1)[1] for line in self._record() if line.startswith("open ")]


def workspace_files(isolation: Isolation, root: Path, cwd: Path, changed: set[str], texts: list[str]) -> list[str]:
    """The files the change touched (paths from the project's ``root``) that the baseline run
    read (as the hook recorded) or named in ``texts`` (its output, its report): a run that
    did is not a baseline."""
    spellings = list(dict.fromkeys([(str(isolation.top), str(root)),
                                    (os.path.realpath(isolation.top), os.path.realpath(root))]))
    candidates = isolation.opened()
    for text in texts:
        for top, _ in spellings:
            candidates += [top + match for match in re.findall(re.escape(top) + _PATH, text)]
        # a path printed from the run's folder (vitest: `../../../packages/lib/index.js:2:10`)
        candidates += [os.path.normpath(cwd / match) for match in re.findall(r"(?<![\w./])((?:\.\./)+" + _TAIL + ")",
                                                                            text)]
    skipped = [str(isolation.tree), *(str(path) for path in isolation.skip)]
    skipped += [os.path.realpath(path) for path in skipped]
    found: list[str] = []
    for candidate in candidates:
        path = re.sub(r"(:\d*)+$", "", candidate)  # `calc.py:5:` in a traceback
        if any(path == folder or path.startswith(folder + os.sep) for folder in skipped):
            continue
        for top, base in spellings:
            if path.startswith(top + os.sep):
                relative = _source_of(os.path.relpath(path, base))
                if _INSTALLED & set(Path(relative).parts):
                    break  # an environment inside the project (an unignored .venv): installed, not the change
                if relative in changed and relative not in found:
                    found.append(relative)
                break
    return found


_INSTALLED = {"site-packages", "dist-packages", "node_modules"}
_TAIL = r"[^\s'\"`,;()\[\]<>|]+"  # the rest of a path as a traceback or a report shows it, up to a delimiter
_PATH = "(/" + _TAIL + ")"


def _source_of(relative: str) -> str:
    """``pkg/__pycache__/mod.cpython-311.pyc`` is ``pkg/mod.py``: an import that found valid
    bytecode reads it instead of the source."""
    match = _BYTECODE.match(relative)
    return f"{match['folder']}{match['name']}.py" if match else relative


# -- Node: node_modules twins in the worktree -------------------------------------------------


def _mirror_node_modules(top: Path, tree: Path) -> None:
    """A ``node_modules`` in the worktree for each one the workspace has installed."""
    listed = git.run(top, "ls-files", "--others", "--directory", "-z")
    if listed.returncode != 0:
        return
    real_top = os.path.realpath(top)
    for entry in listed.stdout.split(b"\0"):
        relative = git.decode(entry).rstrip("/")
        if os.path.basename(relative) != "node_modules" or relative.startswith(".axpipe"):
            continue
        source, twin = top / relative, tree / relative
        if not source.is_dir() or not twin.parent.is_dir() or os.path.lexists(twin):
            continue
        twin.mkdir()
        for item in sorted(source.iterdir()):
            if item.name.startswith("@") and item.is_dir() and not item.is_symlink():
                (twin / item.name).mkdir()
                for scoped in sorted(item.iterdir()):
                    _link(scoped, twin / item.name / scoped.name, real_top, tree, f"{item.name}/{scoped.name}")
            elif item.name == ".bin" and item.is_dir():
                (twin / ".bin").mkdir()
                for program in sorted(item.iterdir()):
                    _link(program, twin / ".bin" / program.name, real_top, tree, None)
            elif not item.name.startswith("."):  # caches (.vite, .cache) start afresh in the worktree
                _link(item, twin / item.name, real_top, tree, item.name)


def _link(item: Path, twin: Path, real_top: str, tree: Path, package: str | None) -> None:
    """``twin`` pointing where ``item`` resolves to, or to the worktree's copy of a file of the
    project's own (a linked package); a stub for a linked package the baseline lacks."""
    real = os.path.realpath(item)
    relative = os.path.relpath(real, real_top)
    own = not relative.startswith("..") and "node_modules" not in Path(relative).parts
    if not own:
        twin.symlink_to(real)
    elif os.path.lexists(tree / relative):
        twin.symlink_to(tree / relative)
    elif package is not None:  # the look-up must stop here rather than walk up into the workspace
        twin.mkdir()
        (twin / "package.json").write_text(json.dumps({"name": package, "exports": {},
                                                       "description": "not at the baseline (axpipe gate)"}))
