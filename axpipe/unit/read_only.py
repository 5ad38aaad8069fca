"""Read-only units may not change axpipe's state (DESIGN §14).

QA, judges, prototypes and the review round's reviewers run with ``AXPIPE_ROLE`` set to
``qa``, ``judge``, ``prototype`` or ``reviewer``. They may read everything and write only
under ``.axpipe/artifacts/<goal>/`` (:mod:`axpipe.unit.verdict_units` checks the files). Their
programs can also run ``axpipe`` itself, so every command that changes axpipe's state (a
run, a receipt, a goal, a schedule, a loop, the runtime, a review round, a repair) refuses
there: :func:`refuse_in_read_only_unit` is called by the CLI before any command runs. It is
an allowlist: a command not known to only read is refused, so a command added later is
refused until it is listed here.

The refusal is also written down, for the unit that ran the program: :class:`Refusals`
(held by the parent around its read-only units) names a file outside the workspace in
``AXPIPE_REFUSALS_FILE``, the refused command appends a line there, and the parent turns
any line into a hard stop of the unit.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from types import TracebackType

from axpipe.errors import InputError

ROLE_VARIABLE = "AXPIPE_ROLE"
REFUSALS_VARIABLE = "AXPIPE_REFUSALS_FILE"
READ_ONLY_ROLES = frozenset({"qa", "judge", "prototype", "reviewer"})

# Commands (and their actions) that only read: whatever else there is changes state. `gate`
# and `receipts verify` run the project's own commands for evidence, which writes only their
# reports (under .axpipe/ or where --report-dir says; the unit's file check sees the latter).
_READS_ONLY: dict[str, frozenset[str] | None] = {
    "recipes": None,
    "plugins": None,
    "guard": None,
    "gate": None,
    "receipts": None,
    "goal": frozenset({"status"}),
    "schedule": frozenset({"list", "show", "runs"}),
    "runtime": frozenset({"status"}),
    "loop": frozenset({"status"}),
    "task": frozenset({"show"}),
    "rules": frozenset({"check"}),
}


def reads_only(command: str, action: str | None) -> bool:
    """Whether ``axpipe <command> <action>`` only reads axpipe's state."""
    if command not in _READS_ONLY:
        return False
    actions = _READS_ONLY[command]
    return actions is None or action in actions


def refuse_in_read_only_unit(command: str, action: str | None) -> None:
    """Raise an input error (exit 2) when a read-only unit runs a command that changes state;
    record the attempt for the unit's parent first."""
    role = os.environ.get(ROLE_VARIABLE, "")
    if role not in READ_ONLY_ROLES or reads_only(command, action):
        return
    shown = f"axpipe {command}" + (f" {action}" if action else "")
    _record(shown, role)
    raise InputError(f"`{shown}` changes axpipe's state, and this is a read-only {role} unit ({ROLE_VARIABLE}={role}):"
                     " refused. A read-only unit may read (goal status, schedule list|show|runs, loop status, "
                     "runtime status, recipes, plugins, guard, gate, receipts verify) and write only under "
                     ".axpipe/artifacts/<goal>/")


def _record(shown: str, role: str) -> None:
    path = os.environ.get(REFUSALS_VARIABLE)
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"command": shown, "role": role, "pid": os.getpid()}) + "\n")
    except OSError:
        pass  # the refusal itself still stands


class Refusals:
    """While it is open, state-changing commands refused in the read-only units this process
    starts are written to a file outside the workspace (its path in ``AXPIPE_REFUSALS_FILE``,
    inherited by every program started meanwhile); :meth:`take` reads and clears them."""

    def __init__(self) -> None:
        descriptor, name = tempfile.mkstemp(prefix="axpipe-refusals-", suffix=".jsonl")
        os.close(descriptor)
        self.path = Path(name)
        self._previous = os.environ.get(REFUSALS_VARIABLE)
        os.environ[REFUSALS_VARIABLE] = name

    def take(self) -> list[str]:
        """The commands refused since the last call (``axpipe schedule delete``, ...)."""
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
            self.path.write_text("", encoding="utf-8")
        except OSError:
            return []
        commands = []
        for line in lines:
            try:
                commands.append(str(json.loads(line)["command"]))
            except (ValueError, KeyError, TypeError):
                commands.append(line[:200])  # a damaged line still says something was refused
        return commands

    def close(self) -> None:
        if self._previous is None:
            os.environ.pop(REFUSALS_VARIABLE, None)
        else:
            os.environ[REFUSALS_VARIABLE] = self._previous
        self.path.unlink(missing_ok=True)

    def __enter__(self) -> Refusals:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()
