"""``axpipe guard``: the cheating-fix guards over any change, for CI and pre-commit."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from axpipe import git
from axpipe.errors import ExitCode, InputError, not_found_message
from axpipe.interfaces import GuardContext, GuardFinding


def guard(*, base: str | None, patch: str | None, staged: bool, guards: str | None, as_json: bool,
          failure_output: str | None, failing_tests: Sequence[str], commands: Sequence[str] = (),
          runner: str | None = None) -> int:
    """Judge the working tree against ``base`` (default HEAD), the index with ``staged``, or
    the diff in ``patch``; with ``runner``, also from what the test runner collects. Exit 0
    when nothing fired, 1 when a guard fired."""
    # deferred: ~25 modules and subprocess load only when this action needs them
    from axpipe.guard.run import check_change
    from axpipe.guard.runner_tests import RUNNERS

    if patch is not None and (base is not None or staged):
        raise InputError("--patch judges the diff it is given: it cannot be combined with "
                         f"{'--base' if base is not None else '--staged'}")
    if runner is not None and (patch is not None or staged):
        raise InputError(f"--runner lists the tests at the base and in the working tree: it cannot be combined "
                         f"with {'--patch' if patch is not None else '--staged'}")
    if runner is not None and runner not in (*RUNNERS, "auto"):
        raise InputError(f"--runner: unknown runner '{runner}'; one of auto, {', '.join(RUNNERS)}")
    names = _guard_names(guards)
    context = GuardContext(failure_output=_read_failure(failure_output), failing_tests=list(failing_tests),
                           commands=_commands(commands), workdir=_workdir())
    if patch is not None:
        text, source = _read_patch(patch)
        report = check_change(_root(), context=context, guards=names, patch=text, patch_source=source)
    else:  # check_change finds the repository's top itself
        report = check_change(Path.cwd(), base or "HEAD", context, names, staged=staged, runner=runner)
    for note in report.changes.notes:
        sys.stderr.write(f"note: {note}\n")
    for item in report.unavailable:  # an installed guard nobody named: reported, never a reason to stop
        sys.stderr.write(f"warning: {item.describe()}\n")
    if as_json:
        json.dump([finding.to_json() for finding in report.findings], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for finding in report.findings:
            sys.stdout.write(f"{finding.describe()}  [{finding.plugin}]\n")
        sys.stdout.write(_summary(report.findings, len(report.changes.files), report.changes.source, report.guards,
                                  [item.name for item in report.unavailable]))
    return int(ExitCode.FAILED if report.findings else ExitCode.OK)


def _guard_names(guards: str | None) -> list[str] | None:
    if guards is None:
        return None
    # deferred: ~25 modules and subprocess load only when this action needs them
    from axpipe.guard.run import NAMESPACE
    from axpipe.plugin import registry

    names = [name.strip() for name in guards.split(",") if name.strip()]
    available = registry.names(NAMESPACE)
    if not names:
        raise InputError("--guards: name at least one guard; available: " + ", ".join(sorted(available)))
    for name in names:
        if name not in available:
            raise InputError("--guards: " + not_found_message("guard", name, available))
    return names


def _root() -> Path:
    """The repository's top when inside git (diff paths are relative to it), else here."""
    here = Path.cwd()
    return git.toplevel(here) or here


def _commands(commands: Sequence[str]) -> list[str]:
    """The ``--command`` values, each a shell command line the condition guard can read."""
    import shlex

    for command in commands:
        try:
            words = shlex.split(command)
        except ValueError as error:
            raise InputError(f"--command: not a valid shell command ({error}): {command!r}") from error
        if not words:
            raise InputError("--command: empty command; give the command the change must not redefine")
    return list(commands)


def _workdir() -> str:
    """The current folder relative to the repository's top: where ``--command`` runs."""
    relative = Path.cwd().resolve().relative_to(_root().resolve()).as_posix()
    return "" if relative == "." else relative + "/"


def _read_patch(patch: str) -> tuple[str, str]:
    if patch == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        return Path(patch).read_text(encoding="utf-8", errors="replace"), patch
    except OSError as error:
        raise InputError(f"--patch {patch}: cannot read it: {error.strerror or error}") from error


def _read_failure(path: str | None) -> str:
    if path is None:
        return ""
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise InputError(f"--failure-output {path}: cannot read it: {error.strerror or error}") from error


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _summary(findings: Sequence[GuardFinding], files: int, source: str, guards: Sequence[str],
             unavailable: Sequence[str] = ()) -> str:
    judged = f"judged {_plural(files, 'changed file')} of `{source}` with {', '.join(guards)}"
    if unavailable:
        judged += f"; not by {', '.join(unavailable)}, which failed to load"
    if not findings:
        return f"guard: nothing fired; {judged}\n"
    classes = ", ".join(sorted({finding.guard for finding in findings}))
    paths = len({finding.file for finding in findings})
    return f"guard: {_plural(len(findings), 'finding')} ({classes}) in {_plural(paths, 'file')}; {judged}\n"
