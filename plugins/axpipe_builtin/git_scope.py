"""The ``git-scope`` check kind: every path of every commit since the baseline is in scope.

See :mod:`axpipe_builtin.commit_scope` for the rules. The check needs no command. Its ``scope``
defaults to the recipe's ``scope:`` (filled in when the recipe is validated, so the frozen
contract holds the actual paths), and its ``baseline`` to ``{BASELINE}``, the HEAD at plan time.
"""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar

from axpipe import interfaces
from axpipe.records import record


@record
class GitScopeParams:
    """Parameters of the ``git-scope`` check kind."""

    baseline: str = field(default="{BASELINE}", metadata={"doc": "the commit the range starts from"})
    scope: list[str] | None = field(default=None, metadata={
        "doc": "paths and globs every changed path must match (default: the recipe's `scope:`)"})
    subject: str | None = field(default=None, metadata={"doc": "regex every commit subject must match (re.search)",
                                                         "regex": True})
    allow_merges: bool = field(default=False, metadata={"doc": "accept merge commits, checked against each parent"})
    branch: str | None = field(default=None, metadata={"doc": "regex the current branch's name must match",
                                                       "regex": True})


class GitScopeCheck:
    """Passes when ``baseline..HEAD`` is non-empty, the baseline is an ancestor, and every
    changed path of every commit is in scope (and subjects and branch match)."""

    params_schema = GitScopeParams
    needs_command = False
    # param -> the recipe key that fills it when a check leaves it out (see axpipe.recipe.rules)
    recipe_defaults: ClassVar[dict[str, str]] = {"scope": "scope"}
    # the verdict reads commits (and HEAD), not only files: receipts bind HEAD (axpipe.goal.receipts)
    depends_on_history: ClassVar[bool] = True

    def describe(self, params: GitScopeParams) -> str:
        scope = ", ".join(params.scope or []) or "(nothing)"
        extra = f", subjects matching {params.subject!r}" if params.subject else ""
        return f"every path of every commit since {params.baseline} inside {scope}{extra}"

    def run(self, request: interfaces.CheckRequest) -> interfaces.CheckOutcome:
        import time

        from axpipe.errors import InputError
        from axpipe.unit.scope import Scope
        from axpipe_builtin.commit_scope import CommitScopeError, check

        params: GitScopeParams = request.params
        started = time.monotonic()
        if params.scope is None:
            return interfaces.CheckOutcome(interfaces.CheckStatus.ERROR,
                                           "git-scope needs `scope` (or the recipe's `scope:`)")
        try:
            report = check(request.cwd, baseline=params.baseline, scope=Scope(params.scope), subject=params.subject,
                           allow_merges=params.allow_merges, branch=params.branch)
        except (CommitScopeError, InputError) as error:
            return interfaces.CheckOutcome(interfaces.CheckStatus.ERROR, f"git-scope could not be checked: {error}",
                                           duration=time.monotonic() - started)
        lines = [violation.describe() for violation in report.violations]
        details = {"baseline": report.baseline, "head": report.head, "commits": report.commits,
                   "violations": [{"commit": v.commit, "path": v.path, "message": v.message}
                                  for v in report.violations]}
        duration = time.monotonic() - started
        if report.ok:
            return interfaces.CheckOutcome(interfaces.CheckStatus.PASSED,
                                           f"{len(report.commits)} commit(s), {report.paths} changed path(s), "
                                           f"all inside scope", output_tail="", duration=duration, details=details)
        first = lines[0]
        more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
        return interfaces.CheckOutcome(interfaces.CheckStatus.FAILED, f"{first}{more}",
                                       output_tail="\n".join(lines) + "\n", duration=duration, details=details)
