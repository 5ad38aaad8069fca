"""How a receipts verification reads: the text a person sees and the ``--json`` shape.

``--json`` (stable, documented in docs/cli.md)::

    {"ok": bool, "root": str, "head": str,
     "rounds": [{"round": n, "revision": sha, "reviewers": {name: "no findings" | "findings F1" | null}}],
     "findings": [{"round", "cli", "id", "status", "evidence", "regression": {"file", "fullName"} | null}],
     "tests": [{"file", "fullName", "status", "executions", "note"}],
     "problems": [{"rule", "round", "reviewer", "finding", "message"}]}
"""

from __future__ import annotations

from typing import Any

from axpipe.interfaces import ReceiptReport


def to_json(report: ReceiptReport, root: str) -> dict[str, Any]:
    return {"ok": report.ok, "root": root, "head": report.head, "rounds": report.rounds,
            "findings": report.findings, "tests": [test.to_json() for test in report.tests],
            "problems": [problem.to_json() for problem in report.problems]}


def summary(report: ReceiptReport) -> str:
    """One line: what was verified, or how many problems and the first of them."""
    if not report.ok:
        count = len(report.problems)
        noun = "problem" if count == 1 else "problems"
        return f"receipts do not verify ({count} {noun}); first: {report.problems[0].render()}"
    fixed = sum(1 for finding in report.findings if finding["status"] == "fixed")
    rejected = len(report.findings) - fixed
    reviewers = sorted({name for entry in report.rounds for name in entry["reviewers"]})
    return (f"receipts verified: {len(report.rounds)} round(s) by {', '.join(reviewers)}; "
            f"{len(report.findings)} finding(s), {fixed} fixed with a passing regression test, {rejected} rejected")


def render(report: ReceiptReport, root: str) -> str:
    """The full text report: rounds, findings, tests, then every problem."""
    lines = [f"Review receipts in {root} (HEAD {report.head[:12] if report.head else '?'})"]
    for entry in report.rounds:
        verdicts = "; ".join(f"{name}: {verdict or 'no valid receipt'}" for name, verdict in entry["reviewers"].items())
        revision = (entry["revision"] or "?")[:12]
        lines.append(f"  round-{entry['round']}  {revision}  {verdicts or '(no reviewers)'}")
    for finding in report.findings:
        regression = finding["regression"]
        test = f"  test {regression['fullName']}" if regression else ""
        where = f"round-{finding['round']}/{finding['cli']}"
        lines.append(f"  finding {finding['id']} ({where}): {finding['status']}{test}")
    for result in report.tests:
        lines.append(f"  test {result.test.full_name}: {result.status.value}, executed {result.executions} time(s)")
    if report.ok:
        lines.append(f"Verified: {summary(report).removeprefix('receipts verified: ')}")
    else:
        count = len(report.problems)
        lines.append(f"Not verified: {count} problem{'s' if count != 1 else ''}")
        lines.extend(f"  - {problem.render()}" for problem in report.problems)
    return "\n".join(lines) + "\n"
