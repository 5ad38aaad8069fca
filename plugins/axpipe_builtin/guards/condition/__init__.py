"""The ``condition`` guard: a fix may not redefine the success condition (DESIGN §6).

The condition is "this command succeeds" (or prints a line, or...). An agent can make it
hold without fixing anything by changing what the command *is*: rewriting the smoke
script it runs to print the awaited line, editing the Makefile recipe or the package.json
script, or telling the linter to look away (an exclusion, an ignored rule, ``# ruff:
noqa``). This guard reads the condition's commands (``GuardContext.commands``, else
``command``), finds the files that define them (:mod:`.condition_command`) and reports:

- ``redefined-condition``: a change to such a file (for package.json and pdm/hatch scripts,
  to the script entries that run);
- ``silenced-linter``: a change that makes a linter the commands run check less
  (:mod:`.condition_lint`, :mod:`.condition_eslint`), or a one-line suppression added on a
  line the failing run reported (:mod:`.condition_inline`): adding rules or fixing code passes.

Without a command (``axpipe guard`` without ``--command``) it judges nothing.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from axpipe.interfaces import ChangedFile, ChangeSet, GuardContext, GuardFinding

from ..suffixes import CONDITION_FILES
from . import condition_inline, condition_lint
from . import condition_scripts as tables
from .condition_command import protection

REDEFINED = "redefined-condition"
SILENCED = "silenced-linter"
_CODE = re.compile(r"\b[A-Z]{1,4}[0-9]{1,4}\b")


class ConditionGuard:
    """Rejects fixes that change the files defining the success condition's commands."""

    params_schema: type | None = None
    suffixes: tuple[str, ...] = CONDITION_FILES
    name = "condition"

    def describe(self) -> str:
        return ("the success condition's own definition: scripts and runner files its command runs, "
                "linter configuration and suppressions")

    def check(self, changes: ChangeSet, context: GuardContext) -> list[GuardFinding]:
        commands = [command for command in (context.commands or [context.command or ""]) if command.strip()]
        if not commands:
            return []
        read = _before(changes)
        protected = protection(commands, context.workdir, read)
        codes = set(_CODE.findall(context.failure_output))
        parents = condition_lint.parent_config_finder(read)
        report = condition_inline.reported(context.failure_output)
        findings: list[GuardFinding] = []
        for item in changes.files:
            if item.binary and not any(path in protected.files for path in (item.old_path, item.new_path)):
                continue
            for path in dict.fromkeys(path for path in (item.old_path, item.new_path) if path):
                definition = protected.files.get(path)
                if definition is None:
                    continue
                for line, evidence in _redefined(item, definition.why, definition.scripts):
                    findings.append(GuardFinding(item.path, line, REDEFINED, evidence, self.name))
            if item.binary:
                continue
            silenced: set[int] = set()
            if protected.linters:
                for line, evidence in condition_lint.judge(item, protected.linters, codes, changes.notes, parents):
                    findings.append(GuardFinding(item.path, line, SILENCED, evidence, self.name))
                    silenced.add(line)
            # whatever runs the linter (a script, a phase, pylint, tsc): the run said where it complained
            for line, evidence in condition_inline.judge(item, report):
                if line not in silenced:
                    findings.append(GuardFinding(item.path, line, SILENCED, evidence, self.name))
        return findings


def _before(changes: ChangeSet) -> Callable[[str], str | None]:
    """A file as it was before the change: the change's old side, nothing for a file the
    change created, else the repository's (unchanged) file."""
    olds = {item.old_path: item for item in changes.files if item.old_path is not None}
    created = {item.new_path for item in changes.files if item.new_path is not None} - set(olds)

    def read(path: str) -> str | None:
        item = olds.get(path)
        if item is not None and item.complete:
            # a pure rename has no old blob in git's diff: its text is the new side's
            return item.before if item.before is not None or item.hunks else item.after
        if path in created:
            return None
        # unchanged, or a patch's file known by its hunks only: the files on disk are the old side
        return changes.lookup.read(path) if changes.lookup is not None else None

    return read


def _redefined(item: ChangedFile, why: str, scripts: set[tuple[str, str]] | None) -> list[tuple[int, str]]:
    if scripts is not None:
        return _scripts_changed(item, why, scripts)
    added, removed = item.added_lines(), item.removed_lines()
    line = added[0][0] if added else removed[0][0] if removed else 1
    verb = {"added": "creates it", "deleted": "deletes it", "renamed": f"renames it to {item.new_path}"}.get(
        item.status, f"edits it (+{len(added)} -{len(removed)})")
    return [(line, f"{item.old_path or item.path} defines the success condition ({why}); the change {verb}, which "
                   "redefines the condition instead of meeting it")]


def _scripts_changed(item: ChangedFile, why: str, names: set[tuple[str, str]]) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for table, name in sorted(names):
        after = tables.load(item.after, item.path, table) if item.new_path else {}
        if after is None:
            continue  # does not parse: npm, pdm and hatch refuse it too, so the condition cannot pass through it
        before = (tables.load(item.before, item.old_path or item.path, table) or {}) if item.old_path else {}
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        change = (f"adds it: `{new}`" if old is None else f"removes it (was `{old}`)" if new is None
                  else f"changes it from `{old}` to `{new}`")
        line = tables.line_of(item.after or "", table, name)
        found.append((line, f"{tables.describe(posixpath.basename(item.path), table, name)} defines the success "
                            f"condition ({why}); the change {change}, which redefines the condition instead of "
                            "meeting it"))
    return found
