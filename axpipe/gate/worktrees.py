"""Throwaway git worktrees under ``.axpipe/worktrees/``, always removed.

The gate re-runs failing tests (and type checks) at the baseline commit in a worktree of
its own, so the user's checkout is never touched. The worktree is created on first use and
removed by :meth:`Throwaway.discard` or when the ``with`` block ends, however it ends:
normally, by an exception, by Ctrl-C (the process runner has already killed the command's
process group by then), or by SIGTERM (turned into an interrupt while a worktree exists,
when nothing else handles SIGTERM). A process killed outright (SIGKILL) cannot clean up:
the next gate removes worktrees whose owner is gone (the owner's pid is in the folder's
name).

Git's environment variables are sorted by what they describe (:func:`outside_environment`,
:func:`repository_environment`). Git exports ``GIT_INDEX_FILE`` to a hook: inside a
pre-commit hook it names the index being committed, and a ``git worktree add`` that inherits
it writes the baseline's tree into the user's commit; so no command for or in the worktree
gets it. A command run *in* the worktree gets none of git's repository-local variables
(``git rev-parse --local-env-vars``: ``GIT_DIR``, ``GIT_WORK_TREE``, ...): they name the
user's checkout, and the worktree's own ``.git`` file names its repository (git strips the
same variables before it works in a submodule). ``git worktree add/remove/prune`` run in the
user's checkout keep a ``GIT_DIR`` or ``GIT_WORK_TREE`` the user set: without them a
repository kept apart from its work tree is not found. ``git -c`` settings
(``GIT_CONFIG_PARAMETERS``, ``GIT_CONFIG_COUNT`` with its ``GIT_CONFIG_KEY_<n>`` and
``GIT_CONFIG_VALUE_<n>``) are kept everywhere, as git keeps them for a submodule: the user
asked for them for the whole command, and the baseline must run under the same settings as
the change.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import threading
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from axpipe import git
from axpipe.errors import AxpipeError
from axpipe.process import pid_alive
from axpipe.workspace import state_dir

_OWNED = re.compile(r"^(?P<purpose>[a-z]+)-(?P<pid>\d+)-[0-9a-f]+$")


class WorktreeError(AxpipeError):
    """A throwaway worktree could not be created."""


# What `git rev-parse --local-env-vars` prints (git 2.39); asked once, this is the fall-back.
_LOCAL_ENV_VARS = ("GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
                   "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
                   "GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
                   "GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE", "GIT_COMMON_DIR")
_local_names: tuple[str, ...] | None = None


def _local_env_vars() -> tuple[str, ...]:
    global _local_names
    if _local_names is None:
        try:
            listed = git.text(None, "rev-parse", "--local-env-vars").stdout.split()
        except OSError:
            listed = []
        _local_names = tuple(dict.fromkeys([*listed, *_LOCAL_ENV_VARS]))
    return _local_names


# What a hook's git sets for the commit in progress: the index being committed.
COMMIT_INDEX = "GIT_INDEX_FILE"
# Settings from `git -c` and `--config-env`: for every repository the command works in.
_CONFIG = ("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT")


def outside_environment(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's environment) without git's repository-local variables,
    for a command that works in another checkout than the one a hook runs for. ``git -c``
    settings stay (git's own ``sanitize_repo_env`` keeps them too); the numbered
    ``GIT_CONFIG_KEY_<n>``/``GIT_CONFIG_VALUE_<n>`` are not repository-local."""
    names = set(_local_env_vars()) - set(_CONFIG)
    source = os.environ if env is None else env
    return {name: value for name, value in source.items() if name not in names}


def repository_environment(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's environment) without the index a hook is committing,
    for a command that works on the user's repository but not on that commit: the rest (a
    ``GIT_DIR`` the user set, ``git -c`` settings) is how the user's repository is found and read."""
    source = os.environ if env is None else env
    return {name: value for name, value in source.items() if name != COMMIT_INDEX}


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # run in the user's checkout, for its repository: a GIT_DIR the user set still finds it
    # surrogateescape: git's messages may name a folder that is not UTF-8
    return git.text(root, *args, unset=(COMMIT_INDEX,))  # as repository_environment() leaves it out


def folder(root: Path) -> Path:
    return state_dir(root) / "worktrees"


def remove(root: Path, path: Path) -> None:
    """Remove the worktree at ``path`` and git's record of it."""
    _git(root, "worktree", "remove", "--force", "--force", str(path))
    if path.exists():
        shutil.rmtree(path, ignore_errors=True)
    _git(root, "worktree", "prune")


def remove_stale(root: Path) -> list[Path]:
    """Remove throwaway worktrees left by processes that no longer run; return them."""
    base = folder(root)
    removed = []
    for path in sorted(base.iterdir()) if base.is_dir() else []:
        match = _OWNED.match(path.name)
        if match and int(match["pid"]) != os.getpid() and not pid_alive(int(match["pid"])):
            remove(root, path)
            removed.append(path)
    return removed


class Throwaway:
    """A worktree of ``revision`` created on first :meth:`path` and removed on exit."""

    def __init__(self, root: Path, revision: str, *, purpose: str = "gate") -> None:
        self.root = root
        self.revision = revision
        self.purpose = purpose
        self.created: Path | None = None
        self._previous_sigterm: Any = None

    def path(self) -> Path:
        if self.created is not None:
            return self.created
        remove_stale(self.root)
        path = folder(self.root) / f"{self.purpose}-{os.getpid()}-{secrets.token_hex(4)}"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.created = path  # set before git runs: an interrupted `worktree add` is cleaned up too
        completed = _git(self.root, "worktree", "add", "--detach", "--quiet", str(path), self.revision)
        if completed.returncode != 0:
            detail = completed.stderr.strip().splitlines()
            raise WorktreeError(f"cannot check out the baseline {self.revision[:12]} in a worktree: "
                                f"{detail[-1] if detail else completed.returncode}")
        return path

    def discard(self) -> Path | None:
        """Remove the worktree now (the next :meth:`path` makes a new one); return where it was."""
        used, self.created = self.created, None
        if used is not None:
            remove(self.root, used)
        return used

    def __enter__(self) -> Throwaway:
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            self._previous_sigterm = signal.signal(signal.SIGTERM, _interrupt)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        try:
            self.discard()
        finally:
            if self._previous_sigterm is not None:
                signal.signal(signal.SIGTERM, self._previous_sigterm)
                self._previous_sigterm = None


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"received {signal.Signals(signum).name}")
