"""Plan validation (DESIGN §5): every rule refused and accepted, each message naming its
criterion or check, all problems reported at once, nothing run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import git, tree, write_recipe

from axpipe.goal import plan
from axpipe.recipe import schema
from axpipe.recipe.typed import build


def goal_of(checks: list[dict[str, Any]], **extra: Any) -> schema.Goal:
    acceptance = {"AC1": {"tag": "closes", "text": "it works"}}
    data = {"objective": "make it work", "acceptance": acceptance, "checks": checks, **extra}
    for check in data["checks"]:
        check.setdefault("acceptance", ["AC1"])
    goal, problems = build(schema.Goal, data, path="goal")
    assert problems == [], problems
    return goal


def problems(goal: schema.Goal, root: Path | None) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    plan.check_plan(goal, root, lambda path, message: found.append((path, message)))
    return found


def one(checks: list[dict[str, Any]], root: Path | None, **extra: Any) -> list[tuple[str, str]]:
    return problems(goal_of(checks, **extra), root)


# -- uncovered acceptance -------------------------------------------------------------------


def test_uncovered_closes_criterion_is_refused(repo: Path) -> None:
    goal = goal_of([{"id": "t", "command": "true"}], acceptance={
        "AC1": {"tag": "closes", "text": "covered"}, "AC2": {"tag": "closes", "text": "not covered"},
        "AC3": {"tag": "found", "text": "seen on the app"}})
    assert problems(goal, repo) == [("goal.acceptance.AC2", plan_message_uncovered("AC2"))]


def plan_message_uncovered(criterion: str) -> str:
    return (f"acceptance id not covered by any check: criterion {criterion} is `closes`, so a check must list it "
            "in `acceptance` (or name the check here with `check: <id>`)")


# -- commands that do not exist -------------------------------------------------------------


@pytest.mark.parametrize("command", ["pytset -q", "FOO=1 ! pytset", "./scripts/missing.sh --x", ["pytset", "-q"],
                                     "ulimit -t 5; pytset -q", "{ pytset -q; } 2>&1"])
def test_unknown_first_word_is_refused(repo: Path, command: Any) -> None:
    found = one([{"id": "tests", "command": command}], repo)
    assert len(found) == 1 and found[0][0] == "goal.checks[0].command"
    assert found[0][1].startswith("check 'tests': ")
    assert "pytset" in found[0][1] or "missing.sh" in found[0][1]


@pytest.mark.parametrize("command", ["python3 -m pytest", "FOO=1 python3 -c pass", "! false", "./check.sh",
                                     "cd sub && make test", "gradlew-like --x", "test 1 -eq 1 && python3 x.py",
                                     "ulimit -t 60; python3 -m pytest", "{ python3 -m pytest; } 2>&1",
                                     "umask 022 && make", "until python3 x.py; do sleep 1; done",
                                     "trap '' TERM; python3 x.py"])
def test_existing_programs_are_accepted(repo: Path, command: str) -> None:
    (repo / "check.sh").write_text("#!/bin/sh\n")
    (repo / "gradlew-like").write_text("#!/bin/sh\n")
    assert one([{"id": "tests", "command": command}], repo) == []


def test_unbalanced_quotes_are_reported(repo: Path) -> None:
    found = one([{"id": "tests", "command": "python3 -c 'oops"}], repo)
    assert found == [("goal.checks[0].command", "check 'tests': unbalanced quotes in \"python3 -c 'oops\"")]


# -- presence and inspection checks ---------------------------------------------------------


@pytest.mark.parametrize("command", ["test -f dist/app.whl", "[ -e build/out ]", "[[ -d out ]]", "ls dist",
                                     "cat report.txt", "stat out.bin", "grep -q PASS report.txt",
                                     "test -f a && test -s b", "ls out | cat", "{ test -f out.txt; }"])
def test_bare_presence_checks_are_refused(command: str) -> None:
    found = one([{"id": "built", "command": command}], None)
    assert len(found) == 1
    assert found[0][1].startswith(f"check 'built': a bare presence or inspection check ({command!r})")


@pytest.mark.parametrize("command", ["test -f out.json && python3 verify.py out.json",
                                     "python3 -m pytest | grep -q passed", "grep -q x a.txt && python3 -m pytest",
                                     "pytest -q"])
def test_checks_that_assert_behaviour_are_accepted(command: str) -> None:
    assert one([{"id": "ok", "command": command}], None) == []


# -- path-filtered git log ------------------------------------------------------------------


@pytest.mark.parametrize("command", [
    'test -n "$(git log {BASELINE}..HEAD -- src/invoices)"',
    "git log --oneline {BASELINE}..HEAD -- src/ | grep -q .",
    "{ git log {BASELINE}..HEAD -- src | grep -q .; }",
    '[ -n "$(git log HEAD~3..HEAD --format=%H -- docs)" ]',
])
def test_isolated_path_filtered_git_log_is_refused(command: str) -> None:
    found = one([{"id": "scope", "command": command}], None)
    assert [path for path, _ in found] == ["goal.checks[0].command"]
    assert "use a `git-scope` check" in found[0][1]


@pytest.mark.parametrize("command", ["git log {BASELINE}..HEAD --oneline", "python3 checks/scope.py {BASELINE}",
                                     "git log {BASELINE}..HEAD -- src | python3 checks/subjects.py"])
def test_other_git_log_uses_are_accepted(command: str) -> None:
    assert one([{"id": "scope", "command": command}], None) == []


# -- remote-tracking baselines --------------------------------------------------------------


@pytest.mark.parametrize("command", ["git diff --quiet origin/main -- src", "python3 x.py origin/main..HEAD",
                                     "git log @{u}..HEAD --oneline", "git diff refs/remotes/fork/dev"])
def test_remote_tracking_baselines_are_refused(repo: Path, command: str) -> None:
    found = one([{"id": "diff", "command": command}], repo)
    assert len(found) == 1 and "is a remote-tracking ref" in found[0][1]
    assert found[0][0] == "goal.checks[0]"


@pytest.mark.parametrize("command", [
    "git diff --quiet remotes/origin/main -- src", "git diff refs/remotes/origin", "git diff origin",
    "git log remotes/upstream/dev~2..HEAD", "git diff origin/main^{commit}", "git diff HEAD@{U}",
    "git diff remotes/origin/main@{1}"])
def test_every_spelling_of_a_remote_tracking_ref_is_refused(repo: Path, command: str) -> None:
    found = one([{"id": "diff", "command": command}], repo)
    assert len(found) == 1 and "is a remote-tracking ref" in found[0][1], found
    assert found[0][0] == "goal.checks[0]"


@pytest.mark.parametrize("baseline", ["origin/main", "remotes/origin/main", "refs/remotes/origin/main"])
def test_a_git_scope_baseline_is_refused_in_every_remote_tracking_spelling(repo: Path, baseline: str) -> None:
    found = one([{"id": "scope", "kind": "git-scope", "params": {"baseline": baseline, "scope": ["src"]}}], repo)
    assert [path for path, _ in found] == ["goal.checks[0]"], found
    assert f"baseline '{baseline}' is a remote-tracking ref" in found[0][1]
    assert "remote 'origin'" in found[0][1]


def test_spelled_out_local_refs_are_not_remote_tracking(repo: Path) -> None:
    assert one([{"id": "d", "command": "git diff refs/heads/origin-fix refs/tags/v1 main@{1} originals/x"}],
               repo) == []


@pytest.mark.parametrize(("source", "hint"), [("src/*.py", "src"), ("**", "."), ("lib/mod?.py", "lib"),
                                            ("src/[ab]/x", "src")])
def test_glob_source_paths_are_refused(source: str, hint: str) -> None:
    found = problems(goal_of([{"id": "t", "command": "true"}], source_paths=["checks", source]), None)
    assert found == [("goal.source_paths[1]", f"{source!r} is a pattern, and source paths are read literally: name "
                                              f"the folder or the files (`{hint}` covers every file below it)")]


def test_missing_source_paths_are_those_neither_on_disk_nor_in_git(repo: Path, tmp_path: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "gone.py").write_text("x = 1\n")
    (repo / "kept.py").write_text("y = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "files")
    (repo / "src" / "gone.py").unlink()  # deleted in the tree, still in git: covered
    sources = ["kept.py", "src/gone.py", "scr", "src/new", "src"]
    assert plan.missing_source_paths(repo, sources) == [(2, "scr"), (3, "src/new")]
    outside = tmp_path / "plain"
    outside.mkdir()
    (outside / "here").write_text("")
    assert plan.missing_source_paths(outside, ["here", "there"]) == [(1, "there")]


def test_a_remote_named_in_the_objective_is_accepted(repo: Path) -> None:
    checks = [{"id": "diff", "command": "git diff --quiet origin/main -- src"}]
    assert one(checks, repo, objective="bring the branch level with origin/main") == []


def test_configured_remotes_are_known(repo: Path) -> None:
    git(repo, "remote", "add", "mirror", "https://example.invalid/x.git")
    found = one([{"id": "diff", "command": "git diff mirror/main"}], repo)
    assert "remote 'mirror'" in found[0][1]


def test_local_refs_and_the_baseline_are_accepted(repo: Path) -> None:
    assert one([{"id": "d", "command": "git diff {BASELINE}..HEAD -- src/main"},
                {"id": "e", "command": "git diff main~2"}], repo) == []


# -- credentials ----------------------------------------------------------------------------


@pytest.mark.parametrize(("where", "value", "kind"), [
    ("command", "curl https://deploy:hunter22@ci.example.com/hook", "URL with user info"),
    ("command", "GITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB python3 x.py", "GitHub token"),
    ("command", "python3 x.py --password s3cr3tpass", "password on the command line"),
    ("purpose", "uses key AKIAIOSFODNN7EXAMPLE", "AWS access key"),
    ("environment", "staging, password=Sup3rSecret!", "password or secret"),
    ("command", "python3 x.py -----BEGIN RSA PRIVATE KEY-----", "private key"),
])
def test_credentials_in_the_plan_are_refused(where: str, value: str, kind: str) -> None:
    check = {"id": "deploy", "command": "python3 -c pass", where: value}
    found = one([check], None)
    assert any(path == f"goal.checks[0].{where}" and message.startswith("check 'deploy': contains a credential")
               and kind in message for path, message in found), found
    assert all(value not in message for _, message in found)  # the secret is never repeated


def test_a_credential_in_the_objective_is_refused() -> None:
    found = one([{"id": "t", "command": "true"}], None, objective="deploy with token=abcdef123456 please")
    assert found[0][0] == "goal.objective"


@pytest.mark.parametrize("command", ['curl -u "$DEPLOY_USER:$DEPLOY_PASSWORD" https://ci.example.com',
                                     "python3 x.py --password \"$PASSWORD\"", "export TOKEN=${CI_TOKEN}",
                                     "git clone ssh://git@example.com/repo.git", "python3 check_passwords.py"])
def test_references_to_credentials_are_accepted(command: str) -> None:
    assert one([{"id": "t", "command": command}], None) == []


# -- size -----------------------------------------------------------------------------------


def test_a_plan_over_8192_bytes_is_refused() -> None:
    checks = [{"id": f"c{index}", "command": "true", "purpose": "x" * 300} for index in range(30)]
    found = one(checks, None)
    assert found[0][0] == "goal" and "over the 8192-byte limit" in found[0][1]


def test_a_plan_over_7168_bytes_is_a_warning() -> None:
    count = 1
    while True:  # grow the plan until it sits between the warning and the limit
        goal = goal_of([{"id": f"c{index}", "command": "true", "purpose": "y" * 100} for index in range(count)])
        size = len(plan.render(goal, goal_id="x" * 24, baseline="0" * 40).encode())
        if size > plan.PLAN_WARNING:
            break
        count += 1
    assert plan.PLAN_WARNING < size <= plan.PLAN_LIMIT, size
    assert problems(goal, None) == []
    warning = plan.size_warning(plan.render(goal, goal_id="x" * 24, baseline="0" * 40))
    assert warning is not None and "aim below 7168" in warning


# -- through the CLI --------------------------------------------------------------------------


def test_every_plan_problem_is_reported_at_once_and_nothing_runs(repo: Path, cli: Any, snapshot: object) -> None:
    write_recipe(repo / "recipes", "badplan", """
name: badplan
goal:
  objective: "ship the release"
  acceptance:
    AC1: {tag: closes, text: "built"}
    AC2: {tag: closes, text: "scoped"}
    AC3: {tag: closes, text: "nobody covers this"}
  checks:
    - {id: built, acceptance: [AC1], command: "test -f dist/app.whl"}
    - {id: scoped, acceptance: [AC2], command: "git log {BASELINE}..HEAD -- src | grep -q ."}
    - {id: deployed, acceptance: [AC1], command: "deploy-tool --token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"}
    - {id: diffed, acceptance: [AC2], command: "git diff --quiet origin/main"}
""")
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    before = tree(repo)
    result = cli("run", "recipe=badplan")
    assert result.exit_code == 2
    assert result.stderr.replace(str(repo), "<repo>") == snapshot
    assert tree(repo) == before


@pytest.mark.parametrize("count", [1, 5, 20])
def test_the_size_bound_is_never_below_the_rendered_size(count: int) -> None:
    goal = goal_of([{"id": f"c{index}", "command": "python3 -m pytest -q tests/test_é.py", "purpose": "ü" * 40,
                     "environment": "local"} for index in range(count)],
                   sources=[{"role": "legacy", "reference": "export-v1/schema.sql"}])
    rendered = len(plan.render(goal, goal_id="x" * 24, baseline="0" * 40).encode())
    assert plan.size_bound(goal) >= rendered
