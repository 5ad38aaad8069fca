"""A store that fails under axpipe (issue 25): damaged while in use, emptied, read-only, full.

Every test goes through the real CLI on a real SQLite file; the damage is real bytes
written over a table's page, as a failing disk or a stray program would."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import AXPIPE
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
