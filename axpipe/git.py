"""The one place axpipe runs git: every other module (and the built-in plugins) asks here.

The policy, the same for every caller:

- **Names keep their bytes.** git is asked with ``-c core.quotepath=false`` so a file name
  arrives as its bytes, not C-quoted; answers are bytes and become text with
  :func:`decode` (``os.fsdecode``: UTF-8 with surrogate escapes), so a name that is not
  valid UTF-8 is still the file on disk and encoding it back gives git the same name.
  Only a patch shown to a person keeps git's quoting (``quote_names=True``).
- **Lists are ``-z``** and are split by :func:`names`.
- **The environment is said, not guessed**: ``optional_locks=False`` sets
  ``GIT_OPTIONAL_LOCKS=0`` (a read that must not take the index lock a user's own git may
  hold), ``literal_pathspecs`` sets ``GIT_LITERAL_PATHSPECS`` (``True``: a user's file
  name is never a pattern; ``False``: axpipe's own ``:/`` and ``:(exclude)`` magic works);
  ``env`` adds anything else (an alternative index file), ``unset`` leaves variables out
  (the index a hook is committing). Nothing said: git runs in the caller's environment as
  it is.
- **Resolving a revision** to a commit is :func:`resolve_commit`, the work tree's top
  :func:`toplevel`.

Failures are the caller's to word: :func:`run` returns the completed process (``check``
raises :class:`subprocess.CalledProcessError`), because "not a repository" is an input
error for one command and an ordinary answer for another.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""git's empty tree: the base of a diff of a repository's first commit."""

_RAW_NAMES = ("-c", "core.quotepath=false")
PIPE = -1  # subprocess.PIPE, without importing subprocess at start-up


def command(*args: str, quote_names: bool = False) -> list[str]:
    """The argument list that runs ``git args`` under this module's policy."""
    return ["git", *(() if quote_names else _RAW_NAMES), *args]


def environment(env: Mapping[str, str] | None = None, *, optional_locks: bool = True,
                literal_pathspecs: bool | None = None, unset: Collection[str] = ()) -> dict[str, str] | None:
    """The environment for a git command; None (inherit) when nothing is said."""
    if env is None and optional_locks and literal_pathspecs is None and not unset:
        return None
    chosen = {name: value for name, value in os.environ.items() if name not in unset}
    if not optional_locks:
        chosen["GIT_OPTIONAL_LOCKS"] = "0"
    if literal_pathspecs is not None:
        chosen["GIT_LITERAL_PATHSPECS"] = "1" if literal_pathspecs else "0"
    chosen.update(env or {})
    return chosen


def run(cwd: Path | str | None, *args: str, input: bytes | None = None, check: bool = False,
        env: Mapping[str, str] | None = None, optional_locks: bool = True,
        literal_pathspecs: bool | None = None, quote_names: bool = False,
        timeout: float | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``git args`` in ``cwd``; stdout and stderr captured as bytes (``timeout``: a push or a
    fetch that may wait on a network)."""
    import subprocess  # deferred (here and below): it costs every command's start-up; most never run git

    return subprocess.run(command(*args, quote_names=quote_names), cwd=cwd, input=input, capture_output=True,
                          check=check, timeout=timeout, env=environment(env, optional_locks=optional_locks,
                                                                        literal_pathspecs=literal_pathspecs))


def text(cwd: Path | str | None, *args: str, errors: str = "surrogateescape", check: bool = False,
         env: Mapping[str, str] | None = None, optional_locks: bool = True, literal_pathspecs: bool | None = None,
         quote_names: bool = False, unset: Collection[str] = ()) -> subprocess.CompletedProcess[str]:
    """:func:`run` with stdout and stderr as text (names keep their bytes unless ``errors`` says
    otherwise: ``replace`` suits an answer that is only shown)."""
    import subprocess

    return subprocess.run(command(*args, quote_names=quote_names), cwd=cwd, capture_output=True, text=True,
                          encoding="utf-8", errors=errors, check=check,
                          env=environment(env, optional_locks=optional_locks, literal_pathspecs=literal_pathspecs,
                                          unset=unset))


def popen(cwd: Path | str | None, *args: str, env: Mapping[str, str] | None = None,
          literal_pathspecs: bool | None = None, stdin: int | None = None, stdout: int | None = PIPE,
          stderr: int | None = PIPE) -> subprocess.Popen[bytes]:
    """Start ``git args`` in ``cwd`` without waiting (commands run side by side)."""
    import subprocess

    return subprocess.Popen(command(*args), cwd=cwd, stdin=stdin, stdout=stdout, stderr=stderr,
                            env=environment(env, literal_pathspecs=literal_pathspecs))


def output(cwd: Path | str | None, *args: str, env: Mapping[str, str] | None = None,
           optional_locks: bool = True) -> str | None:
    """A git command's stripped answer as text, or None when it fails or prints nothing."""
    completed = run(cwd, *args, env=env, optional_locks=optional_locks)
    answer = decode(completed.stdout).strip()
    return answer if completed.returncode == 0 and answer else None


def decode(raw: bytes) -> str:
    """git's bytes as text; a name that is not valid UTF-8 keeps its bytes (surrogate escapes)."""
    return os.fsdecode(raw)


def names(raw: bytes) -> list[str]:
    """A ``-z`` answer's entries as text (see :func:`decode`), without the empty last one."""
    return [decode(name) for name in raw.split(b"\0") if name]


def resolve_commit(cwd: Path | str | None, revision: str, *, optional_locks: bool = True) -> str | None:
    """The full commit id ``revision`` names in ``cwd``'s repository; None when it names none."""
    return output(cwd, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}",
                  optional_locks=optional_locks)


def toplevel(cwd: Path | str | None) -> Path | None:
    """The top of the git work tree holding ``cwd``; None outside one (or without git)."""
    try:
        completed = run(cwd, "rev-parse", "--show-toplevel")
    except OSError:
        return None
    if completed.returncode != 0 or not completed.stdout.strip():
        return None
    return Path(decode(completed.stdout.strip()))  # a folder that is not UTF-8 keeps its bytes
