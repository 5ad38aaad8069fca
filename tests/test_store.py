"""The SQLite store: WAL, versioned schema, migrations, refusal of newer schemas."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from helpers import git

from axpipe import store as store_module
from axpipe.store import Store, StoreError
from axpipe.workspace import ensure_state_dir


def test_new_store_is_in_wal_mode_at_the_latest_schema(tmp_path: Path) -> None:
    with Store(tmp_path / "state.db") as store:
        assert store.connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.schema_version == len(store_module.migrations())
        tables = {row[0] for row in store.connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert "runs" in tables


def test_reopening_does_not_migrate_twice(tmp_path: Path) -> None:
    Store(tmp_path / "state.db").close()
    with Store(tmp_path / "state.db") as store:
        assert store.schema_version == len(store_module.migrations())


def test_store_from_a_newer_axpipe_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA user_version = 999")
    connection.close()
    with pytest.raises(StoreError, match="schema version 999, newer than this axpipe"):
        Store(path)


def test_a_failed_migration_leaves_the_old_schema(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "state.db"
    good = store_module.migrations()
    broken = [*good, (len(good) + 1, "9999_broken.sql", "CREATE TABLE fine (x); THIS IS NOT SQL")]
    monkeypatch.setattr(store_module, "migrations", lambda: broken)
    with pytest.raises(sqlite3.OperationalError):
        Store(path)
    monkeypatch.setattr(store_module, "migrations", lambda: good)
    with Store(path) as store:
        assert store.schema_version == len(good)
        tables = {row[0] for row in store.connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert "fine" not in tables


def test_runs_are_recorded(tmp_path: Path) -> None:
    with Store(tmp_path / "state.db") as store:
        store.start_run(run_id="r1", recipe="demo", workspace="/w", run_dir="/w/.axpipe/runs/r1", pid=1)
        store.finish_run("r1", status="succeeded", exit_code=0, summary="all good")
        row = store.get_run("r1")
        assert row is not None
        assert (row["status"], row["exit_code"], row["summary"]) == ("succeeded", 0, "all good")
        assert row["finished_at"].endswith("Z")


def test_state_dir_is_excluded_from_git(repo: Path) -> None:
    ensure_state_dir(repo)
    ensure_state_dir(repo)  # idempotent: the pattern is written once
    Store(repo / ".axpipe" / "state.db").close()
    assert git(repo, "status", "--porcelain") == ""
    exclude = (repo / ".git" / "info" / "exclude").read_text()
    assert exclude.splitlines().count("/.axpipe/") == 1


def test_state_dir_is_excluded_in_a_linked_worktree(repo: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(worktree))
    ensure_state_dir(worktree)
    (worktree / ".axpipe" / "note").write_text("x")
    assert git(worktree, "status", "--porcelain") == ""
