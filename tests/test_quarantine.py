"""What a quarantine may touch: only the unit's own change.

The unit's agent can edit ``.gitignore`` or ``.git/info/exclude``, flag files in git's index
(``--assume-unchanged``, ``--skip-worktree``), and the repository can convert bytes on the
way in and out (``* text=auto``). None of it may hide a change from the scope contract, and
none of it may make the restore delete, stash or rewrite a file the user had before the
unit: ignored files, untracked notes, dirty files stay byte for byte as they were."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from goalkit import FIX, Project
from helpers import git


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Project:
    return Project(repo, tmp_path)


def stashed_paths(root: Path) -> list[str]:
    """The paths of the unit's stash entry: its end tree against the tree before the unit."""
    return sorted(git(root, "diff", "--name-only", "stash@{0}^1", "stash@{0}").split())


def test_a_gitignore_edit_neither_removes_nor_stashes_the_users_ignored_files(project: Project) -> None:
    root = project.root
    (root / ".gitignore").write_text("__pycache__/\n.venv/\nlocal.env\n")
    git(root, "commit", "-q", "-am", "ignore the venv and the secrets")
    (root / ".venv" / "lib").mkdir(parents=True)
    (root / ".venv" / "lib" / "site.py").write_text("# installed\n")
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr\n")
    (root / "local.env").write_text("TOKEN=secret\n")
    turn = {"replace": [["calc.py", "a - b", "a + b"]],
            "write": {".gitignore": "__pycache__/\n", "setup.cfg": "[metadata]\nname = calc\n"}}
    project.recipe(turns=[turn], extra="scope: [calc.py]\n")
    result = project.run()
    assert result.exit_code == 3, result.stdout + result.stderr
    # the .gitignore edit itself is blamed, the files it exposed are not
    assert project.status()["goal"]["reason"] == "scope: 2 path(s) outside scope (calc.py): .gitignore, setup.cfg"
    assert (root / ".venv" / "lib" / "site.py").read_text() == "# installed\n"
    assert (root / ".venv" / "pyvenv.cfg").read_text() == "home = /usr\n"
    assert (root / "local.env").read_text() == "TOKEN=secret\n"
    assert (root / ".gitignore").read_text() == "__pycache__/\n.venv/\nlocal.env\n"
    assert not (root / "setup.cfg").exists() and "a - b" in (root / "calc.py").read_text()
    assert stashed_paths(root) == [".gitignore", "calc.py", "setup.cfg"]
    # the secret went into no git object the stash keeps
    assert "local.env" not in git(root, "ls-tree", "-r", "--name-only", "stash@{0}")
    assert git(root, "status", "--porcelain").splitlines() == ["?? recipes/calc.yaml"]  # the test's recipe


def test_a_gitignore_edit_inside_the_scope_is_the_only_change_counted(project: Project) -> None:
    root = project.root
    (root / ".gitignore").write_text("__pycache__/\nlocal.env\n")
    git(root, "commit", "-q", "-am", "ignore the secrets")
    (root / "local.env").write_text("TOKEN=secret\n")
    fix = {**FIX, "write": {".gitignore": "__pycache__/\n"}}
    project.recipe(turns=[fix], extra="scope: [calc.py, .gitignore]\n")
    result = project.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "scope held: 2 changed path(s) inside calc.py, .gitignore" in result.stdout


def test_a_file_force_added_from_under_the_start_rules_stays_on_disk(project: Project) -> None:
    root = project.root
    (root / ".gitignore").write_text("__pycache__/\nlocal.env\n")
    git(root, "commit", "-q", "-am", "ignore the secrets")
    (root / "local.env").write_text("TOKEN=secret\n")
    turn = {"write": {"stray.txt": "out of scope\n", "local.env": "TOKEN=changed\n"}, "run": ["git add -f local.env"]}
    project.recipe(turns=[turn], extra="scope: [calc.py]\n")
    result = project.run()
    assert result.exit_code == 3, result.stdout + result.stderr
    assert project.status()["goal"]["reason"] == "scope: 1 path(s) outside scope (calc.py): stray.txt"
    assert (root / "local.env").read_text() == "TOKEN=changed\n"  # ignored: neither quarantined nor removed
    assert git(root, "diff", "--cached", "--name-only").strip() == ""  # the staging is undone with the index
    assert stashed_paths(root) == ["stray.txt"]


@pytest.mark.parametrize("hide", [
    "printf 'stray.txt\\nhidden/\\n' >> .git/info/exclude",
    "printf 'stray.txt\\nhidden/\\n' >> .gitignore && git commit -qm 'ignore more' .gitignore",
])
def test_ignore_rules_added_by_the_agent_hide_no_new_file(project: Project, hide: str) -> None:
    root = project.root
    turn = {"replace": [["calc.py", "a - b", "a + b"]],
            "write": {"stray.txt": "out of scope\n", "hidden/evil.py": "out of scope too\n"}, "run": [hide]}
    project.recipe(turns=[turn], extra="scope: [calc.py]\n")
    result = project.run()
    assert result.exit_code == 3, result.stdout + result.stderr
    outside = project.status()["goal"]["blocked"]
    assert outside["kind"] == "scope"
    reason = project.status()["goal"]["reason"]
    assert "hidden/evil.py" in reason and "stray.txt" in reason
    assert not (root / "stray.txt").exists() and not (root / "hidden").exists()
    assert "hidden/evil.py" in stashed_paths(root) and "stray.txt" in stashed_paths(root)


def test_files_the_unit_did_not_touch_keep_their_bytes_and_times(project: Project) -> None:
    root = project.root
    (root / ".gitattributes").write_text("* text=auto\n")
    (root / "setup.cfg").write_text("[metadata]\nname = calc\n")
    git(root, "add", ".gitattributes", "setup.cfg")
    git(root, "commit", "-q", "-m", "normalise line endings")
    (root / "notes.txt").write_bytes(b"the owner's notes\r\nwritten on Windows\r\n")
    (root / "README.md").write_bytes(b"a project\r\nedited by its owner\r\n")
    old = 1_600_000_000
    for name in ("notes.txt", "README.md", "calc.py", "test_calc.py"):
        os.utime(root / name, (old, old))
    turn = {"replace": [["setup.cfg", "calc", "calculator"]]}
    project.recipe(turns=[turn], extra="scope: [calc.py]\n")
    result = project.run()
    assert result.exit_code == 3, result.stdout + result.stderr
    assert (root / "setup.cfg").read_text() == "[metadata]\nname = calc\n"
    assert (root / "notes.txt").read_bytes() == b"the owner's notes\r\nwritten on Windows\r\n"
    assert (root / "README.md").read_bytes() == b"a project\r\nedited by its owner\r\n"
    assert {name: (root / name).stat().st_mtime for name in ("notes.txt", "README.md", "calc.py", "test_calc.py")} \
        == dict.fromkeys(("notes.txt", "README.md", "calc.py", "test_calc.py"), old)


def test_files_the_unit_changed_come_back_with_their_own_bytes(project: Project) -> None:
    root = project.root
    (root / ".gitattributes").write_text("* text=auto\n")
    git(root, "add", ".gitattributes")
    git(root, "commit", "-q", "-m", "normalise line endings")
    (root / "notes.txt").write_bytes(b"the owner's notes\r\nwritten on Windows\r\n")
    (root / "notes.txt").chmod(0o600)
    (root / "README.md").write_bytes(b"a project\r\nedited by its owner\r\n")
    (root / "tool.sh").write_text("#!/bin/sh\necho mine\n")
    (root / "tool.sh").chmod(0o755)
    turn = {"replace": [["notes.txt", "notes", "NOTES"], ["README.md", "project", "PROJECT"],
                        ["calc.py", "a - b", "a + b"]],
            "delete": ["tool.sh"]}
    project.recipe(turns=[turn], extra="scope: [calc.py]\n")
    result = project.run()
    assert result.exit_code == 3, result.stdout + result.stderr
    assert (root / "notes.txt").read_bytes() == b"the owner's notes\r\nwritten on Windows\r\n"
    assert stat.S_IMODE((root / "notes.txt").stat().st_mode) == 0o600  # rewritten in place: still private
    assert (root / "README.md").read_bytes() == b"a project\r\nedited by its owner\r\n"
    assert (root / "tool.sh").read_text() == "#!/bin/sh\necho mine\n"
    assert os.access(root / "tool.sh", os.X_OK)
    assert "a - b" in (root / "calc.py").read_text()
    assert sorted(git(root, "status", "--porcelain").splitlines()) == [
        " M README.md", "?? notes.txt", "?? recipes/calc.yaml", "?? tool.sh"]
    record = (root / ".axpipe" / "artifacts" / "calc" / "unit-1" / "hard-stop.json").read_text()
    assert '"notes": []' in record  # the restored tree matches the snapshot before the unit


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_index_flags_hide_no_edit_from_the_scope(project: Project, flag: str) -> None:
    root = project.root
    (root / "setup.cfg").write_text("[metadata]\nname = calc\n")
    git(root, "add", "setup.cfg")
    git(root, "commit", "-q", "-m", "metadata")
    turn = {**FIX, "run": [f"git update-index {flag} setup.cfg", "printf 'version = 2\\n' >> setup.cfg"]}
    project.recipe(turns=[turn], extra="scope: [calc.py]\n")
    result = project.run()
    assert result.exit_code == 3, result.stdout + result.stderr
    assert project.status()["goal"]["reason"] == "scope: 1 path(s) outside scope (calc.py): setup.cfg"
    assert (root / "setup.cfg").read_text() == "[metadata]\nname = calc\n"
    assert git(root, "ls-files", "-v", "setup.cfg").startswith("H ")  # the user's index is as it was
    assert stashed_paths(root) == ["calc.py", "setup.cfg"]


def test_a_users_own_flagged_file_is_not_the_units_change(project: Project) -> None:
    root = project.root
    (root / "settings.ini").write_text("debug = false\n")
    git(root, "add", "settings.ini")
    git(root, "commit", "-q", "-m", "settings")
    git(root, "update-index", "--skip-worktree", "settings.ini")
    (root / "settings.ini").write_text("debug = true  # the owner's local setting\n")
    project.recipe(turns=[FIX], extra="scope: [calc.py]\n")
    result = project.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "scope held: 1 changed path(s) inside calc.py" in result.stdout
    assert git(root, "ls-files", "-v", "settings.ini").startswith("S ")


@pytest.fixture
def sparse(project: Project) -> Project:
    """The project with ``extra/data.txt`` committed, then left out by a sparse checkout."""
    (project.root / "extra").mkdir()
    (project.root / "extra" / "data.txt").write_text("left out by the sparse checkout\n")
    git(project.root, "add", "extra")
    git(project.root, "commit", "-q", "-m", "extra")
    git(project.root, "sparse-checkout", "set", "recipes")
    assert not (project.root / "extra").exists()
    return project


def test_a_path_a_sparse_checkout_leaves_out_is_no_deletion(sparse: Project) -> None:
    sparse.recipe(turns=[FIX], extra="scope: [calc.py]\n")
    result = sparse.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "scope held: 1 changed path(s) inside calc.py" in result.stdout


def test_a_write_where_a_sparse_checkout_left_a_file_out_is_seen_and_undone(sparse: Project) -> None:
    root = sparse.root
    sparse.recipe(turns=[{**FIX, "write": {"extra/data.txt": "written by the agent\n"}}], extra="scope: [calc.py]\n")
    result = sparse.run()
    assert result.exit_code == 3, result.stdout + result.stderr
    assert sparse.status()["goal"]["reason"] == "scope: 1 path(s) outside scope (calc.py): extra/data.txt"
    assert not (root / "extra").exists()  # absent before the unit, absent after
    assert git(root, "ls-files", "-v", "extra/data.txt").startswith("S ")


def test_file_names_that_are_not_utf8_are_removed_and_restored(project: Project) -> None:
    """git prints such a name as its bytes; decoded lossily it names no file, so the restore
    could neither remove the unit's new file nor write back the owner's one."""
    import subprocess

    from helpers import AXPIPE

    root = project.root
    notes = root / os.fsdecode(b"notes-\xff.txt")
    notes.write_bytes(b"the owner's notes\r\n")
    turn = {**FIX, "run": ["printf 'stray\\n' > \"$(printf 'new-\\377.txt')\"",
                           "printf 'changed\\n' > \"$(printf 'notes-\\377.txt')\""]}
    project.recipe(turns=[turn], extra="scope: [calc.py]\n")
    # bytes, not text: the agent's summary names the files as they are on disk
    result = subprocess.run([*AXPIPE, "run", "recipe=calc"], cwd=root, capture_output=True,
                            env={**os.environ, **project.env}, timeout=120)
    assert result.returncode == 3, result.stdout + result.stderr
    assert project.status()["goal"]["reason"] == \
        "scope: 2 path(s) outside scope (calc.py): new-\\xff.txt, notes-\\xff.txt"
    assert not (root / os.fsdecode(b"new-\xff.txt")).exists()
    assert notes.read_bytes() == b"the owner's notes\r\n"
    record = json.loads((root / ".axpipe" / "artifacts" / "calc" / "unit-1" / "hard-stop.json").read_text())
    assert record["notes"] == []  # the restored tree is the tree before the unit
    assert record["outside"] == [os.fsdecode(b"new-\xff.txt"), os.fsdecode(b"notes-\xff.txt")]
    stashed = subprocess.run(["git", "diff", "--name-only", "-z", "stash@{0}^1", "stash@{0}"], cwd=root,
                             capture_output=True, check=True).stdout
    assert sorted(stashed.split(b"\0")[:-1]) == [b"calc.py", b"new-\xff.txt", b"notes-\xff.txt"]


@pytest.mark.parametrize("where", ["info/exclude", "core.excludesFile"])
def test_a_rule_the_agent_adds_outside_the_work_tree_is_put_back_and_stops_the_unit(
        project: Project, tmp_path: Path, where: str) -> None:
    """No snapshot sees these files, and a line left there would hide files from the goal's
    next unit and from fingerprints: the unit's scope contract fails, the file goes back."""
    root = project.root
    if where == "info/exclude":
        target = root / ".git" / "info" / "exclude"
        with target.open("a") as handle:
            handle.write("/.axpipe/\n")  # what the run adds before the unit starts
    else:
        target = tmp_path / "global-ignore"
        target.write_text("*.swp\n")
        git(root, "config", "core.excludesFile", str(target))
    before = target.read_bytes()
    turn = {**FIX, "run": [f"printf 'stray.txt\\n' >> {target}"]}
    project.recipe(turns=[turn], extra="scope: [calc.py]\n")
    result = project.run()
    assert result.exit_code == 3, result.stdout + result.stderr
    shown = ".git/info/exclude" if where == "info/exclude" else str(target)
    assert project.status()["goal"]["reason"] == (
        f"scope: git's ignore rules outside the work tree changed: {shown} (put back as they were; the unit's "
        "version is kept beside hard-stop.json)")
    assert target.read_bytes() == before
    kept = root / ".axpipe" / "artifacts" / "calc" / "unit-1" / "ignore-files"
    assert [path.read_bytes() for path in kept.iterdir()] == [before + b"stray.txt\n"]
    assert "a - b" in (root / "calc.py").read_text()  # the unit's change is quarantined as any other


def test_without_a_scope_the_rule_is_put_back_before_the_checks_and_the_next_unit(project: Project) -> None:
    root = project.root
    exclude = root / ".git" / "info" / "exclude"
    turns = [{"run": ["printf 'stray.txt\\n' >> .git/info/exclude"], "say": "nothing fixed"},
             {**FIX, "write": {"stray.txt": "new\n"}}]
    project.recipe(turns=turns)
    first = project.run()
    assert first.exit_code == 6, first.stdout + first.stderr  # the check still fails: the goal stays active
    before = exclude.read_bytes()
    assert b"stray.txt" not in before
    log = next(line.split(": ", 1)[1] for line in first.stdout.splitlines() if line.strip().startswith("events:"))
    events = [json.loads(line) for line in Path(log).read_text().splitlines()]
    restored = [event for event in events if event["type"] == "unit.ignore_files_restored"]
    assert [(event["phase"], event["files"]) for event in restored] == [("gate", [str(exclude)])]
    assert "put back git's ignore file(s) the unit changed: .git/info/exclude" in first.stdout
    second = project.cli("goal", "resume")
    assert second.exit_code == 0, second.stdout + second.stderr
    assert exclude.read_bytes() == before
    assert "stray.txt" in git(root, "status", "--porcelain")  # git sees the next unit's file


@pytest.fixture
def with_submodule(project: Project, tmp_path: Path) -> Project:
    """The project with a submodule ``lib`` (a repository of its own with ``lib.py``)."""
    library = tmp_path / "library"
    library.mkdir()
    git(library, "init", "-q", "-b", "main")
    (library / "lib.py").write_text("VERSION = 1\n")
    git(library, "add", "-A")
    git(library, "commit", "-q", "-m", "library")
    git(project.root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib")
    git(project.root, "commit", "-q", "-m", "the library as a submodule")
    return project


@pytest.mark.parametrize("change", [
    "printf 'VERSION = 2\\n' > lib/lib.py",
    "printf 'VERSION = 2\\n' > lib/lib.py && git -C lib commit -qam 'v2'",
])
def test_a_change_inside_a_submodule_is_reported_not_passed_off_as_restored(with_submodule: Project,
                                                                            change: str) -> None:
    root = with_submodule.root
    turn = {**FIX, "write": {"stray.txt": "out of scope\n"}, "run": [change]}
    with_submodule.recipe(turns=[turn], extra="scope: [calc.py]\n")
    result = with_submodule.run()
    assert result.exit_code == 3, result.stdout + result.stderr
    record = json.loads((root / ".axpipe" / "artifacts" / "calc" / "unit-1" / "hard-stop.json").read_text())
    said = "not restored: the unit changed submodule(s) lib (their HEAD or files)"
    assert any(note.startswith(said) for note in record["notes"]), record["notes"]
    assert said in result.stdout
    assert (root / "lib" / "lib.py").read_text() == "VERSION = 2\n"  # left as the unit left it, and said so
    assert not (root / "stray.txt").exists() and "a - b" in (root / "calc.py").read_text()


def test_an_untouched_submodule_gives_no_note(with_submodule: Project) -> None:
    root = with_submodule.root
    with_submodule.recipe(turns=[{**FIX, "write": {"stray.txt": "out of scope\n"}}], extra="scope: [calc.py]\n")
    result = with_submodule.run()
    assert result.exit_code == 3, result.stdout + result.stderr
    record = json.loads((root / ".axpipe" / "artifacts" / "calc" / "unit-1" / "hard-stop.json").read_text())
    assert record["notes"] == []
