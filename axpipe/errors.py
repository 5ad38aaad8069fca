"""The exit codes of DESIGN §11 and the one error type every user-facing failure uses.

Every command returns an :class:`ExitCode`. Failures a user can act on raise an
:class:`AxpipeError` subclass carrying its message and exit code; the error handler in
:mod:`axpipe.error_handler` catches them once, at the edge, and prints the message.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import IntEnum
from typing import NamedTuple


class ExitCode(IntEnum):
    """Exit codes shared by every axpipe command (DESIGN §11)."""

    OK = 0
    FAILED = 1
    INPUT_ERROR = 2
    BLOCKED = 3
    BUDGET_LIMITED = 4
    ENVIRONMENT = 5
    NOT_TERMINAL = 6
    LOCKED = 7
    IDLE_TIMEOUT = 124
    INTERRUPTED = 130


class AxpipeError(Exception):
    """A failure with a message meant for the user and the exit code to leave with."""

    exit_code: ExitCode = ExitCode.FAILED

    def __init__(self, message: str, *, exit_code: ExitCode | None = None) -> None:
        super().__init__(message)
        self.message = message
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message


class InputError(AxpipeError):
    """A bad argument or value: nothing ran, nothing changed."""

    exit_code = ExitCode.INPUT_ERROR


class Problem(NamedTuple):
    """One thing wrong with a recipe: the config path, what is wrong, and where it came from."""

    path: str
    message: str
    source: str | None = None

    def render(self) -> str:
        where = f"  (from {self.source})" if self.source else ""
        prefix = f"{self.path}: " if self.path else ""
        return f"{prefix}{self.message}{where}"


class ConfigError(InputError):
    """A recipe or override that does not validate; lists every problem at once."""

    def __init__(self, problems: Sequence[Problem], *, recipe: str | None = None) -> None:
        self.problems = list(problems)
        self.recipe = recipe
        head = f"recipe '{recipe}' is invalid" if recipe else "the configuration is invalid"
        count = len(self.problems)
        noun = "problem" if count == 1 else "problems"
        lines = [f"{head} ({count} {noun}):"]
        lines.extend(f"  - {problem.render()}" for problem in self.problems)
        lines.append("Nothing was run and nothing was written.")
        super().__init__("\n".join(lines))

    @property
    def listing(self) -> str:
        """The problems alone, on one line: for a report that is itself written (a repair's
        input-error report), where "nothing was written" would not be true."""
        return "; ".join(problem.render() for problem in self.problems)


class EnvironmentNotReady(AxpipeError):
    """The environment a run needs is missing (probe failed, executable missing)."""

    exit_code = ExitCode.ENVIRONMENT


class ExecutableNotFound(EnvironmentNotReady):
    """A command's program is not on PATH (or not executable)."""

    def __init__(self, program: str, *, what: str = "command") -> None:
        self.program = program
        super().__init__(
            f"{what} not found: '{program}' is not on PATH and is not an executable file"
        )


class LockHeld(AxpipeError):
    """Another axpipe run holds this checkout's run lock."""

    exit_code = ExitCode.LOCKED

    def __init__(self, lock_path: str, holder_pid: int | None) -> None:
        self.lock_path = lock_path
        self.holder_pid = holder_pid
        holder = f"pid {holder_pid}" if holder_pid else "an unknown process"
        super().__init__(
            f"another axpipe run holds this checkout: {holder} has {lock_path}. "
            "Wait for it to finish, or stop it, then try again."
        )


class PluginError(AxpipeError):
    """A plugin is unknown or failed to load."""

    exit_code = ExitCode.INPUT_ERROR


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``candidates`` to a misspelt ``name``, or ``""``."""
    import difflib  # only when something is misspelt: ~1 ms of start-up otherwise

    hint = difflib.get_close_matches(name, list(candidates), n=1)
    return f" (did you mean '{hint[0]}'?)" if hint else ""


def not_found_message(what: str, name: str, available: Iterable[str]) -> str:
    """Build "unknown X 'name'; available: a, b" with a close-match hint when there is one."""
    names = sorted(set(available))
    message = f"unknown {what} '{name}'{did_you_mean(name, names)}"
    message += "; available: " + (", ".join(names) if names else "none")
    return message
