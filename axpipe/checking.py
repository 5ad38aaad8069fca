"""Run one declared check through its check kind, with its full output kept on disk.

The kind decides pass or fail; this module supplies what every kind needs (working
directory, timeout, environment, a log of the complete output under ``.axpipe/``) and
reports ``check.started`` / ``check.finished`` events.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from axpipe import registry, schema
from axpipe.errors import PluginError
from axpipe.events import EventLog
from axpipe.interfaces import CheckOutcome, CheckRequest, CheckStatus
from axpipe.process import command_text

LOG_LIMIT_BYTES = 16 * 1024 * 1024


class _CappedLog:
    """Writes output to a file, stopping (with a note) at ``LOG_LIMIT_BYTES``."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._handle = path.open("wb")
        self._written = 0
        self._capped = False

    def write(self, chunk: bytes) -> None:
        if self._capped:
            return
        room = LOG_LIMIT_BYTES - self._written
        if len(chunk) > room:
            self._handle.write(chunk[:room])
            self._handle.write(b"\n[axpipe: log cut at 16 MiB; the output went on]\n")
            self._capped = True
            return
        self._handle.write(chunk)
        self._written += len(chunk)

    def close(self) -> None:
        self._handle.close()


def run_check(check: schema.CheckSpec, *, root: Path, events: EventLog, log_dir: Path,
              on_output: Callable[[bytes], None] | None = None,
              env: dict[str, str] | None = None) -> CheckOutcome:
    """Run ``check`` once in ``root`` and return its outcome (never raises for a failure)."""
    command = check.command
    events.emit("check.started", phase="verify", check=check.id, kind=check.kind,
                command=command_text(command) if command is not None else None)  # type: ignore[arg-type]
    try:
        kind = registry.load("axpipe.checks", check.kind)
    except PluginError as error:
        failure = CheckOutcome(status=CheckStatus.ERROR, summary=error.message)
        _finished(events, check, failure, None)
        return failure
    log = _CappedLog(log_dir / f"{check.id}.log")

    def tee(chunk: bytes) -> None:
        log.write(chunk)
        if on_output is not None:
            on_output(chunk)

    request = CheckRequest(check_id=check.id, command=command, params=check.params,  # type: ignore[arg-type]
                           cwd=root, timeout=check.timeout, env=env or {},
                           artifacts_dir=log_dir, on_output=tee)
    try:
        outcome: CheckOutcome = kind.run(request)
    finally:
        log.close()
    _finished(events, check, outcome, log.path)
    return outcome


def _finished(events: EventLog, check: schema.CheckSpec, outcome: CheckOutcome, log: Path | None) -> None:
    events.emit("check.finished", phase="verify", check=check.id, status=outcome.status.value,
                summary=outcome.summary, exit_code=outcome.exit_code, duration=round(outcome.duration, 4),
                output_tail=outcome.output_tail[-2000:], output_bytes=outcome.output_bytes,
                log=str(log) if log else None)
