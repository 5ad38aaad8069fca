"""A project in a subfolder of a git work tree (a monorepo): its ``axpipe.yaml`` is below the
top, so git prints some paths from the top and others from the project's folder. The
fingerprint, ``.axpipe/``'s exclusion, the agent's edited files and repair's reverts must
all still follow git, as they do at the top of a repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CLI
from helpers import git, write_recipe
from test_repair import CALC, CHEAT, FIX, TEST_CALC, agent_command, report_of

from axpipe import fingerprint, workspace
from axpipe.work import changed_files, snapshot_files


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
    result = cli("repair", "python3 -m unittest -q", "--json", "--agent-command",
                 agent_command(tmp_path, [CHEAT, FIX]), cwd=folder)
    assert result.exit_code == 0, result.stdout + result.stderr
    report = report_of(result)
    assert report["status"] == "resolved"
    assert report["iterations"][0]["guard"] == "skipped-test"
    assert report["discarded"] == ["iteration 1: libs/calc/test_calc.py (+1 -0) (skipped-test)"]
    assert "@unittest.skip" not in (folder / "test_calc.py").read_text()
    assert "a + b" in (folder / "calc.py").read_text()
    assert (folder / "notes.txt").read_text() == "the user's, untracked\n"
    assert (repo / "top-notes.txt").read_text() == "the user's, at the top\n"
    assert sorted(git(repo, "status", "--porcelain", "-uall").splitlines()) == [
        " M libs/calc/calc.py", "?? libs/calc/notes.txt", "?? top-notes.txt"]
