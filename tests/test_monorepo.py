"""A project in a subfolder of a git work tree (a monorepo): its ``axpipe.yaml`` is below the
top, so git prints some paths from the top and others from the project's folder. The
fingerprint, ``.axpipe/``'s exclusion, the agent's edited files and repair's reverts must
all still follow git, as they do at the top of a repository."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from axpipe_builtin import commit_scope
from conftest import CLI
from goalkit import CALC as CALC_GOAL
from goalkit import FIX, Project
from goalkit import TEST_CALC as TEST_CALC_GOAL
from helpers import git, write_recipe
from test_repair import CALC, CHEAT, TEST_CALC, agent_command, report_of
from test_repair import FIX as REPAIR_FIX

from axpipe import workspace
from axpipe.goal import fingerprint
from axpipe.goal.turn import changed_files, snapshot_files
from axpipe.unit.scope import Scope


@pytest.fixture
def service(repo: Path) -> Path:
    """``repo/services/api``: a project folder with its own ``axpipe.yaml``, committed."""
    folder = repo / "services" / "api"
    (folder / "src").mkdir(parents=True)
    (folder / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    (folder / "src" / "app.py").write_text("VALUE = 1\n")
    (repo / ".gitignore").write_text("build/\n__pycache__/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "service")
    return folder


def test_the_work_tree_above_is_found_and_confirmed_by_git(repo: Path, service: Path) -> None:
    assert workspace.find_root(service / "src") == service
    assert workspace.git_top(service) == repo
    assert workspace.git_prefix(service, repo) == "services/api/"
    assert workspace.git_top(repo) == repo and workspace.git_prefix(repo, repo) == ""
    ignored = repo / "build" / "tool"
    ignored.mkdir(parents=True)
    assert workspace.git_top(ignored) is None  # git lists none of its files: outside git


def test_the_state_folder_is_hidden_from_git_status_of_the_whole_tree(repo: Path, service: Path) -> None:
    workspace.ensure_state_dir(service)
    (service / ".axpipe" / "state.db").write_text("x")
    assert git(repo, "status", "--porcelain", "-uall") == ""
    workspace.ensure_state_dir(service)  # once only
    assert (repo / ".git" / "info" / "exclude").read_text().count("/services/api/.axpipe/") == 1


def test_a_folder_name_with_glob_characters_is_excluded_literally(repo: Path) -> None:
    odd = repo / "a[1] *?"
    odd.mkdir()
    (odd / "kept.txt").write_text("tracked soon\n")
    twin = repo / "a1 xy"  # what the unescaped pattern `/a[1] *?/.axpipe/` would also match
    twin.mkdir()
    (twin / ".axpipe").mkdir()
    (twin / ".axpipe" / "mine.txt").write_text("not axpipe's\n")
    workspace.ensure_state_dir(odd)
    (odd / ".axpipe" / "state.db").write_text("x")
    status = git(repo, "status", "--porcelain", "-uall")
    assert "state.db" not in status
    assert "a1 xy/.axpipe/mine.txt" in status


def test_an_edit_to_a_tracked_file_changes_the_fingerprint(service: Path) -> None:
    first = fingerprint.compute(service, ["."])
    assert first.fresh and first.entries == 2  # axpipe.yaml and src/app.py; nothing above
    assert first.digest == fingerprint.compute(service, ["."]).digest
    # git status names the file from the top (services/api/src/app.py); missed, the index
    # blob would stand for the file and the old digest would survive the edit
    (service / "src" / "app.py").write_text("VALUE = 2\n")
    assert fingerprint.compute(service, ["."]).digest != first.digest


def test_git_ignore_rules_hold_in_a_subfolder(service: Path) -> None:
    before = fingerprint.compute(service, ["."])
    (service / "build").mkdir()
    (service / "build" / "out.bin").write_bytes(b"\0" * 64)
    assert fingerprint.compute(service, ["."]).digest == before.digest
    (service / "src" / "new.py").write_text("x = 1\n")
    after = fingerprint.compute(service, ["."])
    assert after.digest != before.digest and after.entries == 3


def test_files_the_agent_edits_are_named_from_the_project_folder(repo: Path, service: Path) -> None:
    (repo / "elsewhere.txt").write_text("outside the project\n")
    before = snapshot_files(service)
    (service / "src" / "app.py").write_text("VALUE = 3\n")
    (service / "src" / "extra.py").write_text("y = 2\n")
    (repo / "elsewhere.txt").write_text("changed outside the project\n")
    assert changed_files(service, before, snapshot_files(service)) == ["src/app.py", "src/extra.py"]
    committed = snapshot_files(service)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "agent's commit")
    assert changed_files(service, committed, snapshot_files(service)) == ["src/app.py", "src/extra.py"]


def test_a_run_from_the_subfolder_completes_and_notices_a_later_edit(cli: CLI, repo: Path, service: Path) -> None:
    write_recipe(service / "recipes", "value", """
name: value
description: app.py still says 1.
goal:
  objective: "VALUE stays 1"
  acceptance:
    AC1: {tag: closes, text: "VALUE is 1", check: value}
  checks:
    - {id: value, acceptance: [AC1], command: "python3 check_value.py"}
""")
    (service / "check_value.py").write_text("import sys\n\nsys.path.insert(0, 'src')\nimport app\n\n"
                                            "assert app.VALUE == 1, app.VALUE\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "recipe")
    result = cli("run", "recipe=value", cwd=service / "src")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert (service / ".axpipe" / "state.db").is_file()
    assert git(repo, "status", "--porcelain", "-uall") == ""
    status = json.loads(cli("goal", "status", "--json", cwd=service).stdout)
    assert status["complete"] is True
    (service / "src" / "app.py").write_text("VALUE = 2\n")
    status = json.loads(cli("goal", "status", "--json", cwd=service).stdout)
    assert status["goal"]["status"] == "complete" and status["complete"] is False


def test_a_repair_in_the_subfolder_reverts_a_cheat_and_keeps_the_users_files(
        cli: CLI, repo: Path, tmp_path: Path) -> None:
    folder = repo / "libs" / "calc"
    folder.mkdir(parents=True)
    (folder / "axpipe.yaml").write_text("")
    (folder / "calc.py").write_text(CALC)
    (folder / "test_calc.py").write_text(TEST_CALC)
    (repo / ".gitignore").write_text("__pycache__/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "calc")
    (folder / "notes.txt").write_text("the user's, untracked\n")
    (repo / "top-notes.txt").write_text("the user's, at the top\n")
    result = cli("repair", "python3 -m unittest -q", "--json", "--allow-test-edits", "--agent-command",
                 agent_command(tmp_path, [CHEAT, REPAIR_FIX]), cwd=folder)
    assert result.exit_code == 0, result.stdout + result.stderr
    report = report_of(result)
    assert report["status"] == "resolved"
    assert report["iterations"][0]["guard"] == "skipped-test"
    assert report["discarded"] == ["iteration 1: test_calc.py (+1 -0) (skipped-test)"]  # from the project
    assert "@unittest.skip" not in (folder / "test_calc.py").read_text()
    assert "a + b" in (folder / "calc.py").read_text()
    assert (folder / "notes.txt").read_text() == "the user's, untracked\n"
    assert (repo / "top-notes.txt").read_text() == "the user's, at the top\n"
    assert sorted(git(repo, "status", "--porcelain", "-uall").splitlines()) == [
        " M libs/calc/calc.py", "?? libs/calc/notes.txt", "?? top-notes.txt"]


# -- the scope contract and its quarantine --------------------------------------------------


@pytest.fixture
def calc_service(repo: Path, tmp_path: Path) -> Project:
    """goalkit's calc project in ``repo/svc``, beside a tracked ``repo/other/lib.py``."""
    (repo / "other").mkdir()
    (repo / "other" / "lib.py").write_text("SHARED = 1\n")
    folder = repo / "svc"
    folder.mkdir()
    return Project(folder, tmp_path)


def test_scope_paths_are_relative_to_the_project_folder(calc_service: Project) -> None:
    calc_service.recipe(turns=[FIX], extra="scope: [calc.py]\n")
    result = calc_service.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "scope held: 1 changed path(s) inside calc.py" in result.stdout


def test_an_edit_outside_the_project_folder_is_outside_every_scope_and_undone(
        repo: Path, calc_service: Project) -> None:
    root = calc_service.root
    (root / "svc").mkdir()
    (root / "svc" / "new.py").write_text("the owner's, untracked\n")  # svc/svc/new.py: a name to confuse
    turn = {"replace": [["calc.py", "a - b", "a + b"], ["../other/lib.py", "SHARED = 1", "SHARED = 2"]],
            "write": {"new.py": "the agent's\n", "../other/new.py": "the agent's too\n"}}
    calc_service.recipe(turns=[turn], extra="scope: ['.']\n")
    result = calc_service.run()
    assert result.exit_code == 3, result.stdout + result.stderr
    status = calc_service.status()["goal"]
    assert status["reason"] == "scope: 2 path(s) outside scope (.): ../other/lib.py, ../other/new.py"
    # the whole unit is quarantined and undone, inside the folder and outside it
    assert (repo / "other" / "lib.py").read_text() == "SHARED = 1\n"
    assert not (repo / "other" / "new.py").exists() and not (root / "new.py").exists()
    assert "a - b" in (root / "calc.py").read_text()
    assert (root / "svc" / "new.py").read_text() == "the owner's, untracked\n"
    shown = git(repo, "stash", "show", "--include-untracked", "--name-only", "stash@{0}").split()
    assert sorted(shown) == ["other/lib.py", "other/new.py", "svc/calc.py", "svc/new.py"]


def test_commit_scope_judges_paths_from_the_project_folder(repo: Path, service: Path) -> None:
    baseline = git(repo, "rev-parse", "HEAD").strip()
    (service / "src" / "app.py").write_text("VALUE = 2\n")
    git(repo, "commit", "-qam", "inside the project")
    assert commit_scope.check(service, baseline=baseline, scope=Scope(["src"])).ok
    (repo / "src").mkdir()
    (repo / "src" / "evil.py").write_text("x = 1\n")  # the top's src/, not the project's
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "outside the project")
    report = commit_scope.check(service, baseline=baseline, scope=Scope(["src"]))
    assert [violation.describe().split(": ", 1)[1] for violation in report.violations] == [
        "../../src/evil.py: added, outside scope"]


# -- where git's answer is not the plain one ------------------------------------------------


class IgnoredProject(Project):
    """goalkit's calc project in a folder the repository ignores: nothing of it is committed."""

    def __init__(self, root: Path, scratch: Path) -> None:
        root.mkdir(parents=True)
        (root / "calc.py").write_text(CALC_GOAL)
        (root / "test_calc.py").write_text(TEST_CALC_GOAL)
        (root / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
        self.root, self.scratch = root, scratch
        self.log = scratch / "prompts.jsonl"
        self.env: dict[str, str] = {}


def test_a_project_in_a_folder_git_ignores_is_outside_git_and_its_contracts_fail_closed(
        repo: Path, tmp_path: Path) -> None:
    (repo / ".gitignore").write_text("build/\n")
    (repo / "src").mkdir()
    (repo / "src" / "x.py").write_text("X = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "src")
    project = IgnoredProject(repo / "build" / "proj", tmp_path)
    (project.root / "lib").mkdir()
    (project.root / "lib" / "evil.py").write_text("the owner's, ignored by git\n")
    turn = {"replace": [["calc.py", "a - b", "a + b"], ["../../src/x.py", "X = 1", "X = 666"]],
            "write": {"../../lib/evil.py": "the agent's\n"}}
    project.recipe(turns=[turn], extra="scope: [calc.py, src, lib]\n")
    result = project.run()
    # git lists none of the folder's files: no snapshot, so the scope contract cannot judge
    assert result.exit_code == 3, result.stdout + result.stderr
    assert "the scope contract needs a git repository" in result.stdout
    assert (project.root / "lib" / "evil.py").read_text() == "the owner's, ignored by git\n"
    assert not (project.root / ".git").exists() and "build" not in git(repo, "status", "--porcelain", "-uall")


def test_with_git_dir_set_git_decides_the_top_and_a_unit_keeps_the_tree(calc_service: Project, repo: Path) -> None:
    # git exports GIT_DIR to hooks; with it alone, git takes the current folder for the top
    calc_service.env["GIT_DIR"] = str(repo / ".git")
    (calc_service.root / "notes.txt").write_text("the owner's\n")
    calc_service.recipe(turns=[FIX], extra="scope: [calc.py]\n")
    result = calc_service.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "scope held: 1 changed path(s) inside calc.py" in result.stdout
    assert sorted(path.name for path in calc_service.root.iterdir()) == [
        ".axpipe", ".gitignore", "axpipe.yaml", "calc.py", "notes.txt", "recipes", "test_calc.py"]
    assert (repo / "other" / "lib.py").read_text() == "SHARED = 1\n"


def test_an_event_log_beside_the_project_folder_is_refused(calc_service: Project, repo: Path) -> None:
    calc_service.recipe(turns=[FIX], extra="scope: [calc.py]\n")
    result = calc_service.cli("run", "recipe=calc", "--event-log", str(repo / "events.jsonl"))
    assert result.exit_code == 2
    assert f"--event-log: {repo}/events.jsonl is in the git work tree {repo}" in result.stderr
    assert not (repo / "events.jsonl").exists() and not (calc_service.root / ".axpipe").exists()


def test_a_project_folder_whose_name_is_not_utf8_is_excluded_from_git(repo: Path) -> None:
    folder = repo / os.fsdecode(b"proj-\xff")
    folder.mkdir()
    workspace.ensure_state_dir(folder)
    (folder / ".axpipe" / "state.db").write_text("x")
    assert git(repo, "status", "--porcelain", "-uall") == ""


def test_a_subfolder_gitignore_edit_removes_none_of_its_ignored_files(repo: Path, calc_service: Project) -> None:
    root = calc_service.root
    (root / ".gitignore").write_text("__pycache__/\nlocal.env\ndata/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the service ignores its secrets and data")
    (root / "local.env").write_text("TOKEN=secret\n")
    (root / "data").mkdir()
    (root / "data" / "big.csv").write_text("1,2\n")
    (repo / "local.env").write_text("not ignored at the top: the owner's untracked file\n")
    turn = {"replace": [["calc.py", "a - b", "a + b"]], "write": {".gitignore": "__pycache__/\n", "stray.txt": "x\n"}}
    calc_service.recipe(turns=[turn], extra="scope: [calc.py]\n")
    result = calc_service.run()
    assert result.exit_code == 3, result.stdout + result.stderr
    assert calc_service.status()["goal"]["reason"] == "scope: 2 path(s) outside scope (calc.py): .gitignore, stray.txt"
    assert (root / "local.env").read_text() == "TOKEN=secret\n"
    assert (root / "data" / "big.csv").read_text() == "1,2\n"
    assert (repo / "local.env").read_text() == "not ignored at the top: the owner's untracked file\n"
    assert (root / ".gitignore").read_text() == "__pycache__/\nlocal.env\ndata/\n" and not (root / "stray.txt").exists()
