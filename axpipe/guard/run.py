"""Running the cheating-fix guards (``axpipe.guards``) over one change.

The repair loop calls :func:`find_cheating` on each iteration's diff; ``axpipe guard``
calls :func:`check_change` for the same work plus what it needs to print. Guards are
plugins loaded through the registry; only the files some selected guard inspects are read,
and each guard parses only those. By default every installed guard judges; one that fails
to load is left out and reported (:class:`Unavailable`), never a reason to stop (DESIGN §10).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from pathlib import Path

from axpipe.change.from_git import from_git, snapshot
from axpipe.change.from_patch import from_patch
from axpipe.errors import AxpipeError, InputError, PluginError, not_found_message
from axpipe.guard import runner_tests
from axpipe.interfaces import ChangeSet, CollectedTests, Guard, GuardContext, GuardFinding
from axpipe.plugin import calls as plugin_calls
from axpipe.plugin import entrypoints, registry
from axpipe.records import record

NAMESPACE = "axpipe.guards"

__all__ = ["GuardError", "GuardReport", "Selection", "Unavailable", "check_change", "find_cheating", "load_guards",
           "run_guards", "select_guards", "snapshot"]


class GuardError(AxpipeError):
    """A guard plugin failed while judging a change: the change is not known to be honest."""


@record(frozen=True)
class Unavailable:
    """An installed guard that could not be loaded, so it judges nothing: its name, the
    distribution(s) declaring it and the registry's error (which names both again)."""

    name: str
    distribution: str
    error: str

    def describe(self) -> str:
        return f"{self.error}, so it judged nothing"


@record
class GuardReport:
    """The findings, and what was judged: the change's source, files, guards and notes, and
    the installed guards that could not load and so did not judge it."""

    findings: list[GuardFinding]
    changes: ChangeSet
    guards: list[str] = field(default_factory=list)
    unavailable: list[Unavailable] = field(default_factory=list)

    @property
    def fired(self) -> bool:
        return bool(self.findings)


@record
class Selection:
    """The guards that will judge, by name, and the installed ones that could not load."""

    guards: dict[str, Guard]
    unavailable: list[Unavailable] = field(default_factory=list)


def select_guards(names: Sequence[str] | None = None) -> Selection:
    """The guards named, or by default every installed one.

    A guard the caller names must load: an unknown or broken name is a :class:`PluginError`
    (exit 2) naming what is available, or the distribution and error. By default a guard
    that fails to load is left out and listed in :attr:`Selection.unavailable` instead: a
    third party's broken plugin must not stop repairs that never asked for it (DESIGN §10),
    and the caller says which guard did not judge. Only when no installed guard loads at all
    is the default an error: then nothing could judge the change."""
    if names is not None:
        return Selection(_load_named(names))
    declared = entrypoints.entry_points(NAMESPACE)
    guards: dict[str, Guard] = {}
    unavailable: list[Unavailable] = []
    for name in sorted({entry.name for entry in declared}):
        try:
            guards[name] = _load_one(name)
        except PluginError as error:
            distribution = ", ".join(entry.distribution for entry in declared if entry.name == name)
            unavailable.append(Unavailable(name, distribution, error.message))
    if unavailable and not guards:
        raise PluginError("no installed guard could be loaded, so nothing could judge the change: "
                          + "; ".join(item.error for item in unavailable))
    return Selection(guards, unavailable)


def load_guards(names: Sequence[str] | None = None) -> dict[str, Guard]:
    """The guards by name: ``names``, or every installed one that loads (see
    :func:`select_guards`, which also says which ones did not)."""
    return select_guards(names).guards


def _load_named(names: Sequence[str]) -> dict[str, Guard]:
    chosen = list(dict.fromkeys(names))
    if not chosen:
        raise PluginError("name at least one guard; available: "
                          + ", ".join(sorted(registry.names(NAMESPACE))))
    return {name: _load_one(name) for name in chosen}


def _load_one(name: str) -> Guard:
    available = registry.names(NAMESPACE)
    if name not in available:
        raise PluginError(not_found_message("guard", name, available) + f" (entry point group {NAMESPACE})")
    guard = registry.load(NAMESPACE, name)
    if not isinstance(guard, Guard):
        raise PluginError(f"guard '{name}' does not satisfy the Guard protocol "
                          "(params_schema, suffixes, describe(), check())")
    return guard


def run_guards(changes: ChangeSet, context: GuardContext, guards: dict[str, Guard]) -> list[GuardFinding]:
    """Every finding of every guard, sorted by file and line, without duplicates."""
    findings: set[GuardFinding] = set()
    for name, guard in guards.items():
        if not changes.matching(tuple(guard.suffixes)):
            continue
        try:
            found = plugin_calls.call(guard, "check", changes, context, returns=list)
            stray = next((item for item in found if not isinstance(item, GuardFinding)), None)
            if stray is not None:
                raise plugin_calls.PluginFault(registry.describe(guard) + " check()",
                                               f"returned a list holding {type(stray).__name__} {stray!r:.80}, "
                                               "not GuardFinding")
        except plugin_calls.PluginFault as fault:
            # Whatever the guard did (raised, called sys.exit, returned junk), the change is not
            # known to be honest: never read as "nothing found" (nor as exit 0).
            entry = registry.origin(guard)
            where = f" (from {entry.distribution})" if entry is not None else ""
            raise GuardError(f"guard '{name}' failed on {changes.source}: {fault.cause}. The change was not "
                             f"judged{where}; run with AXPIPE_DEBUG=1 for the traceback") from fault
        findings.update(finding if finding.plugin else _with_plugin(finding, name) for finding in found)
    return sorted(findings)


def _with_plugin(finding: GuardFinding, name: str) -> GuardFinding:
    return GuardFinding(finding.file, finding.line, finding.guard, finding.evidence, name)


def check_change(root: Path, base: str | None = "HEAD", context: GuardContext | None = None,
                 guards: Sequence[str] | None = None, *, patch: str | None = None,
                 patch_source: str = "<patch>", staged: bool = False, runner: str | None = None) -> GuardReport:
    """Judge one change. With ``patch`` (a diff's text) the change is that diff, completed
    from the files under ``root``; otherwise it is ``base`` (a revision, tree id or
    :func:`snapshot`) against the working tree, or against the index with ``staged``.

    ``runner`` (``auto``, or a name of :data:`axpipe.guard.runner_tests.RUNNERS`) also asks the
    project's runner what it collects at the base and now (:mod:`axpipe.guard.runner_tests`), so
    the guards judge test identity from the runner; ``auto`` picks it from the context's
    commands and does nothing when none runs tests. Only for a change from git, not
    ``staged``: a patch has no base to run."""
    selection = select_guards(guards)
    loaded = selection.guards
    suffixes = tuple(dict.fromkeys(suffix for guard in loaded.values() for suffix in guard.suffixes))
    if patch is not None:
        changes = from_patch(patch, patch_source, root, suffixes=suffixes)
    else:
        changes = from_git(root, base or "HEAD", staged=staged, suffixes=suffixes)  # any folder of the work tree
    context = context or GuardContext()
    if runner is not None and patch is None and not staged and changes.root is not None:
        context = _with_collection(changes, base or "HEAD", context, runner)
    findings = run_guards(changes, context, loaded)
    return GuardReport(findings=findings, changes=changes, guards=list(loaded), unavailable=selection.unavailable)


def _with_collection(changes: ChangeSet, base: str, context: GuardContext, runner: str) -> GuardContext:
    """``context`` with what the runner collects at ``base`` and now (None when ``auto``
    finds no runner among the commands). A runner that cannot list the tests leaves an
    error in it, and a note: the guards then judge from the text and say so."""
    from dataclasses import replace

    assert changes.root is not None
    commands = context.commands or ([context.command] if context.command else [])
    found = runner_tests.detect(changes.root / context.workdir, commands, None if runner == "auto" else runner)
    if found is None:
        if runner != "auto":
            raise InputError(f"--runner: unknown runner '{runner}'; one of {', '.join(runner_tests.RUNNERS)}")
        return context
    project = context.workdir.rstrip("/")
    after = runner_tests.collect(found, changes.root, project=project)
    try:
        with runner_tests.baseline(changes.root, base) as folder:
            before = runner_tests.collect(found, folder, project=project)
    except OSError as problem:
        before = runner_tests.Collection(found.name, error=str(problem))
    failed = (before.error and f"at the base, {before.error}") or (after.error and f"after the change, {after.error}")
    if failed:
        changes.notes.append(f"{failed}: test identity judged from the change's text")
        return replace(context, collected=CollectedTests(found.name, error=failed))

    def named(collection: runner_tests.Collection) -> dict[tuple[str, str], str]:
        prefix = f"{project}/" if project else ""
        return {(prefix + path, name): status for (path, name), status in collection.names().items()}

    return replace(context, collected=CollectedTests(found.name, named(before), named(after)))


def find_cheating(root: Path, base: str | None = "HEAD", context: GuardContext | None = None,
                  guards: Sequence[str] | None = None, *, runner: str | None = None) -> list[GuardFinding]:
    """What the repair loop asks after each fix: the findings of ``guards`` (default: every
    installed guard that loads, see :func:`select_guards`) on the change from ``base`` to the
    working tree under ``root``. Empty when the change looks honest. Raises
    :class:`~axpipe.errors.InputError` for an unknown revision or a folder outside git,
    :class:`PluginError` for an unknown or broken named guard, :class:`GuardError` when a
    guard crashes (never read a crash as "honest")."""
    return check_change(root, base, context, guards, runner=runner).findings
