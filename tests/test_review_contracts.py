"""The conformance suites of axpipe.testing.reviews, run on the built-in reviewers and adapters."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from axpipe.testing.reviews import AdapterCase, NamedTestAdapterContract, ReviewerContract


class TestCommandReviewer(ReviewerContract):
    kind = "command"

    def entry(self) -> dict[str, Any]:
        return {"command": [sys.executable, "review.py", "{prompt_file}"], "output": "jsonl", "stdin": True}


class TestClaudeCodePreset(ReviewerContract):
    kind = "claude-code"

    def entry(self) -> dict[str, Any]:
        return {"model": "m-1"}


class TestCodexPreset(ReviewerContract):
    kind = "codex"

    def entry(self) -> dict[str, Any]:
        return {"extra_args": ["--skip-git-repo-check"]}


class TestGeminiPreset(ReviewerContract):
    kind = "gemini-cli"

    def entry(self) -> dict[str, Any]:
        return {"timeout": "5m"}


class TestPytestAdapter(NamedTestAdapterContract):
    adapter = "pytest"

    def project(self, folder: Path) -> AdapterCase:
        (folder / "pytest.ini").write_text("[pytest]\naddopts = -p no:hydra_pytest -p no:syrupy\n")
        (folder / "test_one.py").write_text("def test_ok():\n    pass\n\n\ndef test_bad():\n    assert 0\n")
        return AdapterCase(file="test_one.py", passing="test_one.py::test_ok", failing="test_one.py::test_bad")
