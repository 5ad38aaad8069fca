"""Which Python runs the project's tests when axpipe runs them by name (receipt verification).

axpipe may live in a venv of its own or be installed with pipx, where neither pytest nor
the project's dependencies are installed: named tests run with the project's interpreter,
the first of

1. the one the user names (``axpipe receipts verify --python``, the recipe's
   ``receipts.python``): a path, relative to the project folder, or a program on ``PATH``;
2. the project's venv: ``.venv/bin/python``, then ``venv/bin/python``, in the project
   folder, then at the top of its work tree (a monorepo's venv);
3. ``python3``, else ``python``, on ``PATH`` (an activated venv comes first there).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from axpipe import workspace
from axpipe.errors import InputError
from axpipe.records import record

VENVS = (".venv", "venv")
ON_PATH = ("python3", "python")


@record(frozen=True)
class Interpreter:
    """An interpreter for the project's tests, and why it was chosen (for messages)."""

    path: str
    chosen_by: str

    def describe(self) -> str:
        return f"{self.path} ({self.chosen_by})"


class InterpreterNotFound(InputError):
    """The named interpreter does not exist, or no interpreter was found (exit 2)."""


def find(root: Path, named: str | None = None, *, named_by: str = "--python") -> Interpreter:
    """The interpreter for the tests of the project at ``root`` (see the module's order).

    ``named`` is the user's choice and ``named_by`` where it was given, for the message when
    it names nothing runnable: a named interpreter that is missing is never replaced."""
    if named is not None:
        found = _named(root, named)
        if found is None:
            raise InterpreterNotFound(f"{named_by}: {named!r} is not a Python interpreter that can be run (a path, "
                                      "relative to the project folder, or a program on PATH)")
        return Interpreter(found, named_by)
    folders = list(dict.fromkeys([root, workspace.git_top(root) or root]))
    for folder in folders:
        for venv in VENVS:
            candidate = folder / venv / "bin" / "python"
            if _runnable(candidate):
                shown = venv if folder == root else os.path.relpath(folder / venv, root)
                return Interpreter(str(candidate), f"the project's venv {shown}")
    for program in ON_PATH:
        path = shutil.which(program)
        if path is not None:
            return Interpreter(path, f"{program} on PATH")
    raise InterpreterNotFound(f"no Python for the project's tests: no {' or '.join(f'{v}/bin/python' for v in VENVS)} "
                              f"in {root}, and no {' or '.join(ON_PATH)} on PATH; name one with --python "
                              "(receipts.python in a recipe)")


def _named(root: Path, named: str) -> str | None:
    if os.sep not in named:
        return shutil.which(named)
    path = Path(os.path.expanduser(named))
    path = path if path.is_absolute() else root / path
    return str(path) if _runnable(path) else None


def _runnable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)
