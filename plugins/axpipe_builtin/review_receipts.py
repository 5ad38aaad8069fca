"""Reading a folder of review receipts into data, noting every problem on the way.

The receipts root holds ``round-<n>/`` folders (see :mod:`axpipe.review.round`), an
optional ``attempts/`` folder (failed attempts, never read as receipts) and
``dispositions.json``. Nothing here runs anything or decides about git; the verifier
(:mod:`axpipe_builtin.receipt_verifiers`) combines what is read with the repository.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import Any

from axpipe.interfaces import NamedTest
from axpipe.records import record
from axpipe.review import verdicts

DISPOSITIONS = "dispositions.json"
STATUSES = ("fixed", "rejected")
_ROUND = re.compile(r"round-(\d+)")
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_ENTRY_KEYS = ("round", "cli", "id", "status", "evidence", "regression")
_REGRESSION_KEYS = ("file", "fullName")

Report = Callable[..., None]


@record
class ReviewerReceipt:
    """One reviewer's folder in a round: its verdict when the receipt holds one."""

    name: str
    verdict: verdicts.Verdict | None


@record
class RoundReceipt:
    number: int
    folder: Path
    revision: str | None
    reviewers: dict[str, ReviewerReceipt] = field(default_factory=dict)


@record
class Disposition:
    """One entry of ``dispositions.json``, already checked for shape."""

    index: int
    round: int
    cli: str
    id: str
    status: str
    evidence: str
    regression: NamedTest | None

    def key(self) -> tuple[int, str, str]:
        return (self.round, self.cli, self.id)

    def to_json(self) -> dict[str, Any]:
        regression = None if self.regression is None else {"file": self.regression.file,
                                                           "fullName": self.regression.full_name}
        return {"round": self.round, "cli": self.cli, "id": self.id, "status": self.status,
                "evidence": self.evidence, "regression": regression}


def read_rounds(root: Path, report: Report) -> list[RoundReceipt]:
    """Every ``round-<n>`` folder, numbered 1..n without gaps or twins, with its receipts."""
    found: dict[int, list[Path]] = {}
    for item in sorted(root.iterdir()):
        match = _ROUND.fullmatch(item.name)
        if match and item.is_dir():
            found.setdefault(int(match.group(1)), []).append(item)
    if not found:
        report("rounds", f"no round-<n> folders under {root}")
        return []
    for number, folders in found.items():
        if len(folders) > 1:
            report("rounds", f"several folders are round {number}: {', '.join(f.name for f in folders)}",
                   round=number)
    expected = list(range(1, max(found) + 1))
    missing = [number for number in expected if number not in found]
    if missing:
        report("rounds", f"rounds must be numbered 1..{max(found)} without gaps; missing "
                         f"{', '.join(f'round-{n}' for n in missing)}")
    return [_read_round(number, folders[0], report) for number, folders in sorted(found.items())]


def _read_round(number: int, folder: Path, report: Report) -> RoundReceipt:
    revision_file = folder / "revision.txt"
    revision: str | None = None
    if not revision_file.is_file():
        report("revision", "revision.txt is missing", round=number)
    else:
        text = revision_file.read_text(encoding="utf-8", errors="replace").strip()
        if not _SHA.fullmatch(text):
            report("revision", f"revision.txt must hold a full commit SHA, not {text[:60]!r}", round=number)
        else:
            revision = text
    receipt = RoundReceipt(number, folder, revision)
    for item in sorted(folder.iterdir()):
        if item.is_dir():
            receipt.reviewers[item.name] = read_reviewer(number, item, report)
    return receipt


def read_reviewer(number: int, folder: Path, report: Report) -> ReviewerReceipt:
    """A reviewer's receipt: ``exit.txt`` is 0 and its output ends with exactly one verdict."""
    name = folder.name

    def problem(rule: str, message: str) -> None:
        report(rule, message, round=number, reviewer=name)

    exit_file = folder / "exit.txt"
    exited_zero = False
    if not exit_file.is_file():
        problem("exit", "exit.txt is missing")
    else:
        text = exit_file.read_text(encoding="utf-8", errors="replace").strip()
        exited_zero = text == "0"
        if not exited_zero:
            problem("exit", f"exit.txt is {text[:40]!r}, not 0: a failed review is an attempt, not a receipt")
    outputs = [folder / name for name in ("stdout.txt", "stdout.jsonl") if (folder / name).is_file()]
    if not outputs:
        problem("output", "neither stdout.txt nor stdout.jsonl is present")
        return ReviewerReceipt(name, None)
    if len(outputs) > 1:
        problem("output", "both stdout.txt and stdout.jsonl are present; a receipt has one output")
        return ReviewerReceipt(name, None)
    output = outputs[0]
    try:
        verdict = verdicts.parse_output(output.read_text(encoding="utf-8", errors="replace"),
                                        jsonl=output.suffix == ".jsonl")
    except verdicts.VerdictProblem as error:
        problem("verdict", f"{output.name}: {error.message}")
        return ReviewerReceipt(name, None)
    return ReviewerReceipt(name, verdict if exited_zero else None)


def read_dispositions(root: Path, report: Report) -> list[Disposition] | None:
    """The entries of ``dispositions.json`` that have the right shape (None: no file)."""
    path = root / DISPOSITIONS
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        report("dispositions", f"{DISPOSITIONS} is not valid JSON: {error}")
        return []
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        report("dispositions", f'{DISPOSITIONS} must be an object with a "findings" array')
        return []
    entries: list[Disposition] = []
    seen: dict[tuple[int, str, str], int] = {}
    for index, raw in enumerate(data["findings"]):
        entry = _entry(index, raw, report)
        if entry is None:
            continue
        if entry.key() in seen:
            report("duplicate", f"findings[{index}] disposes of the same finding as findings[{seen[entry.key()]}]",
                   round=entry.round, reviewer=entry.cli, finding=entry.id)
            continue
        seen[entry.key()] = index
        entries.append(entry)
    return entries


def _entry(index: int, raw: Any, report: Report) -> Disposition | None:
    where = f"findings[{index}]"
    if not isinstance(raw, dict):
        report("dispositions", f"{where} must be an object")
        return None
    round_number, cli, finding = raw.get("round"), raw.get("cli"), raw.get("id")
    ids = {"round": round_number if _is_int(round_number) else None,
           "reviewer": cli if isinstance(cli, str) else None, "finding": finding if isinstance(finding, str) else None}
    problems: list[str] = []
    unknown = sorted(set(raw) - set(_ENTRY_KEYS))
    if unknown:
        problems.append(f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(_ENTRY_KEYS)}")
    if not _is_int(round_number):
        problems.append(f"round must be an integer, got {round_number!r}")
    for key, value in (("cli", cli), ("id", finding)):
        if not isinstance(value, str) or not value.strip():
            problems.append(f"{key} must be a non-blank string, got {value!r}")
    status = raw.get("status")
    if status not in STATUSES:
        problems.append(f"status must be fixed or rejected, got {status!r}")
    evidence = raw.get("evidence")
    if not isinstance(evidence, str) or not evidence.strip():
        problems.append("evidence must be non-blank text saying why the finding is fixed or rejected")
    regression = _regression(raw.get("regression"), status, problems)
    for message in problems:
        report("dispositions", f"{where}: {message}", **ids)
    if problems:
        return None
    return Disposition(index, round_number, cli, finding, status, evidence, regression)  # type: ignore[arg-type]


def _regression(raw: Any, status: Any, problems: list[str]) -> NamedTest | None:
    if raw is None:
        if status == "fixed":
            problems.append('a fixed finding needs "regression": {"file", "fullName"} naming the test that '
                            "proves the fix")
        return None
    if not isinstance(raw, dict):
        problems.append("regression must be an object with file and fullName")
        return None
    unknown = sorted(set(raw) - set(_REGRESSION_KEYS))
    if unknown:
        problems.append(f"regression has unknown key(s) {', '.join(unknown)}; allowed: file, fullName")
    file, full_name = raw.get("file"), raw.get("fullName")
    if not isinstance(file, str) or not file.strip():
        problems.append("regression.file must be a repository path")
    if not isinstance(full_name, str) or not full_name.strip():
        problems.append("regression.fullName must be the test's exact full name")
    if problems:
        return None
    return NamedTest(file, full_name)  # type: ignore[arg-type]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def literal_path_problem(path: str, test_dir: str) -> str | None:
    """Why ``path`` is not a literal repository path under ``test_dir`` (None when it is)."""
    if path.startswith("/") or "\\" in path:
        return f"{path!r} must be a relative repository path with forward slashes"
    if any(char in path for char in "*?[]"):
        return f"{path!r} must be a literal path, not a pattern"
    if posixpath.normpath(path) != path or path.startswith("../") or "/./" in f"/{path}":
        return f"{path!r} must be a normalised path (no '.', '..' or doubled slashes)"
    folder = posixpath.normpath(test_dir.strip("/")) if test_dir.strip("/") else "."
    if folder != "." and not path.startswith(folder + "/"):
        return f"{path!r} is not under the test folder {folder}/"
    return None
