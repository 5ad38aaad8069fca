"""The PostgreSQL dialect of the store: a connection that speaks the subset of ``sqlite3``
the store's query modules use, so one set of SQL serves both engines.

The query modules (``store/goals.py``, ``store/schedule.py``, ...) call ``execute`` with
``?`` placeholders and read rows by index and by name; this module translates the
placeholders to psycopg's, hands rows back in a ``sqlite3.Row``-like shape (without the
``rowid`` column every PostgreSQL table carries to stand in for SQLite's implicit one),
binds Python booleans as integers (the schema keeps SQLite's 0/1 columns) and turns a
lost server into a :class:`StoreUnavailable` (exit 5) instead of a traceback.

psycopg is imported here only, when a ``postgresql://`` store is opened: importing it
costs ~130 ms, which a SQLite user should never pay at start-up.

What is retried: opening the connection and starting a transaction (nothing has been
sent yet), and single-statement reads. A write is *not* sent again: cut off inside a
transaction it was rolled back by the server (the caller may try its work again, as the
runtime backend does on its next round); cut off while committing, whether it was
committed is unknown, and sending it again could run work twice. Either way the caller
gets a :class:`StoreUnavailable` (exit 5) saying which; :class:`StoreUnreachable` means
the server stayed away through every retry.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from axpipe.errors import AxpipeError, ExitCode

SCHEMES = ("postgresql://", "postgres://")
# How long to keep trying to reach the server before saying so (seconds, doubling waits).
RETRY_DELAYS = (0.1, 0.2, 0.4, 0.8, 1.6, 3.2)
# pg_advisory_xact_lock key that serialises writers the way SQLite's BEGIN IMMEDIATE does.
WRITER_LOCK = 0x61787069  # "axpi"
_PLACEHOLDER = re.compile(r"\?")


class StoreUnavailable(AxpipeError):
    """The PostgreSQL server went away during a statement or a transaction."""

    exit_code = ExitCode.ENVIRONMENT


class StoreUnreachable(StoreUnavailable):
    """The PostgreSQL server cannot be reached, after the retries with back-off."""


def is_url(location: object) -> bool:
    return isinstance(location, str) and location.startswith(SCHEMES)


def redact(url: str) -> str:
    """``url`` without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    user = f"{parts.username}:***@" if parts.username else ""
    return urlunsplit((parts.scheme, user + host, parts.path, parts.query, parts.fragment))


_translated: dict[str, str] = {}


def translate(sql: str) -> str:
    """``?`` placeholders to psycopg's ``%s`` (a literal ``%`` doubled). No SQL of ours has a
    ``?`` or ``%`` inside a string literal; the store's tests run every statement on both engines."""
    done = _translated.get(sql)
    if done is None:
        done = _translated[sql] = _PLACEHOLDER.sub("%s", sql.replace("%", "%%"))
    return done


class PgRow(tuple[Any, ...]):
    """A row readable like ``sqlite3.Row``: by position, by column name, and ``dict(row)``."""

    _names: tuple[str, ...] = ()

    def keys(self) -> list[str]:
        return list(self._names)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._names.index(key))
        return tuple.__getitem__(self, key)


def _row_factory(cursor: Any) -> Callable[[Sequence[Any]], PgRow]:
    names = tuple(column.name for column in cursor.description or ())
    keep = [index for index, name in enumerate(names) if name != "rowid"]
    kept_names = tuple(names[index] for index in keep)
    row_type = type("Row", (PgRow,), {"_names": kept_names, "__slots__": ()})
    every = len(keep) == len(names)

    def make(values: Sequence[Any]) -> PgRow:
        return row_type(values if every else (values[index] for index in keep))  # type: ignore[no-any-return]
    return make


class PgCursor:
    """The part of ``sqlite3.Cursor`` the store uses."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor
        self.rowcount: int = cursor.rowcount
        self.lastrowid: int | None = None  # inserts that need their id say RETURNING id

    def fetchone(self) -> PgRow | None:
        return self._cursor.fetchone() if self._cursor.description else None

    def fetchall(self) -> list[PgRow]:
        return self._cursor.fetchall() if self._cursor.description else []

    def __iter__(self) -> Iterator[PgRow]:
        return iter(self.fetchall())


class PgConnection:
    """One autocommit psycopg connection, reconnected when the server went away between uses."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.in_transaction = False
        self._conn: Any = None
        self._connect()

    def _connect(self) -> None:
        import psycopg  # deferred: ~130 ms, paid only by PostgreSQL stores (see the module)

        last: Exception | None = None
        for delay in (0.0, *RETRY_DELAYS):
            time.sleep(delay)
            try:
                conn = psycopg.connect(self.url, autocommit=True, row_factory=_row_factory, connect_timeout=5)
            except psycopg.OperationalError as error:
                last = error
                continue
            conn.adapters.register_dumper(bool, _bool_dumper(psycopg))
            self._conn = conn
            return
        raise StoreUnreachable(f"cannot reach the PostgreSQL store {redact(self.url)}: "
                               f"{_first_line(last)} (tried {len(RETRY_DELAYS) + 1} times over "
                               f"{sum(RETRY_DELAYS):.0f} s)")

    def _ready(self) -> Any:
        if self._conn is None or self._conn.closed or self._conn.broken:
            if self.in_transaction:
                raise StoreUnavailable(self._lost_mid_write())
            self._connect()
        return self._conn

    def _lost_mid_write(self, error: Exception | None = None, *, committing: bool = False) -> str:
        why = f": {_first_line(error)}" if error else ""
        if committing:
            return (f"lost the connection to the PostgreSQL store {redact(self.url)} while committing{why}; "
                    "whether it was committed is unknown, so it was not sent again (nothing runs twice)")
        return (f"lost the connection to the PostgreSQL store {redact(self.url)} during a write{why}; "
                "the server rolled the write back (it was never committed) and it was not retried")

    def execute(self, sql: str, parameters: Sequence[Any] | dict[str, Any] = (), /) -> PgCursor:
        import psycopg  # already imported by _connect; a dictionary look-up here

        reading = not self.in_transaction and sql.lstrip()[:6].upper() == "SELECT"
        for attempt in range(2 if reading else 1):
            conn = self._ready()
            try:
                return PgCursor(conn.execute(translate(sql), parameters or None))
            except psycopg.OperationalError as error:
                if reading and attempt == 0:
                    continue  # a read is safe to send again on a fresh connection
                if not reading:  # outside a transaction a statement commits itself: unknown
                    raise StoreUnavailable(self._lost_mid_write(error, committing=not self.in_transaction)) \
                        from error
                raise StoreUnavailable(f"the PostgreSQL store {redact(self.url)} went away: "
                                       f"{_first_line(error)}") from error
        raise AssertionError("unreachable")

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> PgCursor:
        import psycopg

        conn = self._ready()
        try:
            with conn.cursor() as cursor:
                cursor.executemany(translate(sql), list(parameters))
                return PgCursor(cursor)
        except psycopg.OperationalError as error:
            raise StoreUnavailable(self._lost_mid_write(error, committing=not self.in_transaction)) from error

    def begin(self) -> None:
        """``BEGIN`` plus the writers' lock: one writing transaction at a time, as SQLite's
        ``BEGIN IMMEDIATE``. Retried on a fresh connection: nothing was written yet."""
        import psycopg

        for attempt in range(2):
            conn = self._ready()
            try:
                conn.execute("BEGIN")  # on a connection the server dropped meanwhile, this fails first
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITER_LOCK,))
                break
            except psycopg.OperationalError as error:
                if attempt == 1:
                    raise StoreUnavailable(f"the PostgreSQL store {redact(self.url)} went away: "
                                           f"{_first_line(error)}") from error
        self.in_transaction = True

    def begin_unlocked(self) -> None:
        """``BEGIN`` without the writers' lock, for statements that lock the rows they need
        themselves (``FOR UPDATE SKIP LOCKED``)."""
        conn = self._ready()
        conn.execute("BEGIN")
        self.in_transaction = True

    def finish(self, commit: bool) -> None:
        import psycopg

        try:
            self._conn.execute("COMMIT" if commit else "ROLLBACK")
        except psycopg.OperationalError as error:
            if commit:
                raise StoreUnavailable(self._lost_mid_write(error, committing=True)) from error
            # a rollback on a dead connection: the server rolled back already
        finally:
            self.in_transaction = False

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


def _first_line(error: object) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _bool_dumper(psycopg: Any) -> type:
    """Booleans bound as 0/1: the schema keeps SQLite's integer flags (``assured``, ``stop_now``)."""
    from psycopg.adapt import Dumper

    class BoolAsInt(Dumper):
        oid = psycopg.adapters.types["int8"].oid

        def dump(self, obj: Any) -> bytes:
            return b"1" if obj else b"0"

    return BoolAsInt
