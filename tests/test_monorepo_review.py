"""Reviews and receipts when the project is a subfolder of a git work tree (a monorepo).

Its ``axpipe.yaml`` sits in ``svc/`` below the top, where every command runs. git names
some paths from the top (``git status``, a diff of two trees) and others from the folder it
runs in; review rounds, QA and judges, the read-only contract and ``receipts verify`` must
all agree on one workspace, the project folder, and still see a change made outside it.
The reviewers are the scripted stand-ins of the other review tests, run as real processes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from goalkit import CALC, FIX
from helpers import RESOURCES, git, run_cli, write_recipe
from review_fixtures import CALC_BUGGY, CALC_FIXED, TESTS_A, TESTS_B
from test_bounces import CONFIRMED, PASS, Reviewed

ROUND_REVIEWER = RESOURCES / "reviewers" / "reviewer.py"
VERDICT_REVIEWER = Path(__file__).resolve().parent / "agents" / "verdict_reviewer.py"
COMMIT = ["git add -A", "git commit -qm 'agent: fix add'"]


def command(*args: str | Path) -> str:
    return json.dumps([sys.executable, *(str(arg) for arg in args)])


def unit_reviewers(scratch: Path, qa: dict[str, Any], judge: dict[str, Any]) -> str:
    """A QA unit ``tester`` and a judge ``judge`` following the given plans (agents/verdict_reviewer.py)."""
    entries = []
    for name, role, plan, model in (("tester", "qa", qa, "model-q"), ("judge", "judge", judge, "model-j")):
        path = scratch / f"{name}.json"
        path.write_text(json.dumps(plan))
        entries.append(f"  - name: {name}\n    {role}: true\n    model: {model}\n"
                       f"    command: {command(VERDICT_REVIEWER, path)}\n")
    return "".join(entries)


def prompts(scratch: Path, name: str) -> list[str]:
    log = scratch / f"{name}.json.prompts"
    return [json.loads(line)["prompt"] for line in log.read_text().splitlines()]


def test_a_run_with_reviewers_and_receipts_in_the_project_folder_completes(repo: Path, tmp_path: Path) -> None:
    svc = repo / "svc"
    svc.mkdir()
    project = Reviewed(svc, tmp_path)
    # The QA keeps a note in the receipts folder, inside the project: allowed, as the round's own files are.
    qa = {"calls": [{"write": {"reviews/round-1/tester/verdict.txt": "PASS\n"}, "say": PASS["say"]}]}
    # The fingerprint covers the code only: receipts written into it would make the unit stale
    # (so they would at the top of a repository too).
    project.recipe(turns=[{**FIX, "run": COMMIT}], agent_extra="  model: model-a\n",
                   goal_extra="  source_paths: [calc.py, test_calc.py]\n", extra=(
        "reviewers:\n"
        f"  - name: alpha\n    command: {command(ROUND_REVIEWER, 'no-findings')}\n"
        + unit_reviewers(tmp_path, qa, {"calls": [CONFIRMED]})
        + "receipts:\n  root: reviews\n"))
    git(svc, "add", "-A")
    git(svc, "commit", "-qm", "recipe")
    result = project.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "round 1 completed (alpha: no findings); receipts verified: 1 round(s) by alpha" in result.stdout
    assert project.status()["goal"]["status"] == "complete"
    assert (svc / "reviews" / "round-1" / "alpha" / "exit.txt").read_text() == "0\n"
    assert (svc / "reviews" / "round-1" / "tester" / "verdict.txt").read_text() == "PASS\n"
    # Reviewers run in svc/: the paths they are shown are the ones they can open from there.
    round_prompt = (svc / "reviews" / "round-1" / "alpha" / "prompt.md").read_text()
    assert "Files changed:\n- calc.py\n" in round_prompt and "+++ b/calc.py" in round_prompt
    (judged,) = prompts(tmp_path, "judge")
    assert "Files: calc.py\n" in judged and "+++ b/calc.py" in judged and "svc/calc.py" not in judged
    status = git(repo, "status", "--porcelain", "-uall").splitlines()  # the agent committed its fix
    assert status and all(line.startswith("?? svc/reviews/") for line in status), status


@pytest.mark.parametrize("folder", ["", "svc"], ids=["at-the-top", "in-a-subfolder"])
def test_review_round_and_receipts_verify_agree_on_the_project_folder(repo: Path, tmp_path: Path,
                                                                      folder: str) -> None:
    """A finding, its fix with a regression test, a second round and the verification, all
    run from the project folder. At the top of the repository this is the regression check:
    it passes with or without the monorepo fix, and must keep passing."""
    project = repo / folder
    project.mkdir(exist_ok=True)
    (project / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    write_recipe(project / "recipes", "rr", f"""
name: rr
mode: findings
reviewers:
  - name: alpha
    command: {command(ROUND_REVIEWER, "${mode}")}
receipts:
  root: reviews
""")
    (project / "pytest.ini").write_text("[pytest]\npythonpath = .\naddopts = -p no:hydra_pytest -p no:syrupy\n")
    (project / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n")
    (project / "tests").mkdir()
    (project / "tests" / "test_calc.py").write_text(TESTS_A)
    (project / "calc.py").write_text(CALC_BUGGY)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "add, with a bug")

    def axpipe(*args: str) -> Any:
        return run_cli(*args, cwd=project)

    first = axpipe("review", "round", "--recipe", "rr")
    assert first.exit_code == 0, first.stdout + first.stderr
    assert f"  folder: {project / 'reviews' / 'round-1'}\n" in first.stdout
    assert "[  ok] alpha: verdict: findings F1" in first.stdout
    (project / "tests" / "test_calc.py").write_text(TESTS_B)
    (project / "calc.py").write_text(CALC_FIXED)
    git(project, "add", "--", "calc.py", "tests")
    git(project, "commit", "-qm", "fix F1: add adds")
    second = axpipe("review", "round", "--recipe", "rr", "mode=no-findings")
    assert second.exit_code == 0, second.stdout + second.stderr
    (project / "reviews" / "dispositions.json").write_text(json.dumps({"findings": [
        {"round": 1, "cli": "alpha", "id": "F1", "status": "fixed", "evidence": "add subtracted; fixed",
         "regression": {"file": "tests/test_calc.py", "fullName": "tests/test_calc.py::test_add_regression"}}]}))
    verified = axpipe("receipts", "verify", "--root", "reviews")
    assert verified.exit_code == 0, verified.stdout + verified.stderr
    assert verified.stdout.splitlines()[-1] == ("Verified: 2 round(s) by alpha; 1 finding(s), 1 fixed with a "
                                                "passing regression test, 0 rejected")
    # The regression test ran, in the project folder, exactly once.
    payload = json.loads(axpipe("receipts", "verify", "--root", "reviews", "--json").stdout)
    assert [(test["fullName"], test["status"], test["executions"]) for test in payload["tests"]] == [
        ("tests/test_calc.py::test_add_regression", "passed", 1)]
    # A fix that names a test file never committed is still caught, from the project folder too.
    (project / "reviews" / "dispositions.json").write_text(
        (project / "reviews" / "dispositions.json").read_text().replace("test_calc.py", "test_gone.py"))
    broken = axpipe("receipts", "verify", "--root", "reviews")
    assert broken.exit_code == 1
    assert "[regression] round-1/alpha finding F1: 'tests/test_gone.py' is not a file committed at HEAD" \
        in broken.stdout


def test_a_round_shows_and_guards_changes_outside_the_project_folder(repo: Path) -> None:
    svc = repo / "svc"
    (svc / "recipes").mkdir(parents=True)
    (svc / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    write_recipe(svc / "recipes", "rr", f"""
name: rr
reviewers:
  - name: alpha
    command: {command(ROUND_REVIEWER, "no-findings")}
""")
    (repo / "shared").mkdir()
    (repo / "shared" / "lib.txt").write_text("v1\n")
    (svc / "calc.py").write_text(CALC)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a service and a shared library")
    (svc / "calc.py").write_text(CALC.replace("a - b", "a + b"))
    (repo / "shared" / "lib.txt").write_text("v2\n")
    git(repo, "commit", "-qam", "the change spans the service and the library")

    (repo / "shared" / "lib.txt").write_text("v3, not committed\n")
    dirty = run_cli("review", "round", "--recipe", "rr", cwd=svc)
    assert dirty.exit_code == 2
    assert "the checkout has uncommitted changes (../shared/lib.txt)" in dirty.stderr
    git(repo, "checkout", "--", "shared/lib.txt")

    # A user's own `diff.relative` would make every diff run in svc/ leave out the library's
    # change, and GIT_LITERAL_PATHSPECS=1 would read the `:/` pathspec that shows it literally.
    git(repo, "config", "diff.relative", "true")
    result = run_cli("review", "round", "--recipe", "rr", cwd=svc, env={"GIT_LITERAL_PATHSPECS": "1"})
    assert result.exit_code == 0, result.stdout + result.stderr
    folder = svc / ".axpipe" / "review" / "round-1"
    patch = (folder / "diff.patch").read_text()
    assert "+++ b/calc.py\n" in patch
    assert "--- a/../shared/lib.txt\n+++ b/../shared/lib.txt\n@@ -1 +1 @@\n-v1\n+v2\n" in patch
    assert "Files changed:\n- calc.py\n- ../shared/lib.txt\n" in (folder / "alpha" / "prompt.md").read_text()
    assert git(repo, "status", "--porcelain", "-uall") == ""  # .axpipe/ in svc/ stays out of git's view


def test_a_qa_unit_that_edits_outside_the_project_folder_is_a_hard_stop(repo: Path, tmp_path: Path) -> None:
    svc = repo / "svc"
    svc.mkdir()
    (repo / "shared.txt").write_text("the library's\n")
    project = Reviewed(svc, tmp_path)
    project.plans({"calls": [{"write": {"../shared.txt": "changed by QA\n"}, "say": PASS["say"]}]},
                  {"calls": [CONFIRMED]})
    git(svc, "add", "-A")
    git(svc, "commit", "-qm", "recipe")
    result = project.run()
    assert result.exit_code == 3, result.stdout + result.stderr
    goal = project.status()["goal"]
    assert goal["blocked"]["kind"] == "read-only"
    assert goal["reason"] == "qa tester wrote outside .axpipe/artifacts/calc/: ../shared.txt"


def test_qa_and_judges_are_shown_a_file_name_with_a_space_whole(repo: Path, tmp_path: Path) -> None:
    (repo / "my notes.md").write_text("first\n")
    project = Reviewed(repo, tmp_path)
    project.plans({"calls": [PASS]}, {"calls": [CONFIRMED]},
                  turns=[{**FIX, "write": {"my notes.md": "first\nsecond\n"}}])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "recipe")
    result = project.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    (judged,) = prompts(tmp_path, "judge")
    assert "Files: calc.py, my notes.md\n" in judged
