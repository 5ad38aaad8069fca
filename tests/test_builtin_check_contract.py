"""The built-in check kinds pass the same conformance suite third-party kinds use."""

from __future__ import annotations

import sys
from pathlib import Path

from axpipe.testing import CheckCase, CheckKindContract

PY = sys.executable


class TestCommandContract(CheckKindContract):
    kind = "command"

    def passing_case(self, workspace: Path) -> CheckCase:
        return CheckCase(command=[PY, "-c", "pass"])

    def failing_case(self, workspace: Path) -> CheckCase:
        return CheckCase(command=[PY, "-c", "raise SystemExit(1)"])


class TestOracleContract(CheckKindContract):
    kind = "oracle"

    def passing_case(self, workspace: Path) -> CheckCase:
        return CheckCase(command=[PY, "-c", "print('smoke: PASS 3')"], params={"line": "^smoke: PASS"})

    def failing_case(self, workspace: Path) -> CheckCase:
        return CheckCase(command=[PY, "-c", "print('smoke: FAIL 1')"], params={"line": "^smoke: PASS"})


class TestNoMatchContract(CheckKindContract):
    kind = "no-match"

    def passing_case(self, workspace: Path) -> CheckCase:
        return CheckCase(command=[PY, "-c", "print('clean')"])

    def failing_case(self, workspace: Path) -> CheckCase:
        return CheckCase(command=[PY, "-c", "print('warning: x')"])


class TestPytestContract(CheckKindContract):
    kind = "pytest"

    def passing_case(self, workspace: Path) -> CheckCase:
        (workspace / "test_contract.py").write_text("def test_ok():\n    assert True\n")
        return CheckCase(command=[PY, "-m", "pytest", "-q", "test_contract.py"])

    def failing_case(self, workspace: Path) -> CheckCase:
        (workspace / "test_contract.py").write_text("def test_bad():\n    assert False\n")
        return CheckCase(command=[PY, "-m", "pytest", "-q", "test_contract.py"])
