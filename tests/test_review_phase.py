"""The review phase of `axpipe run`, and the `receipts` check kind a goal can require."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import CLI
from helpers import RESOURCES, git, tree, write_recipe
from review_fixtures import build

from axpipe.recipe.validation import validate_recipe
from axpipe.run.events import EventLog
from axpipe.run.lifecycle import review_phase
from axpipe.run.phases import RunContext
from axpipe.testing import CheckCase, CheckKindContract

REVIEWER = RESOURCES / "reviewers" / "reviewer.py"


def init_repo(path: Path) -> Path:
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("a project\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "initial")
    return path


class TestReceiptsCheckKind(CheckKindContract):
    kind = "receipts"

    def passing_case(self, workspace: Path) -> CheckCase:
        build(init_repo(workspace))
        return CheckCase(params={"root": "review"})

    def failing_case(self, workspace: Path) -> CheckCase:
        receipts = build(init_repo(workspace))
        receipts.write("round-2/alpha/exit.txt", "1\n")
        return CheckCase(params={"root": "review", "reviewers": ["alpha", "beta"]})


def test_the_receipts_check_lists_problems_as_its_output(repo: Path) -> None:
    from axpipe.interfaces import CheckRequest
    from axpipe.plugin import registry
    from axpipe.recipe import typed as validation

    build(repo)
    (repo / "review" / "dispositions.json").unlink()
    kind = registry.load("axpipe.checks", "receipts")
    params, _ = validation.load_plugin_params(kind, {"root": "review"}, "check", None)
    outcome = kind.run(CheckRequest(check_id="c", command=None, params=params, cwd=repo, timeout=60,
                                    artifacts_dir=repo.parent / "logs"))
    assert outcome.status.value == "failed"
    assert outcome.summary == ("receipts do not verify (3 problems); first: [dispositions] dispositions.json is "
                               "missing, but verdicts report 2 finding(s)")
    assert "  - [undisposed] round-1/alpha finding F2:" in outcome.output_tail
    assert [problem["rule"] for problem in outcome.details["problems"]] == ["dispositions", "undisposed",
                                                                             "undisposed"]
    missing = kind.run(CheckRequest(check_id="c", command=None, params=params, cwd=repo / "nowhere", timeout=60))
    assert missing.status.value == "error"


def test_without_reviewers_or_receipts_the_phase_is_not_declared(tmp_path: Path) -> None:
    recipe, variables = validate_recipe({"name": "r"}, {"name": "r"})
    context = RunContext(recipe=recipe, config={}, variables=variables, root=tmp_path, run_dir=tmp_path / "run",
                         run_id="1", events=EventLog())
    assert review_phase(context).status == "not-declared"


@pytest.fixture
def library(repo: Path) -> Path:
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    common = f"""
reviewers:
  - name: alpha
    command: ["{sys.executable}", "{REVIEWER}", "${{mode}}"]
receipts:
  root: .axpipe/review
"""
    write_recipe(repo / "recipes", "reviewed", "name: reviewed\nmode: no-findings\n" + common)
    write_recipe(repo / "recipes", "failing-checks", "name: failing-checks\nmode: no-findings\n" + common + """
goal:
  objective: "never reviewed"
  acceptance:
    AC1: {tag: closes, text: "x", check: broken}
  checks:
    - {id: broken, acceptance: [AC1], command: "false"}
""")
    write_recipe(repo / "recipes", "verify-only", """
name: verify-only
receipts:
  root: review
goal:
  objective: "the review receipts verify"
  acceptance:
    AC1: {tag: closes, text: "receipts verify", check: reviewed}
  checks:
    - {id: reviewed, kind: receipts, acceptance: [AC1], root: review}
""")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "recipes")
    return repo


def events_of(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_a_run_reviews_and_verifies_the_receipts(cli: CLI, library: Path) -> None:
    result = cli("run", "recipe=reviewed", "--json")
    assert result.exit_code == 0, result.stderr
    events = events_of(result.stdout)
    kinds = [event["type"] for event in events if event.get("phase") == "review"]
    assert kinds == ["phase.started", "review.started", "review.finished", "review.round", "receipts.verified",
                     "phase.finished"]
    finished = next(event for event in events if event["type"] == "phase.finished" and event["phase"] == "review")
    assert finished["summary"].startswith("round 1 completed (alpha: no findings); receipts verified: 1 round(s)")
    assert (library / ".axpipe" / "review" / "round-1" / "alpha" / "exit.txt").read_text() == "0\n"


def test_after_a_review_round_settle_fingerprints_the_source_again(
        library: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # Without reviewers the completion gate judges on the fingerprint verify's last check
    # left (test_goals); a review round runs programs in between, so settle takes its own.
    # A review phase with nothing declared takes no snapshots: only the unit's start does.
    goal = """
goal:
  objective: "true stays true"
  acceptance:
    AC1: {tag: closes, text: "true exits 0", check: truth}
  checks:
    - {id: truth, acceptance: [AC1], command: "true"}
"""
    write_recipe(library / "recipes", "reviewed-goal", f"""
name: reviewed-goal
reviewers:
  - name: alpha
    command: ["{sys.executable}", "{REVIEWER}", "no-findings"]
receipts:
  root: .axpipe/review
{goal}""")
    write_recipe(library / "recipes", "unreviewed-goal", "name: unreviewed-goal\n" + goal)
    git(library, "add", "-A")
    git(library, "commit", "-qm", "two goals")
    from axpipe import cli
    from axpipe.change import from_git as changes
    from axpipe.goal import fingerprint

    computed: list[str] = []
    fingerprint_compute, snapshot = fingerprint.compute, changes.snapshot
    monkeypatch.setattr(fingerprint, "compute", lambda *a, **k: computed.append("fingerprint") or
                        fingerprint_compute(*a, **k))
    monkeypatch.setattr(changes, "snapshot", lambda *a, **k: computed.append("snapshot") or snapshot(*a, **k))
    monkeypatch.chdir(library)
    assert cli.main(["run", "recipe=reviewed-goal"]) == 0
    assert "round 1 completed (alpha: no findings)" in capsys.readouterr().out
    # the unit's start, verify's two, the read-only contract's two around the round, settle's own
    assert computed == ["snapshot", "fingerprint", "fingerprint", "snapshot", "snapshot", "fingerprint"]

    computed.clear()
    assert cli.main(["run", "recipe=unreviewed-goal"]) == 0
    assert "goal is now complete" in capsys.readouterr().out
    assert computed == ["snapshot", "fingerprint", "fingerprint"]


def test_a_failed_round_stops_the_run_with_exit_1(cli: CLI, library: Path) -> None:
    result = cli("run", "recipe=reviewed", "mode=fail")
    assert result.exit_code == 1
    assert "review round 1 failed (alpha: exit code 3: error: not logged in); the attempt is kept in" in result.stdout
    assert not (library / ".axpipe" / "review" / "round-1").exists()


def test_a_change_whose_checks_fail_is_not_sent_to_reviewers(cli: CLI, library: Path) -> None:
    result = cli("run", "recipe=failing-checks")
    assert result.exit_code == 6  # the goal stays active
    assert "not reviewed: checks did not pass (broken)" in result.stdout
    assert not (library / ".axpipe" / "review").exists()


def test_a_goal_can_require_verified_receipts(cli: CLI, library: Path) -> None:
    build(library)
    result = cli("run", "recipe=verify-only")
    assert result.exit_code == 0, result.stdout
    assert "[   ok] reviewed: receipts verified: 2 round(s) by alpha, beta" in result.stdout
    (library / "review" / "round-2" / "beta" / "exit.txt").write_text("2\n")
    failed = cli("run", "recipe=verify-only")
    assert failed.exit_code == 6  # re-verified, the complete goal reopens
    assert "[ FAIL] reviewed: receipts do not verify (1 problem); first: [exit] round-2/beta" in failed.stdout


def test_review_receipts_inside_the_goals_source_are_refused_before_anything_runs(
        cli: CLI, repo: Path, library: Path) -> None:
    # Each round would change the source the checks are verified on: never complete.
    before = tree(repo)
    result = cli("run", "recipe=failing-checks", "receipts.root=reviews")
    assert result.exit_code == 2
    assert ("receipts.root: reviews is inside the goal's source (source path '.'): the review rounds written "
            "there would change the files the checks are verified on") in result.stderr
    assert tree(repo) == before
    (repo / ".gitignore").write_text("reviews/\n")  # a folder git ignores is not part of the source
    ignored = cli("run", "recipe=failing-checks", "receipts.root=reviews")
    assert ignored.exit_code != 2, ignored.stderr
    narrowed = cli("run", "recipe=failing-checks", "receipts.root=elsewhere", "goal.source_paths=[recipes]")
    assert "receipts.root" not in narrowed.stderr


def test_the_review_round_recipe_runs_end_to_end(cli: CLI, repo: Path) -> None:
    result = cli("run", "recipe=review-round", "--json")
    assert result.exit_code == 0, result.stderr + result.stdout
    events = events_of(result.stdout)
    verified = [event for event in events if event["type"] == "receipts.verified"]
    assert [(event["ok"], event["problems"]) for event in verified] == [(True, [])]
    rounds = [event for event in events if event["type"] == "review.round"]
    assert [(event["round"], event["status"]) for event in rounds] == [(1, "completed")]
    reviewers = {event["reviewer"]: event["verdict"] for event in events if event["type"] == "review.finished"}
    assert reviewers == {"markers": "no findings", "tests-touched": "no findings"}
    folder = Path(rounds[0]["folder"])
    assert sorted(path.name for path in folder.iterdir()) == ["base.txt", "diff.patch", "markers", "revision.txt",
                                                              "tests-touched"]
    assert (folder / "tests-touched" / "stdout.jsonl").is_file()


def test_the_sample_reviewers_do_find_things(tmp_path: Path) -> None:
    """The scripted reviewers of the review-round sample decide from the diff, not canned answers."""
    import subprocess

    from axpipe import resources

    sample = resources.samples_dir() / "review" / "reviewers"
    prompt = tmp_path / "prompt.md"
    prompt.write_text("Files changed:\n- shop/cart.py\n\n```diff\n+++ b/shop/cart.py\n+    breakpoint()\n```\n")
    markers = subprocess.run([sys.executable, str(sample / "markers.py"), str(prompt)], capture_output=True,
                             text=True)
    assert markers.stdout.splitlines()[-1] == "VERDICT: findings M1"
    touched = subprocess.run([sys.executable, str(sample / "tests_touched.py")], input=prompt.read_text(),
                             capture_output=True, text=True)
    assert json.loads(touched.stdout.splitlines()[-1])["text"].endswith("VERDICT: findings T1")
