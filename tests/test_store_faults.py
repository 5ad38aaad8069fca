"""A store that fails under axpipe (issue 25): damaged while in use, emptied, read-only, full.

Every test goes through the real CLI on a real SQLite file; the damage is real bytes
written over a table's page, as a failing disk or a stray program would."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fault_helpers import mount_small_disk, unmount, without_dac_override
from helpers import AXPIPE, write_recipe
from schedule_helpers import Project

DAMAGED = "cannot be used: database disk image is malformed"


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    made = Project.create(tmp_path / "project", now="2026-05-01T10:00:30")
    yield made
    made.stop_backends()  # no launcher is ever started here, and the store may be unreadable


def store_file(project: Project) -> Path:
    return project.root / ".axpipe" / "state.db"


def add_tasks(project: Project, count: int = 3) -> None:
    for number in range(count):
        result = project.cli("schedule", "add", "--cron", "* * * * *", "--tz", "UTC", "--recipe", "ok",
                             "--id", f"task-{number}")
        assert result.exit_code == 0, result.stderr


def damage_table(path: Path, table: str) -> None:
    """Overwrite the first page of ``table`` with garbage (the store closed, its WAL folded in)."""
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    size = connection.execute("PRAGMA page_size").fetchone()[0]
    connection.close()
    with path.open("r+b") as file:
        file.seek((page - 1) * size)
        file.write(b"\xa5" * size)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_backend_that_finds_the_store_damaged_stops_with_exit_1(project: Project) -> None:
    add_tasks(project)
    damage_table(store_file(project), "schedule_tasks")
    project.set_clock("2026-05-01T10:01:00")  # the tasks are due: the sweep reads their rows
    backend = subprocess.run([*AXPIPE, "runtime", "start", "--sweep-interval", "100ms"], cwd=project.root,
                             env={**os.environ, **project.env}, capture_output=True, text=True, timeout=60)
    assert backend.returncode == 1, backend.stdout + backend.stderr
    assert DAMAGED in backend.stdout and "move it aside" in backend.stdout
    assert "stopping: the store is damaged" in backend.stdout
    assert "internal error" not in backend.stdout + backend.stderr
    assert backend.stdout.count(DAMAGED) == 1  # said once, not every second
    # It registered before it met the damage; every later command refuses the file unread.
    later = project.cli("runtime", "status")
    assert later.exit_code == 1 and "(found by an earlier command" in later.stderr


def test_a_damaged_store_is_one_clear_error_everywhere_and_never_written(project: Project) -> None:
    add_tasks(project)
    damage_table(store_file(project), "schedule_tasks")
    before = digest(store_file(project))
    first = project.cli("schedule", "list")  # opens fine: the damage is found by the query
    assert first.exit_code == 1
    assert first.stderr.startswith(f"axpipe: error: the store {store_file(project)} {DAMAGED}. ")
    assert "move it aside" in first.stderr and "internal error" not in first.stderr
    for command in (["schedule", "runs", "task-0"], ["runtime", "status"], ["schedule", "list", "--json"],
                    ["run", "recipe=ok"]):
        later = project.cli(*command)
        assert later.exit_code == 1, (command, later.stdout, later.stderr)
        assert ("cannot be used: database disk image is malformed (found by an earlier command; nothing was "
                "read or written since)") in later.stderr, command
        assert "internal error" not in later.stderr
    assert digest(store_file(project)) == before  # nothing was written into it
    aside = project.root.parent / "damaged.db"
    shutil.move(store_file(project), aside)
    fresh = project.cli("schedule", "list")
    assert (fresh.exit_code, fresh.stderr) == (0, "")
    assert fresh.stdout.startswith("No scheduled tasks.")


def test_an_emptied_store_is_reported_not_replaced(project: Project) -> None:
    add_tasks(project, 1)
    store_file(project).write_bytes(b"")  # truncated: by a crash of the file system, a stray `> state.db`
    result = project.cli("schedule", "list")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"axpipe: error: the store {store_file(project)} is empty (0 bytes), but "
                                    "state.db.made beside it shows a store was there")
    assert store_file(project).stat().st_size == 0
    run = project.cli("run", "recipe=ok")
    assert run.exit_code == 1 and "is empty (0 bytes)" in run.stderr
    assert store_file(project).stat().st_size == 0


# -- a read-only store, a full disk (item 6) ------------------------------------------------


FILL = """
name: fill
goal:
  objective: "fill the disk while the check runs"
  acceptance:
    AC1: {tag: closes, text: "filled", check: fill}
  checks:
    - {id: fill, acceptance: [AC1], command: "dd if=/dev/zero of=.axpipe/filler bs=64k 2>/dev/null; true"}
"""


def test_read_commands_work_on_a_read_only_store_and_writes_say_why_not(project: Project) -> None:
    prefix, why = without_dac_override()
    if prefix is None:
        pytest.skip(why)
    add_tasks(project, 1)
    state = project.root / ".axpipe"
    files = [path for path in state.iterdir() if path.is_file()]
    for path in files:
        path.chmod(0o444)
    state.chmod(0o555)
    try:
        def cli(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([*prefix, *AXPIPE, *args], cwd=project.root, capture_output=True, text=True,
                                  env={**os.environ, **project.env}, timeout=120)

        listed = cli("schedule", "list", "--json")
        assert listed.returncode == 0, listed.stderr
        assert [task["id"] for task in json.loads(listed.stdout)] == ["task-0"]
        runs = cli("schedule", "runs", "task-0")
        assert (runs.returncode, runs.stdout) == (0, "task task-0 has no runs yet\n")
        status = cli("runtime", "status", "--json")  # exit 1: no backend lives, as on any store
        assert status.returncode == 1 and json.loads(status.stdout)["alive"] is False, status.stderr
        added = cli("schedule", "add", "--daily", "12:00", "--tz", "UTC", "--recipe", "ok", "--id", "other")
        assert added.returncode == 1
        assert added.stderr.startswith(f"axpipe: error: cannot write to the store {store_file(project)}: ")
        assert "writable for this user" in added.stderr and "internal error" not in added.stderr
    finally:
        state.chmod(0o755)
        for path in files:
            path.chmod(0o644)


def test_a_file_size_limit_is_a_clear_error(project: Project) -> None:
    add_tasks(project, 1)

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, resource.RLIM_INFINITY))  # EFBIG past 8 KiB

    result = subprocess.run([*AXPIPE, "schedule", "add", "--daily", "12:00", "--tz", "UTC", "--recipe", "ok",
                             "--id", "other"], cwd=project.root, capture_output=True, text=True,
                            env={**os.environ, **project.env}, preexec_fn=small_files, timeout=120)
    assert result.returncode == 1
    assert result.stderr.startswith(f"axpipe: error: cannot use the store {store_file(project)}: ")
    assert "file size limit (ulimit -f)" in result.stderr and "internal error" not in result.stderr


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    why = mount_small_disk(disk, "3m")
    if why:
        pytest.skip(why)
    yield disk
    unmount(disk)


def test_a_full_disk_is_a_clear_error_and_what_it_left_open_is_closed_next_time(small_disk: Path) -> None:
    project = Project.create(small_disk / "project", now="2026-05-01T10:00:30")
    write_recipe(project.root / "recipes", "fill", FILL)
    full = project.cli("run", "recipe=fill")  # its check fills the disk, then axpipe must record it
    assert full.exit_code == 1, full.stdout + full.stderr
    output = full.stdout + full.stderr
    assert "database or disk is full. Free space on the file system that holds it" in output
    assert "internal error" not in output and "This is a bug" not in output
    with project.store() as store:
        left = [dict(row) for row in store.connection.execute("SELECT * FROM receipts WHERE status = 'running'")]
    assert len(left) == 1  # its result could not be written
    (project.root / ".axpipe" / "filler").unlink()
    again = project.cli("run", "recipe=ok")
    assert again.exit_code == 0, again.stdout + again.stderr
    with project.store() as store:
        closed = dict(store.connection.execute("SELECT * FROM receipts WHERE id = ?", (left[0]["id"],)).fetchone())
    assert closed["status"] == "error"
    assert closed["summary"] == (f"left open: its process (pid {left[0]['pid']}) ended without recording an outcome "
                                 "(a write that failed, a kill)")
