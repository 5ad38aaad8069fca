"""One store contract over both engines (SQLite and PostgreSQL, ``store_location``), and what
only a PostgreSQL store does: migrations recorded per version, ports of every SQLite
migration, foreign or newer schemas refused, a lost server reported with exit 5."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from goalkit import FIX, Project

from axpipe import store as store_module
from axpipe.store import Store, StoreError, locate
from axpipe.store import goals as goal_rows
from axpipe.store import loops as loop_rows
from axpipe.store import runtime as runtime_rows
from axpipe.store import units as unit_rows
from axpipe.store.postgres import StoreUnavailable, redact


@pytest.fixture
def store(store_location: Path | str) -> Iterator[Store]:
    with Store(store_location) as opened:
        yield opened


def test_runs_goals_receipts_and_units_read_back_alike(store: Store) -> None:
    store.start_run(run_id="r1", recipe="demo", workspace="/w", run_dir="/w/r1", pid=7)
    store.finish_run("r1", status="succeeded", exit_code=0, summary="ok")
    run = store.get_run("r1")
    assert run is not None and (run["status"], run["exit_code"], run["pid"]) == ("succeeded", 0, 7)
    goal_rows.insert_goal(store, "g", recipe="demo", objective="o", assured=True, status="active",
                          workspace="/w", plan="[]")
    goal_rows.add_usage(store, "g", tokens=5, seconds=1.5, steps=1)
    goal = goal_rows.get_goal(store, "g")
    assert goal is not None and (goal["assured"], goal["tokens_used"], goal["time_used"]) == (1, 5, 1.5)
    assert "rowid" not in goal  # PostgreSQL's stand-in for SQLite's implicit rowid stays hidden
    goal_rows.insert_contract(store, digest="d1", goal_id="g", canonical={"a": 1})
    goal_rows.insert_contract(store, digest="d1", goal_id="g", canonical={"a": 2})  # a repeat is ignored
    assert goal_rows.get_contract(store, "d1")["canonical"] == {"a": 1}  # type: ignore[index]
    for session in ("s1", "s2"):
        goal_rows.insert_session(store, session_id=session, goal_id="g", contract_digest=None, workspace="/w")
    assert goal_rows.find_session(store, "s1")["id"] == "s1"  # type: ignore[index]
    for receipt, digest in (("a", None), ("b", "d1")):
        goal_rows.start_receipt(store, receipt_id=receipt, goal_id="g", session_id="s2", workspace="/w",
                                contract_digest=digest, check_id="unit", held_out=False, command="true")
        goal_rows.finish_receipt(store, receipt, status="passed", exit_code=0, summary="ok", fingerprint="f",
                                 fingerprint_reason=None, output_tail="", artifacts=["x"])
    # NULL digests match NULL, and only NULL (SQLite's `IS`, spelled for both engines).
    assert goal_rows.passed_before(store, goal_id="g", check_id="unit", fingerprint="f", contract_digest=None,
                                   other_than="b")
    assert not goal_rows.passed_before(store, goal_id="g", check_id="unit", fingerprint="f",
                                       contract_digest="d1", other_than="b")
    assert goal_rows.latest_receipt(store, "g", "unit")["id"] in ("a", "b")  # type: ignore[index]
    assert [row["id"] for row in goal_rows.receipts_of_session(store, "s2")] == ["a", "b"]
    goal_rows.record_edits(store, "g", ["b.py", "a.py"])
    goal_rows.record_edits(store, "g", ["a.py"])
    assert goal_rows.edited_files(store, "g") == ["a.py", "b.py"]
    assert [unit_rows.start_unit(store, goal_id="g", session_id="s2", start_head=None, start_ref=None,
                                 start_tree=None) for _ in range(2)] == [1, 2]
    unit_rows.finish_unit(store, "g", 1, status="passed")
    assert [unit["status"] for unit in unit_rows.list_units(store, "g")] == ["passed", "running"]
    assert (unit_rows.add_bounce(store, "g"), unit_rows.add_bounce(store, "g")) == (1, 2)


def test_loops_backends_and_requests_read_back_alike(store: Store) -> None:
    loop_rows.insert_loop(store, {"id": "l1", "workspace": "/w", "recipe": "r", "interval": 30.0, "max_runs": 5,
                                  "pid": 1, "host": "h", "started_at": "2026-05-01T10:00:00.000000Z",
                                  "heartbeat_real": 1.0})
    assert loop_rows.request_stop(store, "l1", "enough", now=False)
    assert loop_rows.request_stop(store, "l1", "later reason", now=True)
    assert loop_rows.request_stop(store, "l1", "weaker", now=False)  # never weakens `now`
    assert loop_rows.pending_stop(store, "l1") == (True, "enough", True)
    runtime_rows.register_backend(store, {"id": "b1", "pid": 1, "host": "h", "root": "/w",
                                          "started_at": "2026-05-01T10:00:00.000000Z", "heartbeat_real": 1.0,
                                          "sweep_interval": 60.0})
    assert runtime_rows.beat_backend(store, "b1", 2.0) == (True, None)
    first = runtime_rows.add_request(store, action="run", task_id="t", now_real=1.0)
    second = runtime_rows.add_request(store, action="pause", task_id="t", now_real=2.0)
    assert second == first + 1
    claimed = runtime_rows.claim_request(store, "b1")
    assert claimed is not None and claimed["id"] == first
    assert runtime_rows.withdraw_request(store, second) and not runtime_rows.withdraw_request(store, first)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_a_goal_run_gives_the_same_status_json_on_both_stores(engine: str, repo: Path, tmp_path: Path,
                                                              request: pytest.FixtureRequest) -> None:
    project = Project(repo, tmp_path)
    if engine == "postgresql":
        project.env["AXPIPE_STORE_URL"] = request.getfixturevalue("pg_url")
    project.recipe(turns=[FIX])
    result = project.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    status = project.status()
    assert (status["goal"]["status"], [(c["id"], c["status"]) for c in status["checks"]]) == (
        "complete", [("unit", "passed")])
    # The PostgreSQL run wrote nothing to a SQLite file; the SQLite run did.
    assert (repo / ".axpipe" / "state.db").exists() == (engine == "sqlite")


# -- PostgreSQL only ---------------------------------------------------------------------


def _tables(store: Store) -> dict[str, set[str]]:
    if store.dialect == "sqlite":
        names = [row[0] for row in store.connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        return {name: {row[1] for row in store.connection.execute(f"PRAGMA table_info({name})")} for name in names}
    columns: dict[str, set[str]] = {}
    for table, column in store.connection.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name != 'axpipe_schema' AND column_name != 'rowid'"):
        columns.setdefault(table, set()).add(column)
    return columns


def test_every_migration_has_a_postgresql_port_with_the_same_tables_and_columns(tmp_path: Path, pg_url: str) -> None:
    with Store(tmp_path / "state.db") as lite, Store(pg_url) as pg:
        assert pg.schema_version == lite.schema_version == len(store_module.migrations())
        assert _tables(pg) == _tables(lite)
        recorded = [tuple(row) for row in pg.connection.execute("SELECT version, name FROM axpipe_schema ORDER BY 1")]
        assert recorded == [(version, name) for version, name, _ in store_module.migrations()]


def test_a_migration_without_its_port_is_refused_by_name(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    good = store_module.migrations()
    monkeypatch.setattr(store_module, "migrations", lambda: [*good, (len(good) + 1, "0099_new.sql", "SELECT 1")])
    with pytest.raises(StoreError, match=r"store migration 0099_new.sql has no PostgreSQL version .*Porting"):
        Store(pg_url)


def test_reopening_migrates_once_and_a_newer_schema_is_refused(pg_url: str) -> None:
    Store(pg_url).close()
    with Store(pg_url) as store:
        assert store.connection.execute("SELECT COUNT(*) FROM axpipe_schema").fetchone()[0] == store.schema_version
        with store.transaction() as db:
            db.execute("INSERT INTO axpipe_schema (version, name, applied_at) VALUES (999, 'future', 'x')")
    with pytest.raises(StoreError, match="schema version 999, newer than this axpipe knows"):
        Store(pg_url)


def test_a_failed_migration_leaves_the_old_schema(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    good = store_module.migrations()
    ported = store_module.postgres_migrations()
    broken = [*ported, (len(good) + 1, "9999_broken.sql", "CREATE TABLE fine (x INTEGER); THIS IS NOT SQL")]
    monkeypatch.setattr(store_module, "postgres_migrations", lambda: broken)
    with pytest.raises(StoreError, match=r"cannot be used: syntax error at or near \"THIS\""):
        Store(pg_url)
    monkeypatch.setattr(store_module, "postgres_migrations", lambda: ported)
    with Store(pg_url) as store:  # nothing of the failed attempt was kept: it migrates from zero
        assert store.schema_version == len(good)
        assert "fine" not in _tables(store)


def test_a_database_another_program_made_is_refused(pg_url: str) -> None:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE goals (x integer)")
    with pytest.raises(StoreError, match="holds tables but no axpipe schema version: another program made them"):
        Store(pg_url)


def test_an_unreachable_server_is_exit_5_without_the_password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("axpipe.store.postgres.RETRY_DELAYS", (0.01, 0.01))
    url = "postgresql://axpipe:s3cret@127.0.0.1:9/axpipe"  # port 9 (discard): nothing listens
    with pytest.raises(StoreUnavailable) as caught:
        Store(url)
    assert caught.value.exit_code == 5
    assert "cannot reach the PostgreSQL store postgresql://axpipe:***@127.0.0.1:9/axpipe" in caught.value.message
    assert "s3cret" not in caught.value.message and redact(url) in caught.value.message


def test_a_server_gone_mid_write_is_reported_not_retried(pg_url: str) -> None:
    import psycopg

    with Store(pg_url) as store:
        with pytest.raises(StoreUnavailable, match=r"during a write.*not retried") as caught, \
                store.transaction() as db:
            pid = db.execute("SELECT pg_backend_pid()").fetchone()[0]
            with psycopg.connect(pg_url, autocommit=True) as other:
                other.execute("SELECT pg_terminate_backend(%s)", (pid,))
            db.execute("INSERT INTO runs (id, recipe, workspace, run_dir, pid, started_at) "
                       "VALUES ('r', 'x', '/w', '/w', 1, 'now')")
        assert caught.value.exit_code == 5
        # The next use reconnects: a read works, and the lost write did not happen.
        assert store.get_run("r") is None


def test_store_url_comes_from_the_environment_then_axpipe_yaml(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    assert locate.location(tmp_path) == tmp_path / ".axpipe" / "state.db"
    (tmp_path / "axpipe.yaml").write_text("store:\n  url: postgresql://u@db.example/axpipe\n")
    assert locate.location(tmp_path) == "postgresql://u@db.example/axpipe"
    monkeypatch.setenv("AXPIPE_STORE_URL", "postgresql://other/axpipe")
    assert locate.location(tmp_path) == "postgresql://other/axpipe"
    (tmp_path / "axpipe.yaml").write_text("store:\n  url: mysql://nope\n")
    monkeypatch.delenv("AXPIPE_STORE_URL")
    with pytest.raises(Exception, match=r"store.url: expected a postgresql:// URL, got 'mysql://nope'"):
        locate.location(tmp_path)


def test_store_copy_moves_a_used_sqlite_store_into_postgresql_and_verifies_every_row(
        repo: Path, tmp_path: Path, pg_url: str) -> None:
    from helpers import run_cli

    with Store(repo / ".axpipe" / "state.db") as lite:
        goal_rows.insert_goal(lite, "g", recipe="r", objective="o", assured=True, status="active",
                              workspace="/w", plan="[]")
        goal_rows.insert_session(lite, session_id="s", goal_id="g", contract_digest=None, workspace="/w")
        with lite.transaction() as db:
            db.execute("INSERT INTO schedule_tasks (id, kind, expression, tz, recipe, source, next_run, created_at, "
                       "updated_at) VALUES ('t', 'daily', '09:00', 'UTC', 'r', 'test', 'x', 'x', 'x')")
            for n in range(3):
                db.execute("INSERT INTO schedule_runs (task_id, scheduled_for, last_scheduled, trigger, status, "
                           "recipe, overrides, max_run_duration, queued_at) VALUES ('t', ?, ?, 'schedule', "
                           "'succeeded', 'r', '[]', 60, 'x')", (f"2026-05-0{n + 1}", f"2026-05-0{n + 1}"))
    copied = run_cli("store", "copy", "--to", pg_url, cwd=repo)
    assert copied.exit_code == 0, copied.stderr
    assert "copied       3 row(s) of schedule_runs" in copied.stdout
    assert "verified: all 6 row(s) of 13 table(s) read back equal"  # 13: agent_pacing (0007) in copied.stdout
    with Store(pg_url) as pg:
        assert goal_rows.get_goal(pg, "g")["assured"] == 1  # type: ignore[index]
        # ids go on after the copied ones
        assert runtime_rows.add_request(pg, action="run", task_id="t", now_real=1.0) == 1
        next_run = pg.connection.execute("INSERT INTO schedule_runs (task_id, scheduled_for, last_scheduled, trigger, "
                                         "status, recipe, overrides, max_run_duration, queued_at) VALUES ('t', 'y', "
                                         "'y', 'manual', 'queued', 'r', '[]', 60, 'y') RETURNING id").fetchone()[0]
        assert next_run == 4
    again = run_cli("store", "copy", "--to", pg_url, cwd=repo)
    assert again.exit_code == 2
    assert "already holds rows (goals, runtime_requests, schedule_tasks, sessions, schedule_runs)" in again.stderr
    # With store.url set, `store migrate` speaks of the PostgreSQL store, without its password.
    migrated = run_cli("store", "migrate", cwd=repo, env={"AXPIPE_STORE_URL": pg_url})
    assert migrated.exit_code == 0 and "postgresql://axpipe:***@" in migrated.stdout
