"""Calling into plugin code: what a plugin does wrong is reported as the plugin's fault.

Every call axpipe makes into a plugin's methods (a check kind's ``run``, a guard's
``check``, an agent's turn, a reviewer's invocation, a receipt verifier) goes through
:func:`call`, which promises:

- ``SystemExit`` (a plugin calling ``sys.exit(0)``) and any ``Exception`` become a
  :class:`PluginFault` naming the plugin, its distribution and what it did; a plugin can
  never end axpipe with an exit code of its choosing, least of all "success".
- ``KeyboardInterrupt`` still interrupts (Ctrl-C: exit 130).
- A result of the wrong type (``returns``) is a :class:`PluginFault` too, never read.
- Plugin code still running past a deadline is interrupted: ``limit`` seconds after the
  call started, or when :func:`interrupt_running` is called (the unit timeout's expiry,
  :mod:`axpipe.unit.units`). The main thread receives ``SIGUSR2``, whose handler raises
  :class:`PluginTimeout` (a ``BaseException``, so a plugin's ``except Exception`` does not
  swallow it) inside the plugin's frame; a blocking call such as ``time.sleep`` is woken by
  the signal. Only calls made on the main thread can be interrupted this way.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

from axpipe.errors import AxpipeError, ExitCode
from axpipe.plugin import registry

_SIGNAL = signal.SIGUSR2
CHECK_GRACE_SECONDS = 5.0
"""A check kind's ``run`` is interrupted when twice the check's timeout plus this has passed:
the built-in kinds give each command they run (at most two) the whole timeout."""
UNIT_GRACE_SECONDS = 5.0
"""After the unit timeout killed the unit's processes, plugin code still running this much
later is interrupted (process.py gives a killed process group 2 s to go)."""
_RESEND_SECONDS = 1.0  # a plugin that catches PluginTimeout gets it again until it returns


class PluginFault(AxpipeError):
    """A plugin broke its contract while axpipe called it (raised, exited, returned the
    wrong thing, or ran past its deadline). Exit 1: the work was attempted and failed.
    ``label`` names the plugin, its distribution and the method; ``cause`` says what it did."""

    exit_code = ExitCode.FAILED

    def __init__(self, label: str, cause: str, *, timed_out: bool = False) -> None:
        super().__init__(f"timed out in plugin code: {label}: {cause}" if timed_out else f"{label}: {cause}")
        self.label = label
        self.cause = cause
        self.timed_out = timed_out


class PluginTimeout(BaseException):
    """Raised inside plugin code that ran past its deadline (never caught by ``except Exception``)."""

    def __init__(self, watch: _Watch) -> None:
        super().__init__(watch.reason)
        self.watch = watch


class _Watch:
    """One plugin call in progress on the main thread, and whether its deadline passed."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.inside = True
        self.reason: str | None = None  # set when the deadline passed
        self.done = threading.Event()

    def expire(self, reason: str) -> None:
        """Interrupt the call (from any thread), again every second until it returns."""
        if not self.inside or self.reason is not None:
            return
        self.reason = reason
        threading.Thread(target=self._interrupt, name="axpipe-plugin-deadline", daemon=True).start()

    def _interrupt(self) -> None:
        while self.inside:
            signal.pthread_kill(threading.main_thread().ident or 0, _SIGNAL)
            if self.done.wait(_RESEND_SECONDS):
                return


_stack: list[_Watch] = []  # calls in progress on the main thread, innermost last
_previous_handler: Any = None
_installed = False


def _handler(signum: int, frame: Any) -> None:
    expired = next((watch for watch in _stack if watch.reason is not None and watch.inside), None)
    if expired is not None:
        raise PluginTimeout(expired)
    if callable(_previous_handler):  # not ours: someone else's use of the signal
        _previous_handler(signum, frame)


def _install() -> None:
    global _installed, _previous_handler
    if not _installed:
        _previous_handler = signal.signal(_SIGNAL, _handler)
        _installed = True


def interrupt_running(reason: str) -> bool:
    """Interrupt the outermost plugin call in progress on the main thread (its inner calls
    with it); False when no plugin code is running there."""
    if not _stack:
        return False
    _stack[0].expire(reason)
    return True


def running() -> bool:
    """Whether plugin code is running on the main thread now."""
    return bool(_stack)


def call(plugin: object, method: str, *args: Any, returns: type | tuple[type, ...] | None = None,
         limit: float | None = None, limit_reason: str = "") -> Any:
    """``plugin.method(*args)``, with every way it can go wrong turned into a
    :class:`PluginFault` naming the plugin and its distribution (see the module docstring).
    ``limit``: seconds before the call is interrupted, described by ``limit_reason``."""
    label = f"{registry.describe(plugin)} {method}()"
    function = getattr(plugin, method, None)
    if not callable(function):
        raise PluginFault(label, "the plugin has no such method")
    watched = threading.current_thread() is threading.main_thread()
    watch = _Watch(label)
    timer: threading.Timer | None = None
    if watched:
        _install()
        _stack.append(watch)
        if limit is not None:
            timer = threading.Timer(limit, watch.expire, args=(limit_reason or f"it ran over {limit:g} s",))
            timer.daemon = True
            timer.start()
    try:
        try:
            result = function(*args)
        finally:
            watch.inside = False  # first: from here on, the handler no longer raises for this call
            watch.done.set()
            if timer is not None:
                timer.cancel()
            if watch in _stack:
                _stack.remove(watch)
    except PluginTimeout as stop:
        if stop.watch is not watch:
            raise  # an outer call's deadline: it reports
        raise PluginFault(label, f"interrupted because {watch.reason}", timed_out=True) from None
    except KeyboardInterrupt:
        raise
    except SystemExit as error:
        raise PluginFault(label, f"called sys.exit({error.code!r}) instead of returning its result; a plugin "
                                 "must never end axpipe") from error
    except AxpipeError:
        raise  # the plugin's own error report (an InputError for input it cannot judge)
    except Exception as error:
        raise PluginFault(label, f"{type(error).__name__}: {error}") from error
    if returns is not None and not isinstance(result, returns):
        wanted = returns.__name__ if isinstance(returns, type) else " or ".join(t.__name__ for t in returns)
        raise PluginFault(label, f"returned {type(result).__name__} {_short(result)}, not {wanted}")
    return result


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


__all__ = ["PluginFault", "PluginTimeout", "call", "interrupt_running", "running"]
