"""The `git-scope` check kind: every path of every commit since the baseline, in scope.
Each failure names the commit and the path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from goalkit import Project
from helpers import git

from axpipe.interfaces import CheckOutcome, CheckRequest, CheckStatus
from axpipe.plugin import registry
from axpipe.recipe import typed as validation
from axpipe.testing import CheckCase, CheckKindContract


def commit(repo: Path, message: str, files: dict[str, str | None]) -> str:
    for name, text in files.items():
        path = repo / name
        if text is None:
            git(repo, "rm", "-q", name)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        git(repo, "add", name)
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def base(repo: Path) -> str:
    commit(repo, "layout", {"src/app/main.py": "x = 1\n", "docs/guide.md": "guide\n", "setup.cfg": "[x]\n"})
    return git(repo, "rev-parse", "HEAD").strip()


def run(repo: Path, **params: Any) -> CheckOutcome:
    kind = registry.load("axpipe.checks", "git-scope")
    typed, problems = validation.load_plugin_params(kind, {"scope": ["src/app/**"], **params}, "check", None)
    assert problems == []
    return kind.run(CheckRequest(check_id="scope", command=None, params=typed, cwd=repo, timeout=60))


def violations(outcome: CheckOutcome) -> list[tuple[str | None, str | None, str]]:
    return [(item["commit"], item["path"], item["message"]) for item in outcome.details["violations"]]


class TestGitScopeContract(CheckKindContract):
    kind = "git-scope"

    def passing_case(self, workspace: Path) -> CheckCase:
        git(workspace, "init", "-q", "-b", "main")
        base = commit(workspace, "base", {"README": "x\n"})
        commit(workspace, "work", {"src/a.py": "a = 1\n"})
        return CheckCase(params={"baseline": base, "scope": ["src/**"]})

    def failing_case(self, workspace: Path) -> CheckCase:
        git(workspace, "init", "-q", "-b", "main")
        base = commit(workspace, "base", {"README": "x\n"})
        commit(workspace, "work", {"README": "changed\n"})
        return CheckCase(params={"baseline": base, "scope": ["src/**"]})


def test_every_commit_in_scope_passes(repo: Path, base: str) -> None:
    commit(repo, "one", {"src/app/main.py": "x = 2\n"})
    commit(repo, "two", {"src/app/util.py": "y = 1\n"})
    outcome = run(repo, baseline=base)
    assert outcome.status is CheckStatus.PASSED, outcome.summary
    assert outcome.summary == "2 commit(s), 2 changed path(s), all inside scope"


def test_an_out_of_scope_file_in_the_second_of_three_commits(repo: Path, base: str) -> None:
    commit(repo, "one", {"src/app/main.py": "x = 2\n"})
    second = commit(repo, "two", {"src/app/util.py": "y = 1\n", "setup.cfg": "[changed]\n"})
    commit(repo, "three", {"src/app/main.py": "x = 3\n"})
    outcome = run(repo, baseline=base)
    assert outcome.status is CheckStatus.FAILED
    assert violations(outcome) == [(second, "setup.cfg", "modified, outside scope")]
    assert outcome.summary == f"commit {second[:12]}: setup.cfg: modified, outside scope"
    assert outcome.output_tail == f"commit {second[:12]}: setup.cfg: modified, outside scope\n"


def test_a_rename_out_of_scope_names_the_side_outside(repo: Path, base: str) -> None:
    git(repo, "mv", "src/app/main.py", "main.py")
    git(repo, "commit", "-qm", "move out")
    moved = git(repo, "rev-parse", "HEAD").strip()
    outcome = run(repo, baseline=base)
    assert violations(outcome) == [(moved, "main.py", "renamed from src/app/main.py; its destination is outside "
                                                      "scope")]
    git(repo, "mv", "docs/guide.md", "src/app/guide.md")
    git(repo, "commit", "-qm", "move in")
    moved_in = git(repo, "rev-parse", "HEAD").strip()
    assert violations(run(repo, baseline=moved)) == [
        (moved_in, "docs/guide.md", "renamed to src/app/guide.md; its source is outside scope")]


def test_a_copy_names_both_sides(repo: Path, base: str) -> None:
    big = "".join(f"line {number}\n" for number in range(40))
    start = commit(repo, "big", {"src/app/big.py": big})
    copied = commit(repo, "copy", {"src/app/big.py": big + "more\n", "vendor/big.py": big})
    outcome = run(repo, baseline=start)
    assert (copied, "vendor/big.py", "copied from src/app/big.py; its destination is outside scope") in \
        violations(outcome)


def test_a_deletion_out_of_scope(repo: Path, base: str) -> None:
    deleted = commit(repo, "drop the guide", {"docs/guide.md": None})
    assert violations(run(repo, baseline=base)) == [(deleted, "docs/guide.md", "deleted, outside scope")]


def test_a_merge_is_rejected_unless_allowed_and_then_checked_against_each_parent(repo: Path, base: str) -> None:
    git(repo, "checkout", "-q", "-b", "side")
    commit(repo, "side work", {"src/app/side.py": "s = 1\n"})
    git(repo, "checkout", "-q", "main")
    commit(repo, "main work", {"docs/guide.md": "changed on main\n"})
    git(repo, "merge", "-q", "--no-edit", "side")
    merge = git(repo, "rev-parse", "HEAD").strip()
    rejected = run(repo, baseline=base)
    merges = [item for item in violations(rejected) if item[0] == merge]
    assert len(merges) == 1 and merges[0][2].startswith("a merge of 2 parents") and \
        merges[0][2].endswith("merges are rejected unless allow_merges is true")
    allowed = violations(run(repo, baseline=base, allow_merges=True))
    first_parent = git(repo, "rev-parse", f"{merge}^1").strip()
    second_parent = git(repo, "rev-parse", f"{merge}^2").strip()
    assert (merge, "docs/guide.md", f"modified, outside scope (against parent {second_parent[:12]})") in allowed
    assert all(parent != first_parent[:12] for _, path, parent in allowed if path == "src/app/side.py")


def test_an_empty_range_fails(repo: Path, base: str) -> None:
    outcome = run(repo, baseline=base)
    assert outcome.status is CheckStatus.FAILED
    assert violations(outcome) == [(None, None, f"no commit in {base[:12]}..{base[:12]}: the range is empty")]


def test_a_baseline_that_is_not_an_ancestor_fails(repo: Path, base: str) -> None:
    git(repo, "checkout", "-q", "-b", "elsewhere")
    other = commit(repo, "elsewhere", {"src/app/x.py": "x\n"})
    git(repo, "checkout", "-q", "main")
    commit(repo, "here", {"src/app/y.py": "y\n"})
    outcome = run(repo, baseline=other)
    assert outcome.status is CheckStatus.FAILED
    head = git(repo, "rev-parse", "HEAD").strip()
    assert outcome.summary == (f"range: the baseline {other[:12]} is not an ancestor of HEAD {head[:12]}: the range "
                               "does not measure this work")


def test_subject_pattern_per_commit_and_branch(repo: Path, base: str) -> None:
    good = commit(repo, "T-001: start", {"src/app/a.py": "a\n"})
    bad = commit(repo, "wip", {"src/app/b.py": "b\n"})
    outcome = run(repo, baseline=base, subject=r"^T-\d{3}: ", branch=r"task/T-\d{3}")
    assert violations(outcome) == [
        (bad, None, "subject 'wip' does not match '^T-\\\\d{3}: '"),
        (None, None, "branch 'main' does not match 'task/T-\\\\d{3}'"),
    ]
    assert good not in {commit_id for commit_id, _, _ in violations(outcome)}


def test_an_unknown_baseline_is_no_evidence(repo: Path, base: str) -> None:
    outcome = run(repo, baseline="0" * 40)
    assert outcome.status is CheckStatus.ERROR
    assert "does not name a commit here" in outcome.summary


# -- in a recipe: the scope defaults to the recipe's, and is frozen into the contract ---------------


def test_the_scope_defaults_to_the_recipes_and_is_frozen(repo: Path, tmp_path: Path) -> None:
    project = Project(repo, tmp_path)
    project.recipe(checks='    - {id: scope, kind: git-scope, acceptance: [AC1]}\n',
                   acceptance='    AC1: {tag: closes, text: "only calc changes", check: scope}\n',
                   extra="scope: [calc.py]\n", agent=False)
    result = project.run()
    assert result.exit_code == 6, result.stdout + result.stderr  # the range is empty: no commit yet
    contract = json.loads((repo / ".axpipe" / "goals" / "calc" / "contract.json").read_text())["contract"]
    params = contract["checks"][0]["params"]
    head = git(repo, "rev-parse", "HEAD").strip()
    assert params == {"baseline": head, "scope": ["calc.py"], "subject": None, "allow_merges": False, "branch": None}
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    git(repo, "commit", "-qam", "fix add")
    assert project.cli("verify", "scope").exit_code == 0


def test_a_git_scope_check_without_any_scope_is_a_config_error(repo: Path, tmp_path: Path) -> None:
    project = Project(repo, tmp_path)
    project.recipe(checks='    - {id: scope, kind: git-scope, acceptance: [AC1]}\n',
                   acceptance='    AC1: {tag: closes, text: "x", check: scope}\n', agent=False)
    result = project.run()
    assert result.exit_code == 2
    assert "goal.checks[0].scope: a git-scope check needs `scope` (here, or the recipe's `scope:`)" in result.stderr
    assert not (repo / ".axpipe" / "state.db").exists()


def test_bad_scope_patterns_are_config_errors(repo: Path, tmp_path: Path) -> None:
    project = Project(repo, tmp_path)
    project.recipe(extra="scope: [/etc/passwd, ../outside, '!src/gen/**']\n", agent=False)
    result = project.run()
    assert result.exit_code == 2
    assert "scope[0]: '/etc/passwd' is absolute" in result.stderr
    assert "scope[1]: '../outside' leaves the repository" in result.stderr
    assert "scope[2]: '!src/gen/**': exclusions are not supported" in result.stderr
