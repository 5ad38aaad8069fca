"""The pull request's body, built from the goal's closing criteria (DESIGN §8, §16).

One line per acceptance criterion, in the criteria's natural order:

- ``closes`` and ``found`` criteria QA passed: ``- [x] ✓`` with the evidence: the receipt
  of each proving check (its id and digest), the QA report's line, and the screenshot
  file where the checker left one;
- criteria a person must look at (a ``found`` criterion without a checker, anything that did
  not pass): ``- [ ]`` and why;
- ``process`` criteria: a checklist for people, ``- [ ]``.

Held-out checks are never named: their lines say a held-out check passed.
"""

from __future__ import annotations

from axpipe.records import record


@record
class Criterion:
    id: str
    tag: str
    text: str
    result: str  # PASS | FAIL | REVIEWER (the QA report's line)
    qa_line: str
    receipts: list[tuple[str, str]]  # (receipt id, digest) of the proving checks; held out: ("held-out", "")
    screenshot: str | None = None


@record
class Summary:
    task: str
    objective: str
    branch: str
    base: str
    contract: str | None
    commits: list[tuple[str, str]]  # (sha, subject) on the branch since the base, oldest first


def render(summary: Summary, criteria: list[Criterion]) -> str:
    out = [summary.objective.strip(), "",
           f"Task `{summary.task}`: {len(summary.commits)} commit(s) on `{summary.branch}` since `{summary.base}`"
           + (f"; contract `sha256:{summary.contract[:12]}`." if summary.contract else ".")]
    checked = [item for item in criteria if item.tag != "process"]
    process = [item for item in criteria if item.tag == "process"]
    if checked:
        out += ["", "## Acceptance criteria", ""]
        out += [_line(item) for item in checked]
    if process:
        out += ["", "## Process", ""]
        out += [f"- [ ] **{item.id}** {item.text}" for item in process]
    out += ["", "## Commits", ""]
    out += [f"- `{sha[:12]}` {subject}" for sha, subject in summary.commits]
    out += ["", "---", "Opened by axpipe after the branch contract held. Each ✓ names the receipt of a check that "
                       "passed on the checkout this branch was pushed from; unchecked lines are for a person."]
    return "\n".join(out) + "\n"


def _line(item: Criterion) -> str:
    head = f"**{item.id}** ({item.tag}) {item.text}"
    if item.result != "PASS":
        why = "for a person to look at" if item.result == "REVIEWER" else "not passed"
        return f"- [ ] {head}: {why} (QA: `{item.qa_line}`)"
    evidence = [f"receipt `{rid}` sha256:{digest[:12]}" if rid != "held-out" else "a held-out check passed"
                for rid, digest in item.receipts]
    evidence.append(f"QA: `{item.qa_line}`")
    if item.screenshot:
        evidence.append(f"screenshot `{item.screenshot}`")
    return f"- [x] ✓ {head}: " + "; ".join(evidence)
