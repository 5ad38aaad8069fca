"""Built-in check kinds, loaded through their entry points and run against real commands."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from axpipe.interfaces import CheckKind, CheckOutcome, CheckRequest, CheckStatus
from axpipe.plugin import registry
from axpipe.recipe import typed as validation

PY = sys.executable


def run_kind(name: str, command: Any, cwd: Path, **params: Any) -> CheckOutcome:
    kind = registry.load("axpipe.checks", name)
    assert isinstance(kind, CheckKind)
    typed, problems = validation.load_plugin_params(kind, params, "check", None)
    assert problems == []
    return kind.run(CheckRequest(check_id="c", command=command, params=typed, cwd=cwd, timeout=30))


def test_command_passes_on_exit_zero(tmp_path: Path) -> None:
    assert run_kind("command", "true", tmp_path).status is CheckStatus.PASSED


def test_command_fails_on_non_zero_exit(tmp_path: Path) -> None:
    outcome = run_kind("command", [PY, "-c", "print('boom'); raise SystemExit(2)"], tmp_path)
    assert outcome.status is CheckStatus.FAILED
    assert outcome.exit_code == 2
    assert outcome.summary == "exit code 2"
    assert "boom" in outcome.output_tail


def test_command_that_cannot_be_found_is_an_error_not_a_failure(tmp_path: Path) -> None:
    outcome = run_kind("command", ["no-such-program-axpipe"], tmp_path)
    assert outcome.status is CheckStatus.ERROR
    shell = run_kind("command", "no-such-program-axpipe --version", tmp_path)
    assert shell.status is CheckStatus.ERROR
    assert shell.summary == "command not found: 'no-such-program-axpipe'"


def test_command_timeout_fails(tmp_path: Path) -> None:
    kind = registry.load("axpipe.checks", "command")
    outcome = kind.run(CheckRequest(check_id="c", command="sleep 10", params={}, cwd=tmp_path, timeout=0.3))
    assert outcome.status is CheckStatus.FAILED
    assert outcome.summary == "timed out after 0.3 s"


SMOKE = "import sys; print('starting'); print(sys.argv[1]); print('done')"


@pytest.mark.parametrize(("line", "status"), [
    ("smoke: PASS 14 checks", CheckStatus.PASSED),
    ("smoke: FAIL 2 checks", CheckStatus.FAILED),
])
def test_oracle_decides_by_the_line_not_the_exit_code(tmp_path: Path, line: str, status: CheckStatus) -> None:
    # Both runs exit 0: only the required line tells them apart (the seed's example).
    outcome = run_kind("oracle", [PY, "-c", SMOKE, line], tmp_path, line=r"^smoke: PASS")
    assert outcome.exit_code == 0
    assert outcome.status is status
    if status is CheckStatus.PASSED:
        assert outcome.matched_line == "smoke: PASS 14 checks"


def test_oracle_passes_on_the_line_even_with_a_failing_exit_code(tmp_path: Path) -> None:
    outcome = run_kind("oracle", [PY, "-c", "print('smoke: PASS 3 checks'); raise SystemExit(1)"],
                       tmp_path, line=r"^smoke: PASS")
    assert outcome.status is CheckStatus.PASSED
    assert outcome.exit_code == 1


def test_oracle_finds_a_line_far_before_the_tail(tmp_path: Path) -> None:
    script = "print('smoke: PASS early'); import sys; sys.stdout.write('noise\\n' * 2_000_000)"
    outcome = run_kind("oracle", [PY, "-c", script], tmp_path, line=r"^smoke: PASS")
    assert outcome.status is CheckStatus.PASSED
    assert "smoke" not in outcome.output_tail


def test_oracle_requires_its_line_parameter() -> None:
    kind = registry.load("axpipe.checks", "oracle")
    _, problems = validation.load_plugin_params(kind, {}, "repair.success", None)
    assert [(p.path, p.message.split(" (")[0]) for p in problems] == [("repair.success.line", "missing required key")]


def test_oracle_refuses_a_bad_regex() -> None:
    kind = registry.load("axpipe.checks", "oracle")
    _, problems = validation.load_plugin_params(kind, {"line": "("}, "repair.success", None)
    assert problems[0].path == "repair.success.line"
    assert "not a valid regular expression" in problems[0].message


def test_no_match_fails_on_a_warning(tmp_path: Path) -> None:
    script = "print('compiling'); print('WARNING: deprecated call'); print('ok')"
    outcome = run_kind("no-match", [PY, "-c", script], tmp_path)
    assert outcome.status is CheckStatus.FAILED
    assert outcome.matched_line == "WARNING: deprecated call"
    assert outcome.details["matches"] == 1


def test_no_match_passes_on_clean_output(tmp_path: Path) -> None:
    assert run_kind("no-match", [PY, "-c", "print('all good')"], tmp_path).status is CheckStatus.PASSED


def test_no_match_still_requires_exit_zero_by_default(tmp_path: Path) -> None:
    outcome = run_kind("no-match", [PY, "-c", "raise SystemExit(1)"], tmp_path)
    assert outcome.status is CheckStatus.FAILED
    relaxed = run_kind("no-match", [PY, "-c", "raise SystemExit(1)"], tmp_path, require_exit_zero=False)
    assert relaxed.status is CheckStatus.PASSED


def test_no_match_custom_pattern(tmp_path: Path) -> None:
    outcome = run_kind("no-match", [PY, "-c", "print('DeprecationWarning: x')"], tmp_path,
                       pattern="Deprecation")
    assert outcome.status is CheckStatus.FAILED


LONG_LINE = "import os; os.write(1, b'x' * {before} + {text!r}.encode() + b'x' * {after} + b'\\n' + {rest!r}.encode())"


def long_line(text: str, *, before: int = 2 * 1024 * 1024, after: int = 0, rest: str = "") -> list[str]:
    """A command printing one line of over 1 MiB with ``text`` inside it, then ``rest``."""
    return [PY, "-c", LONG_LINE.format(before=before, text=text, after=after, rest=rest)]


def test_an_oracle_line_at_the_end_of_an_overlong_line_is_no_evidence(tmp_path: Path) -> None:
    # A piece of the line is not the line: '^smoke: PASS$' must not match its last piece.
    outcome = run_kind("oracle", long_line("smoke: PASS"), tmp_path, line="^smoke: PASS$")
    assert outcome.status is CheckStatus.ERROR
    assert outcome.summary.startswith("no line matches '^smoke: PASS$', but 1 output line(s) longer than 1 MiB "
                                      "(the longest 2097163 bytes) could not be read as lines")


def test_an_oracle_line_of_its_own_still_passes_beside_an_overlong_line(tmp_path: Path) -> None:
    outcome = run_kind("oracle", long_line("noise", rest="smoke: PASS\n"), tmp_path, line="^smoke: PASS$")
    assert outcome.status is CheckStatus.PASSED


@pytest.mark.parametrize("offset", [1024 * 1024 - 3, 1024 * 1024, 2 * 1024 * 1024 + 7])
def test_no_match_cannot_pass_over_a_line_it_could_not_read(tmp_path: Path, offset: int) -> None:
    # The word sits across or past where a 1 MiB piece would end: no piece shows it whole.
    outcome = run_kind("no-match", long_line("warning", before=offset, after=300_000), tmp_path)
    assert outcome.status is CheckStatus.ERROR
    assert "could not be read as lines" in outcome.summary


def test_no_match_still_fails_on_a_warning_beside_an_overlong_line(tmp_path: Path) -> None:
    outcome = run_kind("no-match", long_line("noise", rest="warning: deprecated\n"), tmp_path)
    assert outcome.status is CheckStatus.FAILED


def test_unknown_params_are_reported_with_their_path() -> None:
    kind = registry.load("axpipe.checks", "command")
    _, problems = validation.load_plugin_params(kind, {"line": "x"}, "goal.checks[0]", None)
    assert [(p.path, p.message) for p in problems] == [
        ("goal.checks[0].line", "unknown key; this kind takes no parameters")]


# -- pytest ---------------------------------------------------------------------------------

PYTEST = [PY, "-m", "pytest", "-q"]
TESTS = """import pytest


def test_one():
    assert 1 == 1


def test_two():
    assert 2 == 2
"""


def write_tests(tmp_path: Path, body: str = TESTS) -> Path:
    (tmp_path / "test_things.py").write_text(body)
    return tmp_path


def test_pytest_passes_and_records_what_it_counted(tmp_path: Path) -> None:
    root = write_tests(tmp_path)
    outcome = run_kind("pytest", PYTEST, root)
    assert (outcome.status, outcome.summary) == (CheckStatus.PASSED, "2 passed (exit code 0)")
    assert outcome.details == {"tests": 2, "passed": 2, "failed": 0, "errors": 0, "skipped": 0}
    # the report went outside the workspace and pytest's cache was off: the source is as it was
    assert sorted(path.name for path in root.iterdir() if path.name != "__pycache__") == ["test_things.py"]


def test_pytest_fails_when_every_test_is_skipped_where_command_passes(tmp_path: Path) -> None:
    root = write_tests(tmp_path, TESTS.replace("def test_", "@pytest.mark.skip(reason='later')\ndef test_"))
    assert run_kind("command", PYTEST, root).status is CheckStatus.PASSED  # exit 0: proves nothing
    outcome = run_kind("pytest", PYTEST, root)
    assert (outcome.status, outcome.summary) == (
        CheckStatus.FAILED, "0 passed, 2 skipped: fewer than min_passed 1 test(s) passed")


def test_pytest_min_passed_and_max_skipped(tmp_path: Path) -> None:
    root = write_tests(tmp_path, TESTS.replace("def test_two", "@pytest.mark.skip(reason='later')\ndef test_two"))
    assert run_kind("pytest", PYTEST, root).status is CheckStatus.PASSED
    assert run_kind("pytest", PYTEST, root, min_passed=2).summary == (
        "1 passed, 1 skipped: fewer than min_passed 2 test(s) passed")
    assert run_kind("pytest", PYTEST, root, max_skipped=0).summary == (
        "1 passed, 1 skipped: more than max_skipped 0 skipped")
    assert run_kind("pytest", PYTEST, root, max_skipped=1).status is CheckStatus.PASSED


def test_pytest_fails_on_a_failing_test_and_on_an_error(tmp_path: Path) -> None:
    broken_fixture = ("\n\n@pytest.fixture\ndef broken():\n    raise RuntimeError('fixture')\n\n\n"
                      "def test_three(broken):\n    pass\n")
    root = write_tests(tmp_path, TESTS.replace("assert 2 == 2", "assert 2 == 3") + broken_fixture)
    outcome = run_kind("pytest", PYTEST, root)
    assert (outcome.status, outcome.summary) == (CheckStatus.FAILED, "1 passed, 1 failed, 1 errors (exit code 1)")


def test_pytest_with_nothing_collected_fails(tmp_path: Path) -> None:
    root = write_tests(tmp_path)
    outcome = run_kind("pytest", [*PYTEST, "-k", "no_such_test"], root)
    assert outcome.status is CheckStatus.FAILED
    assert outcome.summary == "no tests ran: none collected, or all deselected (exit code 5)"


def test_pytest_takes_a_shell_string(tmp_path: Path) -> None:
    root = write_tests(tmp_path)
    assert run_kind("pytest", f"{PY} -m pytest -q", root).summary == "2 passed (exit code 0)"
    from axpipe_builtin.pytest_check import invocation

    assert invocation("cd sub && pytest", Path("/r/j.xml")) == (
        "cd sub && pytest --junitxml=/r/j.xml -o junit_family=xunit2 -p no:cacheprovider")


def test_a_command_that_is_not_pytest_is_no_evidence(tmp_path: Path) -> None:
    outcome = run_kind("pytest", "true", tmp_path)
    assert outcome.status is CheckStatus.ERROR
    assert outcome.summary.startswith("pytest wrote no report (exit code 0)")


def test_pytest_params_are_validated() -> None:
    kind = registry.load("axpipe.checks", "pytest")
    _, problems = validation.load_plugin_params(kind, {"min_passed": 0, "max_skipped": "x"}, "goal.checks[0].params",
                                                None)
    assert [(problem.path, problem.message) for problem in problems] == [
        ("goal.checks[0].params.min_passed", "0 is below the minimum 1"),
        ("goal.checks[0].params.max_skipped", "expected an integer, got 'x'"),
    ]
