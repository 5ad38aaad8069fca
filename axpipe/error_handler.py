"""The whole user-facing error policy, applied once at the edge of every command.

Known failures (:class:`~axpipe.errors.AxpipeError`) print their message and leave with
their exit code. A file system that refuses a write (permissions, a read-only mount, a
full disk, a file size limit) is the machine's state, not a bug: it is named with the file
(a full disk also when the write carries no name) and what to do, exit 1. Anything
else is a bug in axpipe or a plugin: one line says so and how to see the traceback.
``AXPIPE_DEBUG=1`` prints the traceback in every case.
"""

from __future__ import annotations

import errno
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
    except BrokenPipeError:
        # The reader went away (`axpipe ... | head`); that is not an error of ours.
        _silence_stdout()
        return int(ExitCode.OK)
    except KeyboardInterrupt as error:
        report(describe(error))
        return int(ExitCode.INTERRUPTED)
    except SystemExit as error:
        # Commands return their exit code; a SystemExit reaching here was raised by code that
        # must not end the command (plugin code calls go through axpipe.plugin.calls, which
        # turns it into a plugin error; this is the net behind it). It never picks the exit
        # code, least of all 0 ("success") for work that did not finish.
        if debug_enabled():
            _print_traceback()
        report(f"internal error: sys.exit({error.code!r}) was called while the command ran, so it did not finish."
               "\nThis is a bug in axpipe or a plugin. Run again with AXPIPE_DEBUG=1 for the traceback.")
        return int(ExitCode.FAILED)
    except Exception as error:
        if debug_enabled():
            _print_traceback()
        message = describe(error)
        if not debug_enabled() and not _known(error):
            message += "\nThis is a bug in axpipe or a plugin. Run again with AXPIPE_DEBUG=1 for the traceback."
        report(message)
        return int(error.exit_code if isinstance(error, AxpipeError) else ExitCode.FAILED)


_REFUSED_WRITES = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
# A full disk fails a write() to a file opened long before: the error carries no file name.
_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def _known(error: BaseException) -> bool:
    """axpipe's own errors, and a file system refusing a write: not bugs."""
    return isinstance(error, AxpipeError) or (
        isinstance(error, OSError) and error.errno in _REFUSED_WRITES
        and (error.filename is not None or error.errno in _FULL))


def describe(error: BaseException) -> str:
    """The one line :func:`guarded` prints for ``error`` (for records written before it does)."""
    if isinstance(error, AxpipeError):
        return error.message
    if isinstance(error, KeyboardInterrupt):
        return "interrupted"
    if _known(error):
        assert isinstance(error, OSError)
        if error.errno in _FULL:
            where = f"{error.filename}: " if error.filename is not None else "a write failed: "
            return (f"{where}{error.strerror}. Free space on that file system (or raise the file size limit) and "
                    "run the command again; what this command could not record is closed as failed when the next "
                    "run starts")
        return f"{error.filename}: {error.strerror}"
    return f"internal error: {type(error).__name__}: {error}"


#: Environment variable naming a file that receives the last error reported, whole: how a
#: scheduled run's launcher records the error its ``axpipe run`` printed as the run's reason.
ERROR_FILE_ENV = "AXPIPE_ERROR_FILE"
_copy_to: list[str] = []


def copy_errors_to(path: str | None) -> None:
    """Also write each reported error to ``path`` (replacing the previous one); None: don't."""
    _copy_to[:] = [path] if path else []


def report(message: str) -> None:
    """Write an error message to stderr, prefixed so it stands out from command output."""
    sys.stderr.write(f"axpipe: error: {message}\n")
    sys.stderr.flush()
    for path in _copy_to:
        try:
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as copy:
                copy.write(message)
        except OSError:
            pass  # stderr has it; the launcher then records the last line printed


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


def _print_traceback() -> None:
    import traceback  # only when asked for: it costs ~5 ms of every start

    traceback.print_exc()
