"""The ``cli-review`` receipt verifier (DESIGN §9): review rounds, verdicts, dispositions and
their regression tests, checked against the repository.

Every rule adds problems instead of stopping, so one run lists everything wrong, each with
its round, reviewer and finding id. The receipts prove that the named reviewers finished
with one verdict on the named commits, that every finding was judged, and that each fix's
regression test passed exactly once now; they do not prove that a test covers its finding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# The interfaces and pathlib load when a verification runs: `plugins list` imports every
# plugin, and these would be most of its start-up.
from axpipe import interfaces

if TYPE_CHECKING:
    from pathlib import Path


class CliReviewVerifier:
    """Verifies ``round-<n>/<cli>/`` receipts and ``dispositions.json`` under a root."""

    def verify(self, request: interfaces.ReceiptRequest) -> interfaces.ReceiptReport:
        from axpipe.errors import InputError
        from axpipe.review import revisions
        from axpipe_builtin import review_receipts

        root = request.root
        if not root.is_dir():
            raise InputError(f"--root: {root} is not a folder of review receipts")
        # The project folder around the workspace (a subfolder of the work tree in a monorepo):
        # regression files are named from it and their tests run in it, as the reviewers did.
        workspace = revisions.project_root(request.workspace)
        head = revisions.head(workspace)
        problems: list[interfaces.ReceiptProblem] = []

        def report(rule: str, message: str, **where: Any) -> None:
            problems.append(interfaces.ReceiptProblem(rule, message, **where))

        dirty = revisions.uncommitted(workspace, ignore=[root.resolve(), workspace / ".axpipe"])
        if dirty:
            shown = ", ".join(dirty[:10]) + (f" and {len(dirty) - 10} more" if len(dirty) > 10 else "")
            report("uncommitted", f"uncommitted changes block verification: {shown}")
        rounds = review_receipts.read_rounds(root, report)
        result = interfaces.ReceiptReport(problems, head=head)
        if not rounds:
            problems.sort(key=lambda p: (p.round if p.round is not None else -1, p.reviewer or "", p.finding or ""))
            return result
        final = rounds[-1]
        required = request.reviewers if request.reviewers is not None else sorted(final.reviewers)
        if request.reviewers is not None and not request.reviewers:
            report("reviewer", "the list of required reviewers is empty; name at least one")
        elif not required:
            report("reviewer", "the final round has no reviewer folder", round=final.number)
        for receipt in rounds:
            for name in required:
                if name not in receipt.reviewers:
                    report("reviewer", "required reviewer has no folder in this round", round=receipt.number,
                           reviewer=name)
            if receipt.revision is not None and revisions.resolve(workspace, receipt.revision) != receipt.revision:
                report("revision", f"revision {receipt.revision[:12]} is not a commit of this repository",
                       round=receipt.number)
        if final.revision is not None and final.revision != head:
            report("head", f"the final round reviewed {final.revision[:12]} but HEAD is {head[:12]}: review the "
                           "current commit", round=final.number)
        dispositions = self._dispositions(root, rounds, report)
        fixed = self._fixes(workspace, request.test_dir, rounds, dispositions, report)
        if fixed and dirty:
            report("tests", "regression tests not run: the checkout has uncommitted changes")
        elif fixed:
            result.tests = self._run_tests(request, workspace, fixed, report)
        result.rounds = [{"round": r.number, "revision": r.revision,
                          "reviewers": {name: (None if item.verdict is None else item.verdict.describe())
                                        for name, item in r.reviewers.items()}} for r in rounds]
        result.findings = [entry.to_json() for entry in dispositions]
        # Grouped by round, then reviewer and finding; the rules' order is kept within a group.
        problems.sort(key=lambda p: (p.round if p.round is not None else -1, p.reviewer or "", p.finding or ""))
        return result

    @staticmethod
    def _dispositions(root: Path, rounds: list[Any], report: Any) -> list[Any]:
        """Check that every finding of every verdict has exactly one disposition, and that
        every disposition names a finding some verdict reported."""
        from axpipe_builtin import review_receipts

        entries = review_receipts.read_dispositions(root, report)
        reported = {(r.number, name, finding) for r in rounds for name, item in r.reviewers.items()
                    if item.verdict is not None for finding in item.verdict.findings}
        if entries is None:
            if reported:
                report("dispositions", f"{review_receipts.DISPOSITIONS} is missing, but verdicts report "
                                       f"{len(reported)} finding(s)")
            entries = []
        by_number = {r.number: r for r in rounds}
        disposed = set()
        for entry in entries:
            disposed.add(entry.key())
            where = {"round": entry.round, "reviewer": entry.cli, "finding": entry.id}
            receipt = by_number.get(entry.round)
            if receipt is None:
                report("unknown-finding", "disposition of a round that does not exist", **where)
            elif entry.cli not in receipt.reviewers:
                report("unknown-finding", "disposition of a reviewer with no folder in that round", **where)
            elif entry.key() not in reported:
                verdict = receipt.reviewers[entry.cli].verdict
                said = verdict.describe() if verdict else "no valid verdict"
                report("unknown-finding", f"the reviewer's verdict does not list this finding ({said})", **where)
        for number, name, finding in sorted(reported - disposed):
            report("undisposed", "finding has no disposition in dispositions.json (fixed or rejected, with "
                                 "evidence)", round=number, reviewer=name, finding=finding)
        return entries

    @staticmethod
    def _fixes(workspace: Path, test_dir: str, rounds: list[Any], entries: list[Any],
               report: Any) -> dict[interfaces.NamedTest, list[Any]]:
        """Check each fixed finding's regression file and revision order; return the tests to run."""
        from axpipe.review import revisions
        from axpipe_builtin import review_receipts

        final = rounds[-1]
        by_number = {r.number: r for r in rounds}
        tests: dict[interfaces.NamedTest, list[Any]] = {}
        for entry in entries:
            if entry.status != "fixed" or entry.regression is None:
                continue
            where = {"round": entry.round, "reviewer": entry.cli, "finding": entry.id}
            regression = entry.regression
            problem = review_receipts.literal_path_problem(regression.file, test_dir)
            if problem is None:
                mode = revisions.mode_at(workspace, "HEAD", regression.file)
                if mode is None:
                    problem = f"{regression.file!r} is not a file committed at HEAD"
                elif mode not in revisions.FILE_MODES:
                    # a symlink's target can be anywhere, out of the repository included
                    problem = (f"{regression.file!r} is {revisions.OTHER_MODES.get(mode, f'mode {mode}')} at "
                               "HEAD, not a regular file: a regression test must be a repository file "
                               "(mode 100644 or 100755)")
            if problem is not None:
                report("regression", problem, **where)
            else:
                tests.setdefault(regression, []).append(entry)
            found_in = by_number.get(entry.round)
            if found_in is None or found_in.revision is None or final.revision is None:
                continue
            if entry.round >= final.number:
                report("fix-order", f"fixed in round {entry.round}, the final round: a fix needs a later review "
                                    "round on a newer revision", **where)
            elif found_in.revision == final.revision:
                report("fix-order", f"the final round reviewed the same revision {final.revision[:12]} as the "
                                    "round that found it: a fix needs a newer revision", **where)
            elif not revisions.is_ancestor(workspace, found_in.revision, final.revision):
                report("fix-order", f"the final revision {final.revision[:12]} does not descend from "
                                    f"{found_in.revision[:12]}, where the finding was reported", **where)
        return tests

    @staticmethod
    def _run_tests(request: interfaces.ReceiptRequest, workspace: Path, tests: dict[interfaces.NamedTest, list[Any]],
                   report: Any) -> list[interfaces.NamedTestResult]:
        from axpipe.errors import PluginError
        from axpipe.plugin import calls as plugin_calls
        from axpipe.plugin import registry

        groups: dict[str, list[interfaces.NamedTest]] = {}
        adapters: dict[str, Any] = {}
        broken: dict[str, str] = {}
        names = [request.test_adapter] if request.test_adapter else registry.names("axpipe.test_adapters")
        for name in names:
            try:
                adapters[name] = registry.load("axpipe.test_adapters", name)
            except PluginError as error:
                if request.test_adapter:
                    raise
                broken[name] = error.message  # only matters if a regression file needs it
        for test in tests:
            chosen = request.test_adapter or next(
                (name for name, adapter in adapters.items() if test.file.endswith(tuple(adapter.suffixes))), None)
            if chosen is None:
                also = "".join(f"; {name} is broken: {message}" for name, message in sorted(broken.items()))
                runs = sorted(name for name, adapter in adapters.items() if adapter.suffixes)  # not gate-only ones
                for entry in tests[test]:
                    report("tests", f"no test adapter runs {test.file} (chosen by file suffix; installed: "
                                    f"{', '.join(runs) or 'none'}{also})",
                           round=entry.round, reviewer=entry.cli, finding=entry.id)
                continue
            groups.setdefault(chosen, []).append(test)
        results: list[interfaces.NamedTestResult] = []
        if request.artifacts_dir is not None:
            artifacts = request.artifacts_dir
        else:  # under .axpipe/, which git ignores: running the tests must not dirty the checkout
            from axpipe.workspace import ensure_state_dir

            artifacts = ensure_state_dir(workspace) / "receipts"
        from axpipe.evidence import env as evidence_env

        for name, named in sorted(groups.items()):
            try:
                # the evidence environment: the tests leave no bytecode or cache in the checkout
                run = plugin_calls.call(adapters[name], "run", interfaces.TestRunRequest(
                    workspace=workspace, tests=named, timeout=request.timeout, artifacts_dir=artifacts / name,
                    on_output=request.on_output, env=evidence_env.variables(workspace), python=request.python),
                    returns=interfaces.TestRunReport)
            except plugin_calls.PluginFault as fault:  # a crashing adapter: its tests are not run, never passed
                run = interfaces.TestRunReport([], error=fault.message)
            if run.error is not None:
                for test in named:
                    for entry in tests[test]:
                        report("tests", f"test adapter {name} could not run {test.full_name}: {run.error}",
                               round=entry.round, reviewer=entry.cli, finding=entry.id)
                continue
            for outcome in run.results:
                results.append(outcome)
                if outcome.status is interfaces.NamedTestStatus.PASSED and outcome.executions == 1:
                    continue
                for entry in tests[outcome.test]:
                    report("tests", _test_problem(outcome), round=entry.round, reviewer=entry.cli, finding=entry.id)
        return results


def _test_problem(outcome: interfaces.NamedTestResult) -> str:
    name = outcome.test.full_name
    note = f" ({outcome.note})" if outcome.note else ""
    if outcome.executions > 1:
        return f"regression test {name!r} ran {outcome.executions} times, not once: the name is ambiguous{note}"
    return f"regression test {name!r} {_WORDS[outcome.status]}{note}"


# Keyed by the statuses' values (NamedTestStatus is a StrEnum): the interfaces load when a
# verification runs, not when `plugins list` imports this module.
_WORDS = {"failed": "failed", "skipped": "was skipped", "missing": "is missing: it did not run", "passed": "passed"}
