"""`axpipe review round` and `axpipe receipts verify` as a user calls them: subprocesses in
real repositories, exit codes 0/1/2, text and --json output, and every bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CLI
from helpers import AXPIPE, RESOURCES, git, project_venv, write_recipe
from review_fixtures import Receipts, build

REVIEWER = RESOURCES / "reviewers" / "reviewer.py"


@pytest.fixture
def reviewed(repo: Path) -> Path:
    """A repository whose recipe library has a recipe with two scripted reviewers."""
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    (repo / ".gitignore").write_text("/review/\n")
    write_recipe(repo / "recipes", "team-review", f"""
name: team-review
description: Two scripted reviewers.
mode: no-findings
reviewers:
  - name: alpha
    command: ["{sys.executable}", "{REVIEWER}", "findings", "F1"]
  - name: beta
    command: ["{sys.executable}", "{REVIEWER}", "${{mode}}"]
receipts:
  root: review
""")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "review recipe")
    return repo


def test_review_round_runs_the_recipes_reviewers(cli: CLI, reviewed: Path) -> None:
    result = cli("review", "round", "--recipe", "team-review")
    assert result.exit_code == 0, result.stderr
    head = git(reviewed, "rev-parse", "HEAD").strip()
    assert result.stdout == (f"Review round 1 of {head[:12]}: completed\n"
                             f"  folder: {reviewed / 'review' / 'round-1'}\n"
                             "  [  ok] alpha: verdict: findings F1\n"
                             "  [  ok] beta: verdict: no findings\n")
    assert (reviewed / "review" / "round-1" / "revision.txt").read_text() == head + "\n"


def test_review_round_json_and_a_subset_of_reviewers(cli: CLI, reviewed: Path) -> None:
    result = cli("review", "round", "--recipe", "team-review", "--reviewers", "beta", "--root", "elsewhere",
                 "--json")
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert set(payload) == {"round", "status", "revision", "base", "folder", "reviewers", "problems"}
    assert (payload["round"], payload["status"], payload["folder"]) == (1, "completed",
                                                                        str(reviewed / "elsewhere" / "round-1"))
    (beta,) = payload["reviewers"]
    assert set(beta) == {"name", "kind", "status", "exit_code", "reason", "verdict", "output", "duration"}
    assert (beta["name"], beta["status"], beta["exit_code"], beta["verdict"]) == (
        "beta", "passed", 0, {"line": "VERDICT: no findings", "findings": []})


def test_a_failed_review_round_exits_1_and_keeps_the_attempt(cli: CLI, reviewed: Path) -> None:
    result = cli("review", "round", "--recipe", "team-review", "mode=fail")
    assert result.exit_code == 1
    assert "FAILED (kept as an attempt, not a round)" in result.stdout
    assert "[FAIL] beta: exit code 3: error: not logged in" in result.stdout
    assert (reviewed / "review" / "attempts" / "round-1" / "attempt-1" / "beta" / "exit.txt").read_text() == "3\n"
    assert not (reviewed / "review" / "round-1").exists()


@pytest.mark.parametrize(("args", "message"), [
    ([], "axpipe: error: --recipe: name the recipe whose `reviewers:` section to run"),
    (["--recipe", "nope"], "axpipe: error: unknown recipe 'nope'"),
    (["--recipe", "team-review", "--reviewers", "alpha,gamma"],
     "axpipe: error: --reviewers: unknown reviewer(s) gamma; the recipe declares alpha, beta"),
    (["--recipe", "team-review", "--reviewers", "alpha,,beta"], "axpipe: error: --reviewers: 'alpha,,beta' has an "
                                                               "empty name"),
    (["--recipe", "team-review", "reviewers.0.kind=claud"], "reviewers[0].kind: unknown reviewer 'claud' (did you "
                                                            "mean 'claude-code'?)"),
    (["--recipe", "team-review", "--base", "nowhere"], "axpipe: error: --base: 'nowhere' does not name a commit"),
    (["--recipe", "team-review", "--max-diff-bytes", "0"], "axpipe: error: --max-diff-bytes: 0 must be at least 1"),
])
def test_review_round_refuses_bad_input_with_exit_2(cli: CLI, reviewed: Path, args: list[str],
                                                    message: str) -> None:
    result = cli("review", "round", *args)
    assert result.exit_code == 2, result.stderr
    assert message in result.stderr
    assert not (reviewed / "review").exists()
    assert not (reviewed / ".axpipe").exists()  # nor axpipe's own folder, nor the git exclude for it
    assert ".axpipe" not in (reviewed / ".git" / "info" / "exclude").read_text()


def test_receipts_verify_exits_0_for_valid_receipts(cli: CLI, repo: Path) -> None:
    receipts = build(repo)
    result = cli("receipts", "verify", "--root", "review")
    assert result.exit_code == 0, result.stdout
    assert result.stdout.splitlines()[-1] == ("Verified: 2 round(s) by alpha, beta; 2 finding(s), 1 fixed with a "
                                              "passing regression test, 1 rejected")
    assert receipts.root.is_dir()
    assert git(repo, "status", "--porcelain") == "?? review/\n"  # running the tests left nothing behind


def test_receipts_verify_runs_the_regression_tests_with_the_projects_venv(cli: CLI, repo: Path) -> None:
    # The project's tests need a package only its own venv has; axpipe's interpreter lacks it.
    project_venv(repo / ".venv", modules={"calc_dependency.py": "READY = True\n"})
    (repo / ".git" / "info" / "exclude").write_text(".venv/\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "conftest.py").write_text("import calc_dependency\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the tests need calc_dependency")
    build(repo)
    result = cli("receipts", "verify", "--root", "review", "--json")
    assert result.exit_code == 0, result.stdout
    assert [(test["fullName"], test["status"]) for test in json.loads(result.stdout)["tests"]] == [
        ("tests/test_calc.py::test_add_regression", "passed")]
    # Named, another interpreter runs them, and the problem says which one ran.
    result = cli("receipts", "verify", "--root", "review", "--python", sys.executable)
    assert result.exit_code == 1
    assert (f"pytest wrote no JUnit report (exit code 4) with {sys.executable} (the interpreter named for the "
            "tests); its output ends: ") in result.stdout
    assert "ModuleNotFoundError: No module named 'calc_dependency'" in result.stdout


def test_receipts_verify_says_which_interpreter_has_no_pytest(cli: CLI, repo: Path) -> None:
    bare = project_venv(repo.parent / "bare", with_pytest=False)
    build(repo)
    result = cli("receipts", "verify", "--root", "review", "--python", str(bare))
    assert result.exit_code == 1
    assert (f"test adapter pytest could not run tests/test_calc.py::test_add_regression: pytest is not installed "
            f"for {bare} (the interpreter named for the tests): install it there, or name another interpreter with "
            "--python (receipts.python in a recipe)") in result.stdout
    missing = cli("receipts", "verify", "--root", "review", "--python", "no-such-dir/python")
    assert missing.exit_code == 2
    assert missing.stderr == ("axpipe: error: --python: 'no-such-dir/python' is not a Python interpreter that can be "
                              "run (a path, relative to the project folder, or a program on PATH)\n")


def test_receipts_verify_exits_1_listing_every_problem(cli: CLI, repo: Path) -> None:
    receipts = build(repo)
    receipts.write("round-2/beta/exit.txt", "1\n")
    receipts.commit("README.md", "moved on\n", "docs")
    result = cli("receipts", "verify", "--root", "review", "--reviewers", "alpha,beta,gamma")
    assert result.exit_code == 1
    problems = [line for line in result.stdout.splitlines() if line.startswith("  - ")]
    assert problems == [
        "  - [reviewer] round-1/gamma: required reviewer has no folder in this round",
        f"  - [head] round-2: the final round reviewed {receipts.b[:12]} but HEAD is "
        f"{git(repo, 'rev-parse', 'HEAD').strip()[:12]}: review the current commit",
        "  - [exit] round-2/beta: exit.txt is '1', not 0: a failed review is an attempt, not a receipt",
        "  - [reviewer] round-2/gamma: required reviewer has no folder in this round"]


def test_receipts_verify_json(cli: CLI, repo: Path) -> None:
    receipts = build(repo)
    (receipts.root / "round-1" / "beta" / "stdout.jsonl").write_text("")
    result = cli("receipts", "verify", "--root", "review", "--json")
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["ok"] is False and payload["head"] == receipts.b
    assert payload["problems"] == [{
        "rule": "verdict", "round": 1, "reviewer": "beta", "finding": None,
        "message": "stdout.jsonl: the event stream is empty; expected its last text event to end with "
                   "`VERDICT: no findings` or `VERDICT: findings <id>[, <id>...]`"}]


@pytest.mark.parametrize(("args", "message"), [
    (["--root", "absent"], "axpipe: error: --root: absent is not a folder\n"),
    (["--root", "review", "--reviewers", ",alpha"], "axpipe: error: --reviewers: ',alpha' has an empty name"),
    (["--root", "review", "--reviewers", "alpha,alpha"], "axpipe: error: --reviewers: alpha named twice\n"),
    (["--root", "review", "--test-adapter", "mocha"], "axpipe: error: unknown test adapter 'mocha'"),
    (["--root", "review", "--test-adapter", "jest"], "axpipe: error: --test-adapter: test adapter 'jest' runs no "
                                                     "named tests (it narrows the gate's test commands only)"),
    (["--root", "review", "--timeout", "soon"], "axpipe: error: --timeout: expected a duration"),
    (["--root", "review", "--test-dir", "../elsewhere"], "axpipe: error: --test-dir: '../elsewhere' must be a "
                                                         "folder inside the repository"),
    ([], "the following arguments are required: --root"),
])
def test_receipts_verify_refuses_bad_input_with_exit_2(cli: CLI, repo: Path, args: list[str], message: str) -> None:
    build(repo)
    result = cli("receipts", "verify", *args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_receipts_verify_outside_git_is_an_input_error(cli: CLI, tmp_path: Path) -> None:
    (tmp_path / "outside" / "review").mkdir(parents=True)
    result = cli("receipts", "verify", "--root", "review", cwd=tmp_path / "outside")
    assert result.exit_code == 2
    assert "is not inside a git work tree; reviews and receipts need one" in result.stderr


def test_receipts_verify_with_a_root_outside_the_repository(cli: CLI, repo: Path, tmp_path: Path) -> None:
    receipts: Receipts = build(repo)
    outside = tmp_path / "kept-elsewhere"
    receipts.root.rename(outside)
    result = cli("receipts", "verify", "--root", str(outside))
    assert result.exit_code == 0, result.stdout


def test_receipts_verify_does_not_import_hydra(repo: Path) -> None:
    build(repo)
    code = ("import sys\nfrom axpipe.cli import main\ncode = main(['receipts', 'verify', '--root', 'review'])\n"
            "print(code, 'hydra' in sys.modules, 'omegaconf' in sys.modules)")
    completed = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True)
    assert completed.stdout.splitlines()[-1] == "0 False False"


@pytest.mark.parametrize("command", [["review", "round"], ["receipts", "verify"]])
def test_help(command: list[str], snapshot: object) -> None:
    completed = subprocess.run([*AXPIPE, *command, "--help"], capture_output=True, text=True,
                               env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"})
    assert completed.returncode == 0
    assert completed.stdout == snapshot


def normalized(text: str, replacements: dict[str, str]) -> str:
    for old, new in replacements.items():
        text = text.replace(old, new)
    return text


def test_receipts_verify_json_snapshot(cli: CLI, repo: Path, snapshot: object) -> None:
    receipts = build(repo)
    receipts.write("round-1/alpha/stdout.txt", "F1: wrong\nF2: style\nF3: new\nVERDICT: findings F1, F2, F3\n")
    result = cli("receipts", "verify", "--root", "review", "--json")
    assert result.exit_code == 1
    assert normalized(result.stdout, {receipts.a: "<A>", receipts.b: "<B>"}) == snapshot


def test_review_round_json_snapshot(cli: CLI, reviewed: Path, snapshot: object) -> None:
    result = cli("review", "round", "--recipe", "team-review", "--json")
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    for reviewer in payload["reviewers"]:
        assert reviewer["duration"] > 0
        reviewer["duration"] = "<seconds>"
    text = json.dumps(payload, indent=2)
    head = git(reviewed, "rev-parse", "HEAD").strip()
    assert normalized(text, {head: "<HEAD>", git(reviewed, "rev-parse", "HEAD~1").strip(): "<BASE>",
                             str(reviewed): "<repo>"}) == snapshot
