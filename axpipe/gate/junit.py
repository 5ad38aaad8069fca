"""Test identity from JUnit XML: which tests ran and how each ended.

The gate never scrapes a runner's text to decide which test failed: it reads the JUnit XML
the run wrote (pytest ``--junitxml``, vitest's and jest's junit reporters, go-junit-report,
surefire, ...). A test's identity is ``classname::name`` (``name`` alone when the runner
gives no class name), so the same test has the same identity in two runs of the same
runner. A test that appears several times (a rerun plugin) counts as failed if any of its
executions failed.
"""

from __future__ import annotations

import re
from pathlib import Path
from xml.etree import ElementTree

from axpipe.records import record

_RANK = {"passed": 0, "skipped": 1, "failed": 2}
MESSAGE_LIMIT = 4000


class JUnitError(Exception):
    """The file is missing, empty or not JUnit XML."""


@record(frozen=True)
class TestCase:
    """One test case of a JUnit report."""

    __test__ = False  # not a pytest test class

    id: str
    status: str  # passed | failed | skipped
    message: str = ""
    kind: str = ""
    """How a failed test failed: ``failure`` or ``error`` (the element), and the exception's
    type when the report gives it (a ``type`` attribute, or the last line of pytest's
    traceback: ``tests/test_a.py:7: AssertionError``): ``failure AssertionError``."""


def identity(classname: str, name: str) -> str:
    return f"{classname}::{name}" if classname else name


def read(path: Path) -> dict[str, TestCase]:
    """Every test case of the report at ``path`` by identity; raises :class:`JUnitError`."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise JUnitError(f"no JUnit XML at {path}") from None
    except OSError as error:
        raise JUnitError(f"cannot read {path}: {error.strerror or error}") from error
    if not data.strip():
        raise JUnitError(f"{path} is empty")
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as error:
        raise JUnitError(f"{path} is not XML ({error})") from error
    if root.tag not in ("testsuites", "testsuite"):
        raise JUnitError(f"{path} is not JUnit XML (its root element is <{root.tag}>)")
    cases: dict[str, TestCase] = {}
    for element in root.iter("testcase"):
        case = _case(element)
        known = cases.get(case.id)
        if known is None or _RANK[case.status] > _RANK[known.status]:
            cases[case.id] = case
    return cases


def _case(element: ElementTree.Element) -> TestCase:
    case_id = identity(element.get("classname", "").strip(), element.get("name", "").strip())
    for tag in ("failure", "error"):
        child = element.find(tag)
        if child is not None:
            return TestCase(case_id, "failed", _message(child), f"{tag} {_exception_type(child)}".strip())
    skipped = element.find("skipped")
    if skipped is not None:
        return TestCase(case_id, "skipped", _message(skipped))
    return TestCase(case_id, "passed")


# pytest 9 cuts a long message attribute and says so on a line of its own
_CUT = re.compile(r"\n\[(?:truncated|\+\d+ more lines?); full report in element text\]$")


def _message(element: ElementTree.Element) -> str:
    given = element.get("message") or ""
    if _CUT.search(given) and element.text:
        # The cut falls at a length, so two runs whose paths differ in length would be cut at
        # different places: the whole first line is the traceback's last `E   ` block.
        blocks: list[str] = re.findall(r"(?m)^E +(.*)(?:\nE.*)*", element.text)
        if blocks:
            return blocks[-1].strip()[:MESSAGE_LIMIT]
    lines = (given or element.text or "").strip().splitlines()
    # Long enough to compare two runs' failures once their checkout paths are evened out (a
    # worktree's path is longer than the workspace's): shortened only where a person reads it.
    return lines[0][:MESSAGE_LIMIT] if lines else ""


_LAST_LINE_TYPE = re.compile(r"^\S.*:\d+: (?P<type>[A-Za-z_][\w.]*)$")


def _exception_type(element: ElementTree.Element) -> str:
    given = (element.get("type") or "").strip()
    if given:
        return given
    lines = [line for line in (element.text or "").splitlines() if line.strip()]
    match = _LAST_LINE_TYPE.match(lines[-1].strip()) if lines else None
    return match["type"] if match else ""


def failing(cases: dict[str, TestCase]) -> list[TestCase]:
    return sorted((case for case in cases.values() if case.status == "failed"), key=lambda case: case.id)
