"""The whole user-facing error policy, applied once at the edge of every command.

Known failures (:class:`~axpipe.errors.AxpipeError`) print their message and leave with
their exit code. Anything else is a bug in axpipe or a plugin: one line says so and how to
see the traceback. ``AXPIPE_DEBUG=1`` prints the traceback in both cases.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from axpipe.errors import AxpipeError, ExitCode


def debug_enabled() -> bool:
    """True when the user asked for tracebacks (``AXPIPE_DEBUG=1``)."""
    return os.environ.get("AXPIPE_DEBUG", "") not in ("", "0")


def guarded(action: Callable[[], int]) -> int:
    """Run ``action`` and turn every exception into a message and an exit code."""
    try:
        return action()
    except AxpipeError as error:
        if debug_enabled():
            _print_traceback()
        report(error.message)
        return int(error.exit_code)
    except KeyboardInterrupt:
        report("interrupted")
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        # The reader went away (`axpipe ... | head`); that is not an error of ours.
        _silence_stdout()
        return int(ExitCode.OK)
    except Exception as error:
        if debug_enabled():
            _print_traceback()
            report(f"internal error: {type(error).__name__}: {error}")
        else:
            report(
                f"internal error: {type(error).__name__}: {error}\n"
                "This is a bug in axpipe or a plugin. Run again with AXPIPE_DEBUG=1 for the traceback."
            )
        return int(ExitCode.FAILED)


def report(message: str) -> None:
    """Write an error message to stderr, prefixed so it stands out from command output."""
    sys.stderr.write(f"axpipe: error: {message}\n")
    sys.stderr.flush()


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


def _print_traceback() -> None:
    import traceback  # only when asked for: it costs ~5 ms of every start

    traceback.print_exc()
