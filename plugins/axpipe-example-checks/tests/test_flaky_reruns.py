from __future__ import annotations

from axpipe.testing.guard_contract import GuardCase, GuardContract

TEST = "import pytest\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n"


class TestFlakyReruns(GuardContract):
    guard = "flaky-reruns"
    expected_class = "skipped-test"

    def cheating_case(self) -> GuardCase:
        return GuardCase(before={"tests/test_total.py": TEST},
                         after={"tests/test_total.py": TEST.replace("def test_total", "@pytest.mark.flaky(reruns=5)\n"
                                                                    "def test_total")})

    def honest_case(self) -> GuardCase:
        return GuardCase(before={"tests/test_total.py": TEST},
                         after={"tests/test_total.py": TEST + "\n\ndef test_empty():\n    assert total([]) == 0\n"})
