from __future__ import annotations

from pathlib import Path

from axpipe.testing import CheckCase, CheckKindContract


class TestLineLimit(CheckKindContract):
    kind = "line-limit"

    def passing_case(self, workspace: Path) -> CheckCase:
        (workspace / "short.py").write_text("x = 1\n" * 3)
        return CheckCase(params={"paths": ["*.py"], "max_lines": 5})

    def failing_case(self, workspace: Path) -> CheckCase:
        (workspace / "long.py").write_text("x = 1\n" * 9)
        return CheckCase(params={"paths": ["*.py"], "max_lines": 5})
