"""The SQLite store: WAL, versioned schema, migrations, refusal of newer schemas."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from helpers import git, run_cli

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
    with pytest.raises(StoreError, match=r"state.db cannot be used: near \"THIS\": syntax error"):
        Store(path)
    # The pending migrations are one transaction: the good ones before the broken one are
    # rolled back with it, and the file is left as it was (empty).
    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA user_version").fetchone()[0] == 0
    assert connection.execute("SELECT name FROM sqlite_master").fetchall() == []
    connection.close()
    monkeypatch.setattr(store_module, "migrations", lambda: good)
    with Store(path) as store:
        assert store.schema_version == len(good)
        tables = {row[0] for row in store.connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert "fine" not in tables


def test_a_file_that_is_not_sqlite_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    garbage = bytes(range(256)) * 16
    path.write_bytes(garbage)
    with pytest.raises(StoreError, match=r"state\.db cannot be used: file is not a database\. .*move it aside"):
        Store(path)
    assert path.read_bytes() == garbage


def test_only_a_damaged_store_is_worth_moving_aside(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    busy = sqlite3.OperationalError("database is locked")
    busy.sqlite_errorname = "SQLITE_BUSY"  # type: ignore[attr-defined]  # as SQLite sets it
    assert store_module._unusable(path, busy) == (
        f"the store {path} is busy: database is locked; another axpipe process is writing to it, try again")
    readonly = sqlite3.OperationalError("attempt to write a readonly database")
    readonly.sqlite_errorname = "SQLITE_READONLY"  # type: ignore[attr-defined]
    assert "move it aside" not in store_module._unusable(path, readonly)


def test_a_database_another_program_made_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE goals (x)")
    connection.commit()
    connection.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="holds tables but no axpipe schema version: another program made it"):
        Store(path)
    assert path.read_bytes() == before  # not even switched to WAL mode


def test_commands_on_an_unusable_store_say_so_instead_of_crashing(repo: Path) -> None:
    state = ensure_state_dir(repo)
    (state / "state.db").write_bytes(b"not a database" * 300)
    for command in (["goal", "status"], ["schedule", "list"], ["loop", "status"], ["runtime", "status"]):
        result = run_cli(*command, cwd=repo)
        assert result.exit_code == 1, (command, result.stderr)
        assert "cannot be used: file is not a database" in result.stderr, command
        assert "internal error" not in result.stderr and "Traceback" not in result.stderr


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
