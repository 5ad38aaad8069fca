"""A checkout under a folder whose name is not UTF-8 (``caf\\xe9``, latin-1).

On Linux a folder name is bytes, and Python hands one that is not UTF-8 to axpipe as text
with surrogate escapes. git's answers that name the checkout must be decoded the same way
(``os.fsdecode``), and every place that writes such a path keeps it: the store as bytes,
the event log as JSON escapes, reports for people as ``\\xe9``, the terminal as the bytes
themselves. Real repositories under such a folder, the real CLI."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from goalkit import AGENT, FIX, Project
from helpers import AXPIPE, git, write_recipe

from axpipe.store import Store
from axpipe.unit import units

FOLDER = os.fsdecode(b"caf\xe9")
SMALL = """name: small
goal:
  objective: "true holds"
  acceptance:
    AC1: {tag: closes, text: "true passes", check: ok}
  checks:
    - {id: ok, acceptance: [AC1], command: ["true"], purpose: "true passes"}
"""


# the console script, as a user runs it; ``python -m axpipe`` (the rest) puts the folder on sys.path
SCRIPT = [str(Path(sys.executable).parent / "axpipe")]


def axpipe(*args: str, cwd: Path, program: list[str] = AXPIPE) -> tuple[int, str, str]:
    """The CLI as a subprocess; its output decoded as file names are (the bytes kept)."""
    completed = subprocess.run([*program, *args], cwd=cwd, capture_output=True, timeout=120)
    return completed.returncode, os.fsdecode(completed.stdout), os.fsdecode(completed.stderr)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A repository with one commit at ``<tmp>/caf\\xe9/project``, recipes in ``recipes/``."""
    path = tmp_path / FOLDER / "project"
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    write_recipe(path / "recipes", "small", SMALL)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def test_a_goal_recipe_completes_and_its_records_keep_the_folder(root: Path) -> None:
    code, out, err = axpipe("run", "recipe=small", cwd=root, program=SCRIPT)
    assert code == 0, out + err
    assert f"workspace:  {root}\n" in out  # printed as the folder's own bytes, as ls does
    code, out, err = axpipe("goal", "status", "--json", cwd=root)
    assert code == 0, err
    status = json.loads(out)
    assert (status["goal"]["status"], status["complete"]) == ("complete", True)
    # the event log is UTF-8 and gives the folder back exactly
    log = next((root / ".axpipe" / "runs").rglob("events.jsonl")).read_bytes()
    started = json.loads(log.decode("utf-8").splitlines()[0])
    assert (started["type"], started["workspace"]) == ("run.started", str(root))
    with Store(root / ".axpipe" / "state.db") as store:
        (run,) = store.recent_runs()
        assert run["workspace"] == str(root) and run["run_dir"].startswith(str(root / ".axpipe"))


def test_an_agent_goal_and_a_verify_leave_receipts(tmp_path: Path) -> None:
    folder = tmp_path / FOLDER
    (folder / "repo").mkdir(parents=True)
    git(folder / "repo", "init", "-q", "-b", "main")
    project = Project(folder / "repo", folder)
    project.recipe(turns=[FIX])
    code, out, err = axpipe("run", "recipe=calc", cwd=project.root)
    assert code == 0, out + err
    assert "a + b" in (project.root / "calc.py").read_text()
    code, out, err = axpipe("verify", "unit", "--json", cwd=project.root)
    assert code == 0, out + err
    assert json.loads(out)["status"] == "passed"
    receipts = project.receipts()  # the store keeps the workspace as bytes; every receipt names it
    assert len(receipts) == 2 and {receipt["workspace"] for receipt in receipts} == {os.fsencode(project.root)}
    code, out, err = axpipe("goal", "status", "--json", cwd=project.root)
    assert json.loads(out)["complete"] is True, out + err


def test_a_gate_reports_the_folder_as_escaped_bytes(root: Path) -> None:
    (root / "notes.txt").write_text("an edit to judge\n")
    code, out, err = axpipe("gate", "--baseline", "HEAD", "--command", "true", cwd=root)
    assert code == 0, out + err
    (markdown,) = (root / ".axpipe" / "gate").rglob("report.md")
    text = markdown.read_bytes().decode("utf-8")  # text for people: valid UTF-8, the byte as \xe9
    assert f"Output: {str(root).replace(FOLDER, 'caf' + chr(92) + 'xe9')}/.axpipe/gate/" in text
    report = json.loads((markdown.parent / "report.json").read_bytes().decode("utf-8"))
    assert report["status"] == "passed" and report["folder"] == str(markdown.parent)


def test_the_guard_judges_a_change_there(root: Path) -> None:
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    code, out, err = axpipe("guard", cwd=root)
    assert code == 0, out + err
    assert out.startswith("guard: nothing fired; judged 1 changed file")


def test_a_repair_with_a_scripted_agent_resolves(tmp_path: Path) -> None:
    folder = tmp_path / FOLDER
    (folder / "repo").mkdir(parents=True)
    git(folder / "repo", "init", "-q", "-b", "main")
    project = Project(folder / "repo", folder)
    plan = folder / "plan.json"
    plan.write_text(json.dumps({"turns": [{"replace": FIX["replace"]}], "default": {}}))
    agent = f"env SCRIPTED_AGENT_PLAN={shlex.quote(str(plan))} {shlex.quote(sys.executable)} {shlex.quote(str(AGENT))}"
    code, out, err = axpipe("repair", "python3 -m unittest -q", "--json", "--agent-command", agent, cwd=project.root)
    assert code == 0, out + err
    report = json.loads(out)
    assert (report["status"], report["final_diff"]) == ("resolved", "calc.py (+1 -1)")


def test_the_starting_point_of_a_linked_worktree(root: Path, tmp_path: Path) -> None:
    linked = tmp_path / FOLDER / "linked"
    # git's own output names the folder: run it as bytes (helpers.git decodes strictly)
    subprocess.run(["git", "worktree", "add", "-q", "-b", "side", os.fsencode(linked)], cwd=root, check=True,
                   capture_output=True)
    (linked / "recipes" / "small.yaml").write_text("# changed\n")
    start = units.starting_point(linked)
    assert start.head == git(linked, "rev-parse", "HEAD").strip()
    assert start.ref == "refs/heads/side"
    assert start.tree is not None  # the snapshot holds the edit: its tree differs from HEAD's
    assert start.tree != git(linked, "rev-parse", "HEAD^{tree}").strip()
    index = Path(os.fsdecode(subprocess.run(["git", "rev-parse", "--git-path", "index"], cwd=linked,
                                            capture_output=True, check=True).stdout.strip()))
    assert start.index == index.read_bytes()


def test_the_store_keeps_such_a_path_and_finds_it_again(tmp_path: Path) -> None:
    workspace = str(tmp_path / FOLDER)
    with Store(tmp_path / "state.db") as store:
        store.start_run(run_id="r1", recipe="small", workspace=workspace, run_dir=workspace + "/run", pid=1)
        run = store.get_run("r1")
        assert run is not None and (run["workspace"], run["run_dir"]) == (workspace, workspace + "/run")
        found = store.connection.execute("SELECT id FROM runs WHERE workspace = ?", (workspace,)).fetchall()
        assert [row["id"] for row in found] == ["r1"]


def test_git_answers_that_name_the_checkout_keep_its_bytes(root: Path) -> None:
    from axpipe.change import from_git as changes
    from axpipe.review import revisions

    assert changes.repository_root(root / "recipes") == root
    assert revisions.repository_root(root / "recipes") == root.resolve()
