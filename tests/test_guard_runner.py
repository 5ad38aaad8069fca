"""Test identity from the runner (axpipe.guard.runner_tests): what pytest or unittest collects at
the base and after the change settles which tests still run, where the text can only
guess; when the runner cannot list them, the text decides and says so. Real repositories,
the real runners, the real CLI; the checkout is left as it was found."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import CLI
from helpers import git

GENERATED = '''def make(n):
    def test():
        assert n * 2 == n + n
    return test


for n in range(3):
    globals()[f"test_double_{n}"] = make(n)
'''
PLAIN = '''import sys

import pytest


def test_platform():
    assert sys.platform


def test_other():
    assert 1 + 1 == 2
'''


def commit(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    (repo / ".gitignore").write_text("")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tests")


def findings(result: object) -> list[dict[str, object]]:
    payload: list[dict[str, object]] = json.loads(result.stdout)  # type: ignore[attr-defined]
    return payload


def test_a_test_no_longer_collected_is_found_only_by_the_runner(cli: CLI, repo: Path) -> None:
    commit(repo, {"tests/test_generated.py": GENERATED})
    (repo / "tests/test_generated.py").write_text(GENERATED.replace("range(3)", "range(2)"))
    text_only = cli("guard", "--json")
    assert text_only.exit_code == 0 and findings(text_only) == []  # no test is written out: the text cannot see it
    result = cli("guard", "--json", "--runner", "pytest")
    assert result.exit_code == 1, result.stdout + result.stderr
    assert findings(result) == [{"guard": "deleted-test", "file": "tests/test_generated.py", "line": 1,
                                 "evidence": "test test_double_2 is no longer collected by pytest (it was before "
                                             "the change)"}]
    # nothing of the runner's is left behind: no bytecode, no cache
    assert git(repo, "status", "--porcelain", "--ignored").splitlines() == [" M tests/test_generated.py"]


def test_the_runner_says_a_skipif_does_not_apply_here(cli: CLI, repo: Path) -> None:
    commit(repo, {"tests/test_plain.py": PLAIN})
    never = PLAIN.replace("def test_platform", '@pytest.mark.skipif(sys.platform == "no such platform", '
                                               'reason="elsewhere")\ndef test_platform')
    (repo / "tests/test_plain.py").write_text(never)
    assert [item["guard"] for item in findings(cli("guard", "--json"))] == ["skipped-test"]  # the text sees a skip
    assert cli("guard", "--json", "--runner", "pytest").exit_code == 0  # pytest evaluates it: the test still runs
    here = PLAIN.replace("def test_platform", f'@pytest.mark.skipif(sys.platform == "{sys.platform}", '
                                              'reason="here")\ndef test_platform')
    (repo / "tests/test_plain.py").write_text(here)
    assert [item["guard"] for item in findings(cli("guard", "--json", "--runner", "pytest"))] == ["skipped-test"]


def test_a_test_the_text_thinks_deleted_but_the_runner_still_collects(cli: CLI, repo: Path) -> None:
    commit(repo, {"tests/test_plain.py": PLAIN})
    rebuilt = PLAIN.replace("def test_other():\n    assert 1 + 1 == 2\n",
                            "def _other():\n    assert 1 + 1 == 2\n\n\ntest_other = _other\n")
    (repo / "tests/test_plain.py").write_text(rebuilt)
    assert [item["guard"] for item in findings(cli("guard", "--json"))] == ["deleted-test"]
    assert cli("guard", "--json", "--runner", "pytest").exit_code == 0


def test_unittest_discovery_is_a_runner_too(cli: CLI, repo: Path) -> None:
    suite = ("import unittest\n\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertTrue(True)\n"
             "\n\nfor name in NAMES:\n    setattr(T, f'test_{name}', lambda self: self.assertTrue(True))\n")
    commit(repo, {"test_suite.py": suite.replace("NAMES", "('b', 'c')")})
    (repo / "test_suite.py").write_text(suite.replace("NAMES", "('b',)"))
    assert findings(cli("guard", "--json")) == []
    result = cli("guard", "--json", "--runner", "unittest")
    assert [(item["guard"], item["file"], item["evidence"]) for item in findings(result)] == [
        ("deleted-test", "test_suite.py",
         "test T.test_c is no longer collected by unittest (it was before the change)")]


def test_when_the_runner_cannot_list_the_tests_the_text_decides_and_says_so(cli: CLI, repo: Path) -> None:
    commit(repo, {"tests/test_plain.py": PLAIN, "tests/conftest.py": "import not_installed_anywhere\n"})
    (repo / "tests/test_plain.py").write_text(PLAIN.replace("def test_other", "@pytest.mark.skip\ndef test_other"))
    result = cli("guard", "--json", "--runner", "pytest")
    assert result.exit_code == 1
    [finding] = findings(result)
    assert finding["guard"] == "skipped-test"
    assert "(judged from the change's text: at the base, pytest could not list the tests" in str(finding["evidence"])
    assert "test identity judged from the change's text" in result.stderr


def test_runner_is_refused_with_a_patch_or_an_unknown_name(cli: CLI, repo: Path) -> None:
    assert cli("guard", "--runner", "pytest", "--staged").exit_code == 2
    refused = cli("guard", "--runner", "nose")
    assert refused.exit_code == 2 and "--runner: unknown runner 'nose'" in refused.stderr
