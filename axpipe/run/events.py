"""JSONL events: one object a line with at least ``ts`` (ISO 8601 UTC), ``type`` and ``goal``.

Every phase reports through :class:`EventLog`. The log always goes to the run folder
(``events.jsonl``); ``--event-log PATH`` copies it; ``--json`` writes it to stdout. Other
listeners (the terminal display) subscribe and render the same events, so what a person
sees and what a script reads cannot disagree.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from axpipe.store import now_iso

Listener = Callable[[dict[str, Any]], None]


class EventLog:
    """Writes events to their sinks and hands them to listeners."""

    def __init__(self, *, goal: str | None = None, path: Path | None = None,
                 copy_to: Path | None = None, to_stdout: bool = False) -> None:
        self.goal = goal
        # The files open at the first event: a command refused before it has anything to
        # report (an unknown check id, say) leaves no empty events.jsonl behind.
        self._pending = [target for target in (path, copy_to) if target is not None]
        self._files: list[IO[str]] = [sys.stdout] if to_stdout else []
        self._listeners: list[Listener] = []
        self.history: list[dict[str, Any]] = []
        self.last_emit = time.monotonic()

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def emit(self, type_: str, **fields: Any) -> dict[str, Any]:
        """Record one event; ``fields`` may not override ``ts``, ``type`` or ``goal``."""
        event: dict[str, Any] = {"ts": now_iso(), "type": type_, "goal": self.goal}
        for key, value in fields.items():
            if key not in event:
                event[key] = value
        line = json.dumps(event, ensure_ascii=False, default=str)
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:  # a file name that is not UTF-8 (surrogate escapes): \udcXX keeps it exact
            line = json.dumps(event, default=str)
        while self._pending:
            target = self._pending[0]
            target.parent.mkdir(parents=True, exist_ok=True)
            self._files.append(target.open("a", encoding="utf-8"))
            self._pending.pop(0)  # only once open: a failed open is tried again, not forgotten
        for handle in self._files:
            handle.write(line + "\n")
            handle.flush()
        self.history.append(event)
        self.last_emit = time.monotonic()
        for listener in self._listeners:
            listener(event)
        return event

    def close(self) -> None:
        self._pending = []
        for handle in self._files:
            if handle is not sys.stdout:
                handle.close()
        self._files = [handle for handle in self._files if handle is sys.stdout]
