"""The project store: one SQLite file per checkout, ``.axpipe/state.db``, or a PostgreSQL
database that several hosts share (``store.url`` / ``AXPIPE_STORE_URL``, DESIGN §12).

This package owns every SQL statement axpipe runs. The schema is versioned and grows by
numbered migration files: ``migrations/NNNN_name.sql`` for SQLite (version in ``PRAGMA
user_version``) and the same-named port in ``migrations/postgresql/`` (version rows in
``axpipe_schema``). The pending migrations run in one transaction with their version
bumps, so a failure or a crash leaves the schema the store had. A store written by a newer
axpipe (a version we do not know), a file that is not SQLite and a database some other
program made are refused with a :class:`StoreError` rather than guessed at. A SQLite file
that fails later — damaged, emptied, read-only, full — is reported the same way wherever
it is met (:mod:`axpipe.store.faults`).

``Store(location)`` opens SQLite for a path and PostgreSQL for a ``postgresql://`` URL;
the query modules run the same SQL on both (:mod:`axpipe.store.postgres` adapts it).
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from axpipe.errors import AxpipeError
from axpipe.store import faults, names, postgres
from axpipe.store.faults import StoreCorrupt, StoreError, StoreReadOnly

__all__ = ["Store", "StoreCorrupt", "StoreError", "StoreReadOnly", "current_schema", "migrations", "now_iso"]

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
POSTGRES_MIGRATIONS_DIR = MIGRATIONS_DIR / "postgresql"
BUSY_TIMEOUT_MS = 10_000
_MIGRATION_NAME = re.compile(r"^(\d{4})_[\w-]+\.sql$")


def _unusable(path: Path, error: sqlite3.Error) -> str:
    """What to say when SQLite refuses the store at open."""
    known = faults.classify(path, error, remember=False)
    if known is not None:
        return known.message
    name = getattr(error, "sqlite_errorname", "")
    if name in ("SQLITE_BUSY", "SQLITE_LOCKED"):
        return f"the store {path} is busy: {error}; another axpipe process is writing to it, try again"
    return f"the store {path} cannot be used: {error}"


def now_iso() -> str:
    """The current time as ISO 8601 UTC with microseconds, the format every row uses."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def migrations() -> list[tuple[int, str, str]]:
    """Every migration shipped with axpipe as ``(version, name, sql)``, in order."""
    found = []
    for path in sorted(MIGRATIONS_DIR.iterdir()):
        match = _MIGRATION_NAME.match(path.name)
        if match:
            found.append((int(match.group(1)), path.name, path.read_text(encoding="utf-8")))
    versions = [version for version, _, _ in found]
    if versions != list(range(1, len(versions) + 1)):
        raise StoreError(f"store migrations are not numbered 1..n: {versions}")
    return found


def postgres_migrations() -> list[tuple[int, str, str]]:
    """The PostgreSQL port of every migration in :func:`migrations`, same numbers and names.

    SQLite's list is the reference: a migration without its port (``migrations/postgresql/<name>``)
    is refused by name, so a PostgreSQL store is never left a version behind in silence."""
    ported = []
    for version, name, _sql in migrations():
        path = POSTGRES_MIGRATIONS_DIR / name
        if not path.is_file():
            raise StoreError(f"store migration {name} has no PostgreSQL version ({path} is missing); "
                             "see docs/store.md, 'Porting a migration'")
        ported.append((version, name, path.read_text(encoding="utf-8")))
    return ported


def current_schema(path: Path) -> bool:
    """Is the store at ``path`` at the schema this axpipe knows (opening it then writes nothing)?"""
    try:
        connection = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            version = int(connection.execute("PRAGMA user_version").fetchone()[0])
        finally:
            connection.close()
    except sqlite3.Error:
        return False  # the lock phase opens it and says what is wrong
    return version == len(migrations())


class Store:
    """A connection to the project store with its schema brought up to date."""

    connection: Any  # sqlite3.Connection, or postgres.PgConnection that behaves like one

    def __init__(self, location: Path | str) -> None:
        self.corrupt: StoreCorrupt | None = None
        self.read_only = False
        if postgres.is_url(location):
            self.dialect = "postgresql"
            self.path: Path | str = str(location)
            self._open_postgres(str(location))
            return
        self.dialect = "sqlite"
        self.path = path = Path(location)
        path.parent.mkdir(parents=True, exist_ok=True)
        faults.refuse_known_faults(path)
        try:
            self._open("")
        except StoreReadOnly:
            if not path.is_file():
                raise
            # A store this user may read but not write (a read-only .axpipe/, a file of
            # another user): read commands work on it; every write says it is read-only.
            self.read_only = True
            try:
                self._open("mode=ro")
            except StoreReadOnly:  # nor can SQLite make the WAL index (-shm) beside it
                self._open("mode=ro&immutable=1")
        if not self.read_only:
            faults.remember_made(path)

    def _open(self, options: str) -> None:
        """Connect (with URI ``options``, read-only when given), set up, bring the schema up to date."""
        path = self.path
        try:
            target = f"{path.resolve().as_uri()}?{options}" if options else str(path)
            self.connection = sqlite3.connect(target, timeout=BUSY_TIMEOUT_MS / 1000, uri=bool(options),
                                              isolation_level=None, check_same_thread=False,
                                              factory=names.NameConnection)
        except sqlite3.Error as error:
            known = faults.classify(path, error)
            raise known or StoreError(f"cannot open the store {path}: {error}") from error
        self.connection.row_factory = names.row  # sqlite3.Row, with names that are not UTF-8 as text
        self.connection.fault = self._fault
        try:
            self.connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._refuse_foreign()  # before WAL mode, which is written into the file
            if not options:
                self.connection.execute("PRAGMA journal_mode = WAL")
                self.connection.execute("PRAGMA synchronous = NORMAL")
            self.connection.execute("PRAGMA foreign_keys = ON")
            self._migrate()
        except sqlite3.Error as error:
            self.connection.close()
            known = faults.classify(path, error)
            raise known or StoreError(_unusable(path, error)) from error
        except StoreError:
            self.connection.close()
            raise

    def _fault(self, error: sqlite3.Error) -> Exception | None:
        """Every SQLite error of this connection passes here (see axpipe.store.names)."""
        translated = faults.classify(self.path, error)
        if isinstance(translated, StoreCorrupt):
            self.corrupt = translated  # from now on nothing is written into this file
        return translated

    def _open_postgres(self, url: str) -> None:
        import psycopg  # deferred: only PostgreSQL stores pay its import (see store/postgres.py)

        self.connection = postgres.PgConnection(url)
        try:
            self._migrate_postgres()
        except psycopg.Error as error:
            self.connection.close()
            raise StoreError(f"the store {self.display} cannot be used: {error}") from error
        except AxpipeError:
            self.connection.close()
            raise

    @property
    def display(self) -> str:
        """Where the store is, fit to print (a URL without its password)."""
        return postgres.redact(self.path) if isinstance(self.path, str) else str(self.path)

    @property
    def for_update(self) -> str:
        """The row-lock suffix of a ``SELECT`` that guards a write: PostgreSQL takes row locks,
        SQLite's ``BEGIN IMMEDIATE`` already holds the whole database."""
        return " FOR UPDATE" if self.dialect == "postgresql" else ""

    @property
    def skip_locked(self) -> str:
        """The suffix of a claim's ``SELECT`` that takes the rows no one else holds."""
        return " FOR UPDATE SKIP LOCKED" if self.dialect == "postgresql" else ""

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        if self.dialect == "postgresql":
            return int(self.connection.execute("SELECT COALESCE(MAX(version), 0) FROM axpipe_schema").fetchone()[0])
        return int(self.connection.execute("PRAGMA user_version").fetchone()[0])

    def _migrate_postgres(self) -> None:
        """Bring a PostgreSQL store up to date under the writers' lock, recording each
        migration in ``axpipe_schema`` in the same transaction as its statements."""
        known = postgres_migrations()
        ours, has_tables = self.connection.execute(
            "SELECT to_regclass('axpipe_schema') IS NOT NULL, EXISTS (SELECT 1 FROM information_schema.tables "
            "WHERE table_schema = current_schema())").fetchone()
        if not ours and has_tables:
            raise StoreError(f"the store {self.display} holds tables but no axpipe schema version: another "
                             "program made them; point store.url at an empty database or schema")
        if ours and self.schema_version == len(known):
            return
        with self.transaction() as db:
            db.execute("CREATE TABLE IF NOT EXISTS axpipe_schema (version INTEGER PRIMARY KEY, "
                       "name TEXT NOT NULL, applied_at TEXT NOT NULL)")
            current = self.schema_version  # re-read under the lock: another host may have migrated
            if current > len(known):
                raise StoreError(f"the store {self.display} has schema version {current}, newer than this "
                                 f"axpipe knows ({len(known)}); upgrade axpipe to use it")
            for version, name, sql in known[current:]:
                for statement in _split_sql(sql):
                    db.execute(statement)
                db.execute("INSERT INTO axpipe_schema (version, name, applied_at) VALUES (?, ?, ?)",
                           (version, name, now_iso()))

    def _refuse_foreign(self) -> None:
        """A database with tables but no schema version was made by another program. One
        statement reads both, so a migration committing in between cannot look foreign."""
        version, has_tables = self.connection.execute(
            "SELECT (SELECT user_version FROM pragma_user_version), EXISTS (SELECT 1 FROM sqlite_master)").fetchone()
        if version == 0 and has_tables:
            raise StoreError(f"the store {self.path} holds tables but no axpipe schema version: another "
                             "program made it; move it aside to let axpipe start a new one")

    def _migrate(self) -> None:
        known = migrations()
        latest = len(known)
        current = self.schema_version
        if current > latest:
            raise StoreError(
                f"the store {self.path} has schema version {current}, newer than this axpipe "
                f"knows ({latest}); upgrade axpipe to use it"
            )
        if current == latest:
            return
        if self.read_only:
            raise StoreReadOnly(f"the store {self.path} is read-only for this user and at schema version {current}; "
                                f"this axpipe needs version {latest}: let a user who can write it run any axpipe "
                                "command there once to bring it up to date")
        with self.transaction() as connection:
            # Re-read inside the lock: another process may have migrated meanwhile.
            current = int(connection.execute("PRAGMA user_version").fetchone()[0])
            for version, _name, sql in known[current:]:
                for statement in _split_sql(sql):
                    connection.execute(statement)
                connection.execute(f"PRAGMA user_version = {version}")

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``, retried while another writer holds the lock.
        On PostgreSQL the same: ``BEGIN`` and the writers' advisory lock. Refused
        (:class:`StoreCorrupt`) once this connection has found the file damaged."""
        if self.corrupt is not None:
            raise StoreCorrupt(self.corrupt.message)
        if self.read_only:
            raise StoreReadOnly(faults.read_only(Path(self.path), "it is read-only for this user"))
        if self.dialect == "postgresql":
            with self._postgres_transaction(locked=True) as db:
                yield db
            return
        for attempt in range(50):
            try:
                self.connection.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or attempt == 49:
                    raise
                time.sleep(0.05)
        try:
            yield self.connection
        except BaseException:
            if self.connection.in_transaction:  # SQLite may have rolled back already (a full disk)
                try:
                    self.connection.execute("ROLLBACK")
                except (sqlite3.Error, StoreError):
                    pass  # the error that brought us here is the one to report
            raise
        else:
            self.connection.execute("COMMIT")

    @contextmanager
    def claim_transaction(self) -> Iterator[Any]:
        """A transaction for a claim whose statements lock their own rows (``FOR UPDATE SKIP
        LOCKED``): on PostgreSQL it does not wait for the writers' lock, so backends on
        several hosts claim side by side; on SQLite it is :meth:`transaction`."""
        if self.dialect == "postgresql":
            with self._postgres_transaction(locked=False) as db:
                yield db
        else:
            with self.transaction() as db:
                yield db

    @contextmanager
    def _postgres_transaction(self, *, locked: bool) -> Iterator[Any]:
        connection = self.connection
        if locked:
            connection.begin()
        else:
            connection.begin_unlocked()
        try:
            yield connection
        except BaseException:
            connection.finish(commit=False)
            raise
        else:
            connection.finish(commit=True)

    # -- runs -------------------------------------------------------------------------

    def start_run(self, *, run_id: str, recipe: str, workspace: str, run_dir: str, pid: int) -> None:
        """Record a run that starts, closing first what earlier runs left open."""
        with self.transaction() as db:
            if self.dialect == "sqlite":  # a pid is only judged on its own host (a shared store spans hosts)
                faults.close_left_open(db, now=now_iso())
            db.execute(
                "INSERT INTO runs (id, recipe, workspace, run_dir, pid, started_at) VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, recipe, workspace, run_dir, pid, now_iso()),
            )

    def finish_run(self, run_id: str, *, status: str, exit_code: int, summary: str) -> None:
        with self.transaction() as db:
            db.execute(
                "UPDATE runs SET finished_at = ?, status = ?, exit_code = ?, summary = ? WHERE id = ?",
                (now_iso(), status, exit_code, summary, run_id),
            )

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        row = self.connection.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        return dict(row) if row else None

    def recent_runs(self, limit: int = 20) -> list[dict[str, Any]]:
        rows = self.connection.execute(
            "SELECT * FROM runs ORDER BY started_at DESC LIMIT ?", (limit,)
        ).fetchall()
        return [dict(row) for row in rows]


def _split_sql(script: str) -> list[str]:
    """Split a migration into statements (no statement of ours contains a literal ';')."""
    lines = [line for line in script.splitlines() if not line.strip().startswith("--")]
    return [part.strip() for part in "\n".join(lines).split(";") if part.strip()]
