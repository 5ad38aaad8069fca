"""The cli-review receipt verifier: a valid set of receipts, and one invalid set per rule."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import git
from review_fixtures import REGRESSION, Receipts, build, jsonl_receipt, text_receipt

from axpipe.interfaces import NamedTestStatus, ReceiptReport, ReceiptRequest
from axpipe.plugin import registry

Where = tuple[str, int | None, str | None, str | None]


@pytest.fixture
def receipts(repo: Path) -> Receipts:
    return build(repo)


def verify(receipts: Receipts, **options: Any) -> ReceiptReport:
    verifier = registry.load("axpipe.receipt_verifiers", "cli-review")
    artifacts = receipts.repo.parent / "artifacts"
    report: ReceiptReport = verifier.verify(ReceiptRequest(root=receipts.root, workspace=receipts.repo,
                                                           artifacts_dir=artifacts, **options))
    return report


def where(report: ReceiptReport) -> list[Where]:
    return [(p.rule, p.round, p.reviewer, p.finding) for p in report.problems]


def test_the_valid_set_verifies(receipts: Receipts) -> None:
    report = verify(receipts)
    assert report.problems == []
    assert report.head == receipts.b
    assert [(t.test.full_name, t.status, t.executions) for t in report.tests] == [
        ("tests/test_calc.py::test_add_regression", NamedTestStatus.PASSED, 1)]
    assert report.rounds == [
        {"round": 1, "revision": receipts.a, "reviewers": {"alpha": "findings F1, F2", "beta": "no findings"}},
        {"round": 2, "revision": receipts.b, "reviewers": {"alpha": "no findings", "beta": "no findings"}}]


@pytest.mark.parametrize("full_name", [
    "tests/test_calc.py::test_param[1]",          # a parametrised case named exactly
    "tests/test_calc.py::TestCalc::test_in_class",
])
def test_any_exactly_named_passing_test_is_a_regression(receipts: Receipts, full_name: str) -> None:
    receipts.edit_finding(0, regression={"file": "tests/test_calc.py", "fullName": full_name})
    assert where(verify(receipts)) == []


def test_required_reviewers_can_be_a_subset(receipts: Receipts) -> None:
    assert where(verify(receipts, reviewers=["alpha"])) == []


def test_rounds_without_findings_need_no_dispositions(receipts: Receipts) -> None:
    receipts.write("round-1/alpha/stdout.txt", "All good.\nVERDICT: no findings\n")
    (receipts.root / "dispositions.json").unlink()
    assert where(verify(receipts)) == []


def test_ignored_files_do_not_block_verification(receipts: Receipts) -> None:
    (receipts.repo / ".git" / "info" / "exclude").write_text("build/\n")
    (receipts.repo / "build").mkdir()
    (receipts.repo / "build" / "out.txt").write_text("artefact\n")
    assert where(verify(receipts)) == []


def move_head(r: Receipts) -> None:
    r.commit("README.md", "changed after the last round\n", "docs")


def side_branch_revision(r: Receipts) -> None:
    git(r.repo, "checkout", "-q", "-b", "side", r.a)
    side = r.commit("side.txt", "elsewhere\n", "side work")
    git(r.repo, "checkout", "-q", "main")
    r.write("round-1/revision.txt", side + "\n")


def fix_in_final_round(r: Receipts) -> None:
    r.write("round-2/alpha/stdout.txt", "F3: typo\nVERDICT: findings F3\n")
    data = r.dispositions()
    data["findings"].append({"round": 2, "cli": "alpha", "id": "F3", "status": "fixed", "evidence": "typo fixed",
                             "regression": dict(REGRESSION)})
    r.set_dispositions(data)


def add_finding(**entry: Any) -> Callable[[Receipts], None]:
    def mutate(r: Receipts) -> None:
        data = r.dispositions()
        data["findings"].append({"round": 1, "cli": "alpha", "id": "F9", "status": "rejected", "evidence": "no",
                                 **entry})
        r.set_dispositions(data)
    return mutate


def duplicate_f2(r: Receipts) -> None:
    data = r.dispositions()
    data["findings"].append({**data["findings"][1], "evidence": "said again, differently"})
    r.set_dispositions(data)


def drop_f2(r: Receipts) -> None:
    data = r.dispositions()
    del data["findings"][1]
    r.set_dispositions(data)


def regression(file: str, full_name: str) -> Callable[[Receipts], None]:
    return lambda r: r.edit_finding(0, regression={"file": file, "fullName": full_name})


def committed_regression(relative: str, place: Callable[[Receipts, Path], None]) -> Callable[[Receipts], None]:
    """Commit ``tests/<relative>`` as ``place`` makes it, review that commit in round 2, and
    name its ``test_add_regression`` as F1's regression."""
    def mutate(r: Receipts) -> None:
        place(r, r.repo / "tests" / relative)
        git(r.repo, "add", "-A", "--", f"tests/{relative}")
        git(r.repo, "commit", "-qm", "regression test")
        r.write("round-2/revision.txt", git(r.repo, "rev-parse", "HEAD").strip() + "\n")
        regression(f"tests/{relative}", f"tests/{relative}::test_add_regression")(r)
    return mutate


def link_out_of_the_repository(r: Receipts, path: Path) -> None:
    outside = r.repo.parent / "outside" / "test_regress.py"
    outside.parent.mkdir()
    outside.write_text("def test_add_regression():\n    assert True\n")
    path.symlink_to(outside)


def rm(relative: str) -> Callable[[Receipts], None]:
    def mutate(r: Receipts) -> None:
        path = r.root / relative
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    return mutate


def write(relative: str, text: str) -> Callable[[Receipts], None]:
    return lambda r: r.write(relative, text) and None


def both(*mutations: Callable[[Receipts], None]) -> Callable[[Receipts], None]:
    def mutate(r: Receipts) -> None:
        for mutation in mutations:
            mutation(r)
    return mutate


R1F1: Where = ("", 1, "alpha", "F1")
F1 = (1, "alpha", "F1")
F2 = (1, "alpha", "F2")

CASES: list[Any] = [
    # rounds
    pytest.param(both(rm("round-1"), rm("round-2")), {}, [("rounds", None, None, None)], "no round-<n> folders",
                 id="no-rounds"),
    pytest.param(lambda r: (r.root / "round-2").rename(r.root / "round-3"), {}, [("rounds", None, None, None)],
                 "rounds must be numbered 1..3 without gaps; missing round-2", id="round-gap"),
    pytest.param(lambda r: shutil.copytree(r.root / "round-2", r.root / "round-02"), {}, [("rounds", 2, None, None)],
                 "several folders are round 2: round-02, round-2", id="twin-rounds"),
    # revision.txt in every round
    pytest.param(rm("round-2/revision.txt"), {}, [("revision", 2, None, None)], "revision.txt is missing",
                 id="revision-missing"),
    pytest.param(write("round-1/revision.txt", "HEAD~2\n"), {}, [("revision", 1, None, None)],
                 "revision.txt must hold a full commit SHA, not 'HEAD~2'", id="revision-not-a-sha"),
    pytest.param(write("round-1/revision.txt", "0" * 40 + "\n"), {},
                 [("revision", 1, None, None), ("fix-order", *F1)], "is not a commit of this repository",
                 id="revision-unknown"),
    # required reviewers, exit.txt = 0, one output
    pytest.param(rm("round-1/beta"), {}, [("reviewer", 1, "beta", None)],
                 "required reviewer has no folder in this round", id="reviewer-missing"),
    pytest.param(None, {"reviewers": ["alpha", "beta", "gamma"]},
                 [("reviewer", 1, "gamma", None), ("reviewer", 2, "gamma", None)],
                 "required reviewer has no folder in this round", id="required-reviewer-never-ran"),
    pytest.param(write("round-1/beta/exit.txt", "1\n"), {}, [("exit", 1, "beta", None)],
                 "exit.txt is '1', not 0: a failed review is an attempt, not a receipt", id="exit-not-zero"),
    pytest.param(rm("round-2/alpha/exit.txt"), {}, [("exit", 2, "alpha", None)], "exit.txt is missing",
                 id="exit-missing"),
    pytest.param(rm("round-2/beta/stdout.jsonl"), {}, [("output", 2, "beta", None)],
                 "neither stdout.txt nor stdout.jsonl is present", id="output-missing"),
    pytest.param(write("round-2/beta/stdout.txt", "VERDICT: no findings\n"), {}, [("output", 2, "beta", None)],
                 "both stdout.txt and stdout.jsonl are present", id="output-twice"),
    # exactly one final verdict
    pytest.param(write("round-2/alpha/stdout.txt", "warning: model overloaded\n"), {}, [("verdict", 2, "alpha", None)],
                 "stdout.txt: no verdict line", id="verdict-warning-only"),
    pytest.param(write("round-2/alpha/stdout.txt", "VERDICT: findings F9\nVERDICT: no findings\n"), {},
                 [("verdict", 2, "alpha", None)], "stdout.txt: 2 verdict lines (line 1, line 2)",
                 id="verdict-several"),
    pytest.param(write("round-2/beta/stdout.jsonl", jsonl_receipt("VERDICT: no findings")["stdout.jsonl"]
                       + '{"type": "text", "text": "On second thought, calc.py line 2"}\n'), {},
                 [("verdict", 2, "beta", None)], "stdout.jsonl: the verdict is in the text event on line 3",
                 id="verdict-partial-reasoning-after-it"),
    pytest.param(both(write("round-2/alpha/exit.txt", "124\n"), write("round-2/alpha/stdout.txt", "Looking at ")),
                 {}, [("exit", 2, "alpha", None), ("verdict", 2, "alpha", None)], "exit.txt is '124', not 0",
                 id="verdict-timed-out"),
    # dispositions.json
    pytest.param(rm("dispositions.json"), {},
                 [("dispositions", None, None, None), ("undisposed", *F1), ("undisposed", *F2)],
                 "dispositions.json is missing, but verdicts report 2 finding(s)", id="dispositions-missing"),
    pytest.param(lambda r: r.set_dispositions("{"), {},
                 [("dispositions", None, None, None), ("undisposed", *F1), ("undisposed", *F2)],
                 "dispositions.json is not valid JSON", id="dispositions-not-json"),
    pytest.param(lambda r: r.set_dispositions({"items": []}), {},
                 [("dispositions", None, None, None), ("undisposed", *F1), ("undisposed", *F2)],
                 'dispositions.json must be an object with a "findings" array', id="dispositions-no-findings"),
    pytest.param(lambda r: r.edit_finding(1, evidence="  "), {}, [("dispositions", *F2), ("undisposed", *F2)],
                 "findings[1]: evidence must be non-blank text", id="evidence-blank"),
    pytest.param(lambda r: r.edit_finding(1, status="wontfix"), {}, [("dispositions", *F2), ("undisposed", *F2)],
                 "findings[1]: status must be fixed or rejected, got 'wontfix'", id="status-unknown"),
    pytest.param(lambda r: r.edit_finding(1, round="1"), {},
                 [("dispositions", None, "alpha", "F2"), ("undisposed", *F2)],
                 "findings[1]: round must be an integer, got '1'", id="round-not-an-integer"),
    pytest.param(lambda r: r.edit_finding(1, note="x"), {}, [("dispositions", *F2), ("undisposed", *F2)],
                 "findings[1]: unknown key(s) note", id="unknown-key"),
    pytest.param(duplicate_f2, {}, [("duplicate", *F2)],
                 "findings[2] disposes of the same finding as findings[1]", id="duplicate"),
    pytest.param(add_finding(), {}, [("unknown-finding", 1, "alpha", "F9")],
                 "the reviewer's verdict does not list this finding (findings F1, F2)", id="finding-not-reported"),
    pytest.param(add_finding(cli="gamma"), {}, [("unknown-finding", 1, "gamma", "F9")],
                 "disposition of a reviewer with no folder in that round", id="finding-of-unknown-reviewer"),
    pytest.param(add_finding(round=7), {}, [("unknown-finding", 7, "alpha", "F9")],
                 "disposition of a round that does not exist", id="finding-of-unknown-round"),
    pytest.param(drop_f2, {}, [("undisposed", *F2)], "finding has no disposition", id="finding-undisposed"),
    # regression of a fixed finding
    pytest.param(lambda r: r.edit_finding(0, regression=None), {}, [("dispositions", *F1), ("undisposed", *F1)],
                 'a fixed finding needs "regression"', id="fixed-without-regression"),
    pytest.param(regression("calc.py", "calc.py::test_add"), {}, [("regression", *F1)],
                 "'calc.py' is not under the test folder tests/", id="regression-outside-test-dir"),
    pytest.param(regression("tests/test_new.py", "tests/test_new.py::test_x"), {}, [("regression", *F1)],
                 "'tests/test_new.py' is not a file committed at HEAD", id="regression-file-not-committed"),
    pytest.param(committed_regression("test_regress.py", link_out_of_the_repository), {}, [("regression", *F1)],
                 "'tests/test_regress.py' is a symlink at HEAD, not a regular file: a regression test must be a "
                 "repository file (mode 100644 or 100755)", id="regression-file-links-out-of-the-repository"),
    pytest.param(committed_regression("test_link.py", lambda r, path: path.symlink_to("test_calc.py")), {},
                 [("regression", *F1)], "'tests/test_link.py' is a symlink at HEAD", id="regression-file-is-a-symlink"),
    pytest.param(committed_regression("pkg", lambda r, path: (path.mkdir(), (path / "test_x.py").write_text(""))),
                 {}, [("regression", *F1)], "'tests/pkg' is a folder at HEAD, not a regular file",
                 id="regression-file-is-a-folder"),
    pytest.param(regression("tests/*.py", "tests/test_calc.py::test_add_regression"), {}, [("regression", *F1)],
                 "must be a literal path, not a pattern", id="regression-file-is-a-pattern"),
    pytest.param(regression("tests/../calc.py", "calc.py::x"), {}, [("regression", *F1)],
                 "must be a normalised path", id="regression-file-escapes"),
    pytest.param(lambda r: r.edit_finding(0, regression={"file": "tests/test_calc.py"}), {},
                 [("dispositions", *F1), ("undisposed", *F1)], "regression.fullName must be the test's exact full name",
                 id="regression-without-full-name"),
    # the named tests: run once, passed exactly once
    pytest.param(regression("tests/test_calc.py", "tests/test_calc.py::test_gone"), {}, [("tests", *F1)],
                 "regression test 'tests/test_calc.py::test_gone' is missing: it did not run", id="test-missing"),
    pytest.param(regression("tests/test_calc.py", "tests/test_calc.py::test_known_failure"), {}, [("tests", *F1)],
                 "regression test 'tests/test_calc.py::test_known_failure' failed", id="test-failed"),
    pytest.param(regression("tests/test_calc.py", "tests/test_calc.py::test_skipped"), {}, [("tests", *F1)],
                 "regression test 'tests/test_calc.py::test_skipped' was skipped", id="test-skipped"),
    pytest.param(regression("tests/test_calc.py", "tests/test_calc.py::test_param"), {}, [("tests", *F1)],
                 "is missing: it did not run (not run under this exact name; 2 test(s) share it as a prefix "
                 "(tests/test_calc.py::test_param[1], tests/test_calc.py::test_param[2]): name one exactly)",
                 id="test-ambiguous-by-prefix"),
    pytest.param(regression("tests/test_calc.py", "tests/other.py::test_add_regression"), {}, [("tests", *F1)],
                 "the node id does not start with the file tests/test_calc.py::", id="test-names-another-file"),
    pytest.param(regression("tests/test_calc.py", "test_add_regression"), {}, [("tests", *F1)],
                 "is missing", id="test-named-without-its-file"),
    # HEAD and the order of fixes
    pytest.param(move_head, {}, [("head", 2, None, None)], "the final round reviewed", id="final-round-is-not-head"),
    pytest.param(fix_in_final_round, {}, [("fix-order", 2, "alpha", "F3")],
                 "fixed in round 2, the final round: a fix needs a later review round", id="fixed-in-the-final-round"),
    pytest.param(lambda r: r.write("round-1/revision.txt", r.b + "\n"), {}, [("fix-order", *F1)],
                 "a fix needs a newer revision", id="fixed-without-a-newer-revision"),
    pytest.param(side_branch_revision, {}, [("fix-order", *F1)], "does not descend from",
                 id="fixed-on-another-line-of-history"),
    # uncommitted changes block verification
    pytest.param(lambda r: (r.repo / "calc.py").write_text("def add(a, b):\n    return b + a\n"), {},
                 [("uncommitted", None, None, None), ("tests", None, None, None)],
                 "uncommitted changes block verification: calc.py", id="uncommitted-source"),
    pytest.param(lambda r: (r.repo / "tests" / "test_new.py").write_text("def test_x():\n    pass\n"), {},
                 [("uncommitted", None, None, None), ("tests", None, None, None)],
                 "uncommitted changes block verification: tests/test_new.py", id="untracked-test"),
    pytest.param(lambda r: ((r.repo / "pytest.ini").write_text("[pytest]\n"), git(r.repo, "add", "pytest.ini")), {},
                 [("uncommitted", None, None, None), ("tests", None, None, None)],
                 "uncommitted changes block verification: pytest.ini", id="staged-config"),
]


@pytest.mark.parametrize(("mutate", "options", "expected", "message"), CASES)
def test_each_rule_fails_its_invalid_set(receipts: Receipts, mutate: Callable[[Receipts], None] | None,
                                         options: dict[str, Any], expected: list[Where], message: str) -> None:
    if mutate is not None:
        mutate(receipts)
    report = verify(receipts, **options)
    assert where(report) == expected, [p.render() for p in report.problems]
    assert message in report.problems[0].message


def test_an_executable_regression_file_is_a_repository_file(receipts: Receipts) -> None:
    def executable(r: Receipts, path: Path) -> None:
        path.write_text((r.repo / "tests" / "test_calc.py").read_text())
        path.chmod(0o755)

    committed_regression("test_exec.py", executable)(receipts)
    assert git(receipts.repo, "ls-tree", "HEAD", "tests/test_exec.py").startswith("100755 ")
    report = verify(receipts)
    assert report.problems == [], [p.render() for p in report.problems]


def test_the_text_report_lists_every_problem_with_round_reviewer_and_finding(receipts: Receipts,
                                                                               snapshot: object) -> None:
    from axpipe.review import receipts_text

    receipts.write("round-1/beta/exit.txt", "1\n")
    receipts.edit_finding(0, regression={"file": "tests/test_calc.py", "fullName": "tests/test_calc.py::test_skipped"})
    drop_f2(receipts)
    text = receipts_text.render(verify(receipts), "review")
    text = text.replace(receipts.a[:12], "<A>").replace(receipts.b[:12], "<B>")
    assert text == snapshot


def test_a_valid_text_report(receipts: Receipts, snapshot: object) -> None:
    from axpipe.review import receipts_text

    text = receipts_text.render(verify(receipts), "review")
    assert text.replace(receipts.a[:12], "<A>").replace(receipts.b[:12], "<B>") == snapshot


def test_reviewer_receipts_written_by_the_round_runner_verify(repo: Path) -> None:
    """What `review round` writes is exactly what `receipts verify` accepts."""
    import sys

    from helpers import RESOURCES

    from axpipe.recipe.validation import validate_recipe
    from axpipe.review import round as review_round

    script = str(RESOURCES / "reviewers" / "reviewer.py")
    config = {"name": "r", "reviewers": [{"name": "alpha", "command": [sys.executable, script, "no-findings"]},
                                         {"name": "beta", "command": [sys.executable, script, "stderr-noise"],
                                          "output": "jsonl"}]}
    recipe, _ = validate_recipe(config, config)
    result = review_round.run_round(workspace=repo, root=repo / "review", reviewers=review_round.plan(
        recipe.reviewers, None))
    assert result.completed
    report = registry.load("axpipe.receipt_verifiers", "cli-review").verify(
        ReceiptRequest(root=repo / "review", workspace=repo, artifacts_dir=repo.parent / "artifacts"))
    assert where(report) == []


def test_text_and_jsonl_receipts_from_the_fixture_helpers_parse() -> None:
    from axpipe.review.verdicts import parse_jsonl, parse_text

    assert parse_text(text_receipt("VERDICT: findings F1")["stdout.txt"]).findings == ("F1",)
    assert parse_jsonl(jsonl_receipt("VERDICT: no findings")["stdout.jsonl"]).findings == ()


def test_the_json_shape(receipts: Receipts) -> None:
    from axpipe.review import receipts_text

    drop_f2(receipts)
    payload = receipts_text.to_json(verify(receipts), "review")
    assert json.loads(json.dumps(payload)) == payload
    assert set(payload) == {"ok", "root", "head", "rounds", "findings", "tests", "problems"}
    assert payload["ok"] is False
    assert payload["problems"] == [{"rule": "undisposed", "round": 1, "reviewer": "alpha", "finding": "F2",
                                    "message": "finding has no disposition in dispositions.json (fixed or rejected, "
                                               "with evidence)"}]
    assert payload["tests"] == [{"file": "tests/test_calc.py", "fullName": "tests/test_calc.py::test_add_regression",
                                 "status": "passed", "executions": 1, "note": ""}]


def test_an_empty_list_of_required_reviewers_is_a_problem(receipts: Receipts) -> None:
    report = verify(receipts, reviewers=[])
    assert where(report) == [("reviewer", None, None, None)]


def test_a_regression_file_no_adapter_runs(receipts: Receipts) -> None:
    receipts.commit("tests/test_calc.rb", "# ruby\n", "a ruby test")
    receipts.write("round-2/revision.txt", git(receipts.repo, "rev-parse", "HEAD").strip() + "\n")
    receipts.edit_finding(0, regression={"file": "tests/test_calc.rb", "fullName": "calc adds"})
    report = verify(receipts)
    assert where(report) == [("tests", *F1)]
    assert report.problems[0].message == ("no test adapter runs tests/test_calc.rb (chosen by file suffix; "
                                          "installed: pytest, vitest)")


def test_a_forced_test_adapter_runs_every_regression(receipts: Receipts) -> None:
    report = verify(receipts, test_adapter="vitest")
    assert where(report) == [("tests", *F1)]
    # With Node.js: vitest is not installed in this Python project; without: Node.js is missing.
    assert ("vitest is not installed for this file" in report.problems[0].message
            or "Node.js is not installed" in report.problems[0].message)
