"""Receipts: the only path that records that a frozen check ran, and on what (DESIGN §4).

:func:`verify` runs one check's *frozen* command (never a substitute) through its check
kind, with the source fingerprint taken before and after, and records a receipt: goal,
session, workspace, contract digest, fingerprint, command, exit code, status, start and
end, output tail, artifacts. ``axpipe verify`` and the run's verify phase both call it;
nothing else writes receipts.

Held-out checks leave a receipt with their status and fingerprint only: their command,
summary and output go to the private folder, never under the workspace.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from axpipe.errors import ConfigError, InputError, PluginError, not_found_message
from axpipe.goal import fingerprint, private
from axpipe.goal.contract import digest_of, head_sha
from axpipe.goal.fingerprint import Fingerprint
from axpipe.goal.record import Goal, goal_dir
from axpipe.interfaces import CheckRequest, CheckStatus
from axpipe.plugin import registry
from axpipe.plugin.check_run import run_check
from axpipe.process import command_text
from axpipe.recipe import typed as validation
from axpipe.records import record
from axpipe.run.events import EventLog
from axpipe.store import Store
from axpipe.store import goals as sql

LOG_LIMIT_BYTES = 16 * 1024 * 1024


class CappedLog:
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


HELD_OUT = "[held out]"
TAIL_CHARS = 4000


@record
class Receipt:
    """What :func:`verify` recorded."""

    id: str
    check_id: str
    status: str  # passed | failed | error
    summary: str
    exit_code: int | None
    fingerprint: str | None
    fingerprint_reason: str | None
    held_out: bool
    source: Fingerprint | None = None
    """The source as the check left it; the next check of the same pass starts from it."""
    missing_program: str | None = None
    """An error receipt because the check's program is not there (CheckOutcome.missing_program)."""


def check_description(root: Path, goal: Goal, check_id: str) -> dict[str, Any]:
    """The frozen description of one check (held-out ones from the private folder).

    A held-out description is only a copy kept outside the workspace; the plan holds its
    SHA-256. A copy that no longer has it (edited, or another contract's) is refused: the
    check runs its frozen command or not at all."""
    for check in goal.checks:
        if check["id"] != check_id:
            continue
        if check.get("held_out") and "command" not in check:
            stored = private.load_held_out(root, goal.private_key).get(check_id)
            if stored is None:
                raise InputError(f"held-out check '{check_id}' of goal '{goal.id}' has no description in the "
                                 f"private folder {private.private_dir(root)}; run the recipe again to plan it")
            found = digest_of(stored)
            if found != check.get("sha256"):
                raise InputError(
                    f"held-out check '{check_id}' of goal '{goal.id}': its description in the private folder "
                    f"({private.held_out_path(root, goal.private_key)}) does not match the frozen contract "
                    f"(sha256 {found[:12]}, frozen {str(check.get('sha256'))[:12]}): it was changed after the "
                    "goal was planned, so it was not run and nothing was recorded. Run the goal's recipe again "
                    "(axpipe run) to write the frozen description from it")
            return stored
        return check
    raise InputError(f"goal '{goal.id}': " + not_found_message("check", check_id, [c["id"] for c in goal.checks]))


def typed_params(kind: Any, description: dict[str, Any]) -> Any:
    params, problems = validation.load_plugin_params(kind, description.get("params") or {},
                                                     f"check {description['id']}", None)
    if problems:
        raise ConfigError(problems)
    return params


LIMIT_NAMES = ("limits.fingerprint_entries", "limits.fingerprint_bytes")


def source_fingerprint(store: Store, root: Path, goal: Goal) -> fingerprint.Fingerprint:
    """The fingerprint of ``goal``'s source (its source paths and the files the agent
    edited) under the recipe's ``limits.fingerprint_entries`` and ``limits.fingerprint_bytes``
    as the goal's latest run recorded them. Receipts and the completion gate both take it
    here, so a check is never judged fresh under looser limits than it was verified under."""
    return fingerprint.compute(
        root, goal.source_paths, extra_files=sql.edited_files(store, goal.id),
        max_entries=int(goal.budget.get("fingerprint_entries") or fingerprint.MAX_ENTRIES),
        max_bytes=int(goal.budget.get("fingerprint_bytes") or fingerprint.MAX_BYTES), limit_names=LIMIT_NAMES)


HEAD_MARK = "@"
NO_COMMIT = "no-commit"


def freshness(stored: str, current: Fingerprint, root: Path) -> str | None:
    """Why a passed receipt's fingerprint ``stored`` no longer holds for the ``current``
    source, or None when it does. A check whose kind declares ``depends_on_history`` (its
    verdict reads commits, not only files) stored ``<digest>@<HEAD>``: moving HEAD, even to
    a commit with the same tree, makes it stale too."""
    digest, _, bound = stored.partition(HEAD_MARK)
    if digest != current.digest:
        return "the source changed since it passed"
    if bound:
        now = head_sha(root) or NO_COMMIT
        if now != bound:
            return (f"HEAD moved since it passed ({bound[:12]} -> {now[:12]}): this check's verdict depends on "
                    "git history, not only on the files")
    return None


def verify(store: Store, root: Path, goal: Goal, session_id: str, check_id: str, *, events: EventLog,
           on_output: Callable[[bytes], None] | None = None,
           before: Fingerprint | None = None) -> Receipt:
    """Run check ``check_id`` of ``goal`` once and record its receipt.

    ``before`` is the source as the previous check of the same pass left it (its
    :attr:`Receipt.source`), taken when nothing has run since: it stands for the fingerprint
    before this check. It can only make the evidence stricter: if the tree changed in
    between, the fingerprints differ and the receipt is no fresh evidence."""
    description = check_description(root, goal, check_id)
    held_out = bool(description.get("held_out"))
    command = description.get("command")
    shown_command = HELD_OUT if held_out else (command_text(command) if command is not None else description["kind"])
    try:
        kind = registry.load("axpipe.checks", description["kind"])
    except PluginError as error:
        raise InputError(f"check '{check_id}': {error.message}") from error
    params = typed_params(kind, description)
    history = bool(getattr(kind, "depends_on_history", False))
    receipt_id = f"r-{secrets.token_hex(6)}"
    sql.start_receipt(store, receipt_id=receipt_id, goal_id=goal.id, session_id=session_id, workspace=str(root),
                      contract_digest=goal.contract_digest, check_id=check_id, held_out=held_out,
                      command=shown_command)
    events.emit("check.started", phase="verify", check=check_id, kind=description["kind"], command=shown_command,
                receipt=receipt_id, held_out=held_out)
    log_folder = private.log_dir(root, goal.id) if held_out else goal_dir(root, goal.id) / "logs"
    log = CappedLog(log_folder / f"{receipt_id}-{check_id}.log")

    def tee(chunk: bytes) -> None:
        log.write(chunk)
        if on_output is not None and not held_out:
            on_output(chunk)

    try:
        if before is None:
            before = source_fingerprint(store, root, goal)
        head_before = (head_sha(root) or NO_COMMIT) if history else None

        def current() -> str | None:
            # For kinds that compare the tree (idempotent): the goal's own source. None when
            # it has no fresh digest (CheckRequest.fingerprint): the kind then reports an
            # error, never a match, and the receipt carries no fingerprint either.
            return source_fingerprint(store, root, goal).digest

        timeout = float(description["timeout"])
        request = CheckRequest(
            check_id=check_id, command=command, params=params, cwd=root, timeout=timeout,
            env={"AXPIPE_GOAL_ID": goal.id, "AXPIPE_CHECK_ID": check_id}, artifacts_dir=log_folder, on_output=tee,
            fingerprint=current)
        outcome = run_check(kind, request)
        status = {CheckStatus.PASSED: "passed", CheckStatus.FAILED: "failed"}.get(outcome.status, "error")
    except BaseException as error:
        # Ctrl-C, SIGTERM or a crash while the check ran: the receipt says so instead of
        # staying "running" with no process behind it. It is never evidence.
        why = "interrupted" if isinstance(error, KeyboardInterrupt) else f"{type(error).__name__}: {error}"
        sql.finish_receipt(store, receipt_id, status="error", exit_code=None,
                           summary=f"the check did not finish ({why})", fingerprint=None,
                           fingerprint_reason="the check did not finish", output_tail="",
                           artifacts=[] if held_out else [str(log.path)])
        raise
    finally:
        log.close()
    after = source_fingerprint(store, root, goal)
    digest, reason = after.digest, None
    if not before.fresh or not after.fresh:
        digest, reason = None, (before if not before.fresh else after).describe()
    elif before.digest != after.digest:
        digest, reason = None, ("no fresh evidence: the check changed the source it verifies "
                                "(write its output under .axpipe/)")
    if digest is not None and head_before is not None:  # the verdict holds for this HEAD only
        head_after = head_sha(root) or NO_COMMIT
        if head_after != head_before:
            digest, reason = None, (f"no fresh evidence: HEAD moved while the check ran ({head_before[:12]} -> "
                                    f"{head_after[:12]})")
        else:
            digest = f"{digest}{HEAD_MARK}{head_after}"
    summary = outcome.summary if not held_out else f"held-out check {status}"
    tail = outcome.output_tail[-TAIL_CHARS:] if not held_out else ""
    # What the kind kept as evidence (a browser check's screenshot) comes first: qa-report.md
    # names a criterion's first artifact (axpipe.unit.closing).
    kept = [str(path) for path in outcome.details.get("artifacts") or [] if isinstance(path, str)]
    sql.finish_receipt(store, receipt_id, status=status, exit_code=outcome.exit_code, summary=summary,
                       fingerprint=digest, fingerprint_reason=reason, output_tail=tail,
                       artifacts=[] if held_out else [*kept, str(log.path)])
    events.emit("check.finished", phase="verify", check=check_id, receipt=receipt_id, status=status,
                summary=summary, exit_code=outcome.exit_code, duration=round(outcome.duration, 4),
                output_tail=tail[-2000:], output_bytes=outcome.output_bytes if not held_out else None,
                fingerprint=digest, fingerprint_reason=reason, held_out=held_out,
                log=None if held_out else str(log.path))
    return Receipt(receipt_id, check_id, status, summary, outcome.exit_code, digest, reason, held_out, after,
                   outcome.missing_program if status == "error" else None)
