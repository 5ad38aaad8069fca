"""An example third-party guard for axpipe: ``flaky-reruns``.

A test that passes on its fifth try still failed four times: adding reruns to make a red
check green hides the failure the way a skip does. This guard reports reruns added by a
change (pytest-rerunfailures' ``@pytest.mark.flaky``, ``--reruns`` in pytest's options).
It reads only the added lines of the change's hunks, so it works from git, from a patch
beside the files and from a patch alone.
"""

from __future__ import annotations

import re

from axpipe.interfaces import ChangeSet, GuardClass, GuardContext, GuardFinding

_RERUNS = re.compile(r"@(?:pytest\.mark\.)?flaky\b|--reruns\b")


class FlakyRerunsGuard:
    """Reports reruns added to tests."""

    params_schema = None
    suffixes = (".py", "pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml")

    def describe(self) -> str:
        return "reruns added to tests: @pytest.mark.flaky, --reruns"

    def check(self, changes: ChangeSet, context: GuardContext) -> list[GuardFinding]:
        findings = []
        for item in changes.matching(self.suffixes):
            for line, text in item.added_lines():
                if _RERUNS.search(text):
                    findings.append(GuardFinding(item.path, line, GuardClass.SKIPPED_TEST,
                                                 f"reruns added, so a failing test can pass: `{text.strip()}`"))
        return findings
