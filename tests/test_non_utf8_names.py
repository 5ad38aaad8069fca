"""File and branch names that are not UTF-8 (``caf\\xe9.py``, latin-1) inside a repository.

git prints such a name as its bytes; axpipe reads them with ``os.fsdecode`` (never a strict
decode), so the name still opens its file, and shows it as axpipe.names says: ``\\xe9`` in
reports, the bytes themselves on the terminal, stdout and stderr alike. Real repositories,
the real CLI, the scripted agent of ``tests/agents``. (The checkout's own folder is the
subject of ``test_non_utf8_paths.py``.)"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from goalkit import AGENT, FIX, Project
from helpers import AXPIPE, git, write_recipe

NAME = os.fsdecode(b"caf\xe9.py")
NEW = os.fsdecode(b"new\xff.txt")
TEST = os.fsdecode(b"test_caf\xe9.py")
SKIP_THE_TEST = ["test_calc.py", "    def test_add(self):", "    @unittest.skip('flaky')\n    def test_add(self):"]


def axpipe(*args: str, cwd: Path) -> tuple[int, str, str]:
    """The CLI as a subprocess; its output decoded as file names are (the bytes kept)."""
    completed = subprocess.run([*AXPIPE, *args], cwd=cwd, capture_output=True, timeout=120)
    return completed.returncode, os.fsdecode(completed.stdout), os.fsdecode(completed.stderr)


def calc_with_a_latin1_file(tmp_path: Path) -> Project:
    """goalkit's calc project (add() subtracts) with a committed ``caf\\xe9.py``."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / NAME).write_text("X = 1\n")
    return Project(root, tmp_path)


def repair(project: Project, turns: list[dict[str, Any]]) -> tuple[int, dict[str, Any], str]:
    plan = project.scratch / "plan.json"
    plan.write_text(json.dumps({"turns": turns, "default": {}}))  # a name's surrogate escapes survive JSON
    agent = f"env SCRIPTED_AGENT_PLAN={shlex.quote(str(plan))} {shlex.quote(sys.executable)} {shlex.quote(str(AGENT))}"
    code, out, err = axpipe("repair", "python3 -m unittest -q", "--json", "--allow-test-edits",  # the guards judge
                            "--agent-command", agent, cwd=project.root)
    return code, json.loads(out) if out.startswith("{") else {}, out + err


# -- 1: repair ------------------------------------------------------------------------------


def test_a_repair_names_the_files_an_agent_edits_and_creates_as_escaped_bytes(tmp_path: Path) -> None:
    project = calc_with_a_latin1_file(tmp_path)
    code, report, output = repair(project, [{**FIX, "replace": [*FIX["replace"], [NAME, "X = 1", "X = 2"]],
                                             "write": {NEW: "new\n", "naïve.txt": "utf-8\n"}}])
    assert code == 0, output
    # git's own quoting ("caf\351.py", "na\303\257ve.txt") named no file; the report shows
    # a UTF-8 name as it is and the byte of one that is not as \xe9
    diff = "caf\\xe9.py (+1 -1), calc.py (+1 -1), naïve.txt (+1 -0), new\\xff.txt (+1 -0)"
    assert (report["status"], report["final_diff"]) == ("resolved", diff)
    markdown = next((project.root / ".axpipe").rglob("report.md")).read_bytes().decode("utf-8")
    assert f"- Final diff: {diff}\n" in markdown


def test_a_refused_edit_is_reverted_in_a_tree_holding_such_names(tmp_path: Path) -> None:
    project = calc_with_a_latin1_file(tmp_path)
    code, report, output = repair(project, [{"replace": [SKIP_THE_TEST], "write": {NEW: "planted\n"}}, FIX])
    assert code == 0, output
    assert report["status"] == "resolved" and report["final_diff"] == "calc.py (+1 -1)"
    assert report["discarded"] == ["iteration 1: new\\xff.txt (+1 -0), test_calc.py (+1 -0) (skipped-test)"]
    # the revert removed the agent's new file and kept the committed one
    assert not (project.root / NEW).exists() and (project.root / NAME).read_text() == "X = 1\n"
    assert git(project.root, "status", "--porcelain") == " M calc.py\n"


# -- 2: the guards' lookup of the tests that mention a changed function -----------------------


def test_the_guard_reads_a_test_file_whose_name_is_not_utf8(repo: Path) -> None:
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / TEST).write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "calc and its test")
    (repo / "calc.py").write_text("def add(a, b):\n    return 5\n")
    code, out, err = axpipe("guard", cwd=repo)
    assert (code, err) == (1, "")
    assert out.startswith(f"calc.py:2: hardcoded-expected: add now returns the constant 5 that "
                          f"{TEST}::test_add expects instead of computing it")


# -- 3: the git-scope check's branch ----------------------------------------------------------


def test_a_git_scope_check_matches_a_branch_whose_name_is_not_utf8(repo: Path, tmp_path: Path) -> None:
    project = Project(repo, tmp_path)
    project.recipe(checks='    - {id: latin, kind: git-scope, acceptance: [AC1], branch: "caf."}\n'
                          '    - {id: task, kind: git-scope, acceptance: [AC1], branch: "task/.*"}\n',
                   acceptance='    AC1: {tag: closes, text: "only calc changes", check: latin}\n',
                   extra="scope: [calc.py]\n", agent=False)
    code, out, err = axpipe("run", "recipe=calc", cwd=repo)
    assert code == 6, out + err  # the range is empty: no commit yet (the baseline is this HEAD)
    subprocess.run(["git", "checkout", "-q", "-b", b"caf\xe9"], cwd=repo, check=True, capture_output=True)
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    git(repo, "commit", "-qam", "fix add")
    code, out, err = axpipe("verify", "latin", cwd=repo)
    assert (code, err) == (0, ""), out + err
    assert out.startswith("latin: passed (1 commit(s), 1 changed path(s), all inside scope)")
    code, out, err = axpipe("verify", "task", cwd=repo)
    assert (code, err) == (1, ""), out + err
    assert out.startswith("task: failed (range: branch 'caf\\xe9' does not match 'task/.*');")


# -- 4: stderr --------------------------------------------------------------------------------


@pytest.mark.parametrize(("encoding", "key"), [(None, "é".encode()), ("ascii", b"\\xe9")], ids=["utf-8", "ascii"])
def test_an_error_on_stderr_names_a_path_with_its_own_bytes(tmp_path: Path, encoding: str | None, key: bytes) -> None:
    root = tmp_path / os.fsdecode(b"caf\xe9")
    root.mkdir()
    (root / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    recipe = write_recipe(root / "recipes", "broken", "name: broken\né: 1\né: 2\n")
    env = {**os.environ, **({"PYTHONIOENCODING": encoding} if encoding else {})}
    completed = subprocess.run([*AXPIPE, "run", "recipe=broken"], cwd=root, capture_output=True, env=env, timeout=120)
    assert completed.returncode == 2, completed.stderr
    # as on stdout and as git prints it: the folder's byte, not Python's \udce9 (which names
    # no file); other text the stream cannot encode is still escaped, never an error
    assert b"found duplicate key " + key + b" at line 4" in completed.stderr
    assert b"(from " + os.fsencode(recipe) + b")\n" in completed.stderr
    assert b"\\udce9" not in completed.stderr
