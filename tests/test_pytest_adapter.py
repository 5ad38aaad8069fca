"""The pytest test adapter against a real pytest run of a small project."""

from __future__ import annotations

from pathlib import Path

import pytest

from axpipe import interfaces
from axpipe.evidence import env as evidence_env
from axpipe.interfaces import NamedTest, NamedTestStatus, TestRunReport, TestRunRequest
from axpipe.plugin import registry

TESTS = """\
import pytest


def test_passes():
    assert 1 + 1 == 2


def test_fails():
    assert 1 + 1 == 3


@pytest.mark.skip(reason="not today")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known bug")
def test_expected_to_fail():
    assert False


@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert n > 0


@pytest.fixture
def broken():
    raise RuntimeError("setup broke")


def test_setup_error(broken):
    pass


@pytest.fixture
def teardown_breaks():
    yield
    raise RuntimeError("teardown broke")


def test_fails_and_teardown_errors(teardown_breaks):
    assert False


def test_twice():
    pass


class TestGroup:
    def test_member(self):
        pass
"""

# A project-level plugin that runs one test twice, the way a rerun plugin would: the adapter
# cannot stop code the project ships, but it counts the executions and reports them.
CONFTEST = """\
import pytest
from _pytest.runner import runtestprotocol


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    if item.name != "test_twice":
        return None
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for _ in range(2):
        runtestprotocol(item, nextitem=nextitem, log=True)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\naddopts = -p no:hydra_pytest -p no:syrupy\n")
    (root / "tests" / "test_things.py").write_text(TESTS)
    (root / "tests" / "conftest.py").write_text(CONFTEST)
    (root / "tests" / "test_broken.py").write_text("import no_such_module_axpipe\n\ndef test_never():\n    pass\n")
    return root


def run(project: Path, *names: str, file: str = "tests/test_things.py") -> TestRunReport:
    adapter = registry.load("axpipe.test_adapters", "pytest")
    assert isinstance(adapter, interfaces.TestAdapter)
    tests = [NamedTest(file, f"{file}::{name}") for name in names]
    # as the receipt verifier asks: with the evidence environment (axpipe.evidence.env)
    return adapter.run(TestRunRequest(workspace=project, tests=tests, timeout=120,
                                      artifacts_dir=project.parent / "artifacts", env=evidence_env.variables(project)))


def outcomes(report: TestRunReport) -> list[tuple[str, str, int]]:
    return [(result.test.full_name.split("::", 1)[1], result.status.value, result.executions)
            for result in report.results]


def test_each_named_test_is_reported_with_its_status_and_executions(project: Path) -> None:
    report = run(project, "test_passes", "test_fails", "test_skipped", "test_expected_to_fail", "test_setup_error",
                 "test_fails_and_teardown_errors", "test_param[2]", "TestGroup::test_member", "test_gone")
    assert report.error is None
    assert outcomes(report) == [
        ("test_passes", "passed", 1), ("test_fails", "failed", 1), ("test_skipped", "skipped", 1),
        ("test_expected_to_fail", "skipped", 1), ("test_setup_error", "failed", 1),
        ("test_fails_and_teardown_errors", "failed", 1), ("test_param[2]", "passed", 1),
        ("TestGroup::test_member", "passed", 1), ("test_gone", "missing", 0)]
    assert report.results[-1].note == "no test ran under this node id"


def test_a_parametrised_test_is_not_matched_by_its_prefix(project: Path) -> None:
    (result,) = run(project, "test_param").results
    assert (result.status, result.executions) == (NamedTestStatus.MISSING, 0)
    assert result.note == ("not run under this exact name; 2 test(s) share it as a prefix "
                           "(tests/test_things.py::test_param[1], tests/test_things.py::test_param[2]): "
                           "name one exactly")


def test_a_test_executed_twice_is_counted_twice(project: Path) -> None:
    (result,) = run(project, "test_twice").results
    assert (result.status, result.executions) == (NamedTestStatus.PASSED, 2)


def test_a_file_that_fails_to_collect_leaves_its_tests_missing(project: Path) -> None:
    report = run(project, "test_never", file="tests/test_broken.py")
    assert outcomes(report) == [("test_never", "missing", 0)]


def test_a_missing_file_is_not_handed_to_pytest(project: Path) -> None:
    report = run(project, "test_x", file="tests/test_absent.py")
    assert outcomes(report) == [("test_x", "missing", 0)]
    assert report.results[0].note == "the file does not exist"
    assert report.commands == []


def test_random_order_and_reruns_are_switched_off_on_the_command_line(project: Path) -> None:
    (command,) = run(project, "test_passes").commands
    for flag in ("-p no:randomly", "-p no:rerunfailures", "-p no:flaky", "--maxfail=0", "-p axpipe_pytest_nodeids"):
        assert flag in command
    assert f"--rootdir={project}" in command


def test_a_run_that_writes_no_report_is_an_error_with_the_reason(project: Path) -> None:
    (project / "pytest.ini").write_text("[pytest]\naddopts = --reruns 2\n")
    report = run(project, "test_passes")
    assert report.results == []
    assert report.error is not None and report.error.startswith("pytest wrote no JUnit report (exit code 4)")
    assert "--reruns" in report.error


def test_running_does_not_dirty_the_project(project: Path) -> None:
    run(project, "test_passes")
    assert sorted(path.name for path in (project / "tests").iterdir()) == [
        "conftest.py", "test_broken.py", "test_things.py"]
