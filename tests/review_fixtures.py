"""A valid set of review receipts in a real git repository, for the verifier's tests.

The story: round 1 reviews commit A, where ``add`` subtracts. Reviewer alpha reports F1 (the
bug) and F2 (a style remark); beta, a JSONL reviewer, reports nothing. Commit B fixes the
bug and adds the regression test ``test_add_regression``; round 2 reviews B and both
reviewers report nothing. ``dispositions.json`` marks F1 fixed (with that test) and F2
rejected. Commit B also holds tests that fail, skip or are parametrised, which no valid
disposition names: only the named tests matter.

Each invalid set in the tests changes one thing of this story.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers import git

CALC_BUGGY = "def add(a, b):\n    return a - b\n"
CALC_FIXED = "def add(a, b):\n    return a + b\n"
TESTS_A = """\
from calc import add


def test_add_small():
    assert add(0, 0) == 0
"""
TESTS_B = TESTS_A + """

def test_add_regression():
    assert add(2, 3) == 5


def test_known_failure():
    assert add(1, 1) == 3


import pytest


@pytest.mark.skip(reason="not today")
def test_skipped():
    assert True


@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert add(n, 0) == n


class TestCalc:
    def test_in_class(self):
        assert add(1, 2) == 3
"""
REGRESSION = {"file": "tests/test_calc.py", "fullName": "tests/test_calc.py::test_add_regression"}


@dataclass
class Receipts:
    repo: Path
    root: Path
    a: str
    b: str

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def dispositions(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.root / "dispositions.json").read_text())
        return data

    def set_dispositions(self, data: Any) -> None:
        text = data if isinstance(data, str) else json.dumps(data, indent=2)
        (self.root / "dispositions.json").write_text(text)

    def edit_finding(self, index: int, **changes: Any) -> None:
        data = self.dispositions()
        for key, value in changes.items():
            if value is None:
                data["findings"][index].pop(key, None)
            else:
                data["findings"][index][key] = value
        self.set_dispositions(data)

    def commit(self, path: str, text: str, message: str) -> str:
        (self.repo / path).parent.mkdir(parents=True, exist_ok=True)
        (self.repo / path).write_text(text)
        git(self.repo, "add", "-A", "--", path)
        git(self.repo, "commit", "-qm", message)
        return git(self.repo, "rev-parse", "HEAD").strip()


def text_receipt(verdict: str, exit_code: str = "0\n") -> dict[str, str]:
    return {"exit.txt": exit_code, "stdout.txt": f"Looked at the change.\n{verdict}\n"}


def jsonl_receipt(verdict: str) -> dict[str, str]:
    events = [{"type": "status", "message": "reading"}, {"type": "text", "text": "Looked at the change."},
              {"type": "text", "text": verdict}]
    return {"exit.txt": "0\n", "stdout.jsonl": "".join(json.dumps(event) + "\n" for event in events)}


def build(repo: Path) -> Receipts:
    """The valid set, in ``repo`` (a git repository with one commit) under ``review/``."""
    receipts = Receipts(repo, repo / "review", "", "")
    # The fixture project needs none of the plugins installed with axpipe's tests (Hydra's
    # alone costs 0.4 s a run).
    receipts.commit("pytest.ini", "[pytest]\npythonpath = .\naddopts = -p no:hydra_pytest -p no:syrupy\n",
                    "pytest settings")
    receipts.commit("tests/test_calc.py", TESTS_A, "tests")
    receipts.a = receipts.commit("calc.py", CALC_BUGGY, "add")
    receipts.b = receipts.commit("tests/test_calc.py", TESTS_B, "regression test for F1")
    receipts.b = receipts.commit("calc.py", CALC_FIXED, "fix F1: add adds")
    rounds = {1: (receipts.a, text_receipt("VERDICT: findings F1, F2"), jsonl_receipt("VERDICT: no findings")),
              2: (receipts.b, text_receipt("VERDICT: no findings"), jsonl_receipt("VERDICT: no findings"))}
    for number, (revision, alpha, beta) in rounds.items():
        receipts.write(f"round-{number}/revision.txt", revision + "\n")
        for name, files in (("alpha", alpha), ("beta", beta)):
            for file, text in files.items():
                receipts.write(f"round-{number}/{name}/{file}", text)
    # A failed attempt kept for diagnosis is not a receipt and is never read as one.
    receipts.write("attempts/round-2/attempt-1/alpha/exit.txt", "124\n")
    receipts.write("attempts/round-2/attempt-1/alpha/stdout.txt", "partial reasoning...\n")
    receipts.set_dispositions({"findings": [
        {"round": 1, "cli": "alpha", "id": "F1", "status": "fixed",
         "evidence": "add returned a - b; fixed in the commit after round 1", "regression": dict(REGRESSION)},
        {"round": 1, "cli": "alpha", "id": "F2", "status": "rejected",
         "evidence": "the naming follows the module's existing convention"},
    ]})
    return receipts
