"""Text that is not UTF-8 in the store: file names and folders, kept as their own bytes.

On Linux a file or folder name is bytes; Python hands one that is not valid UTF-8 to us
as text with surrogate escapes (``os.fsdecode``), and SQLite's TEXT holds UTF-8 only, so
binding it failed with ``UnicodeEncodeError``. A checkout under such a folder puts one in
every row that names the workspace or the run folder, and a file name git printed as bytes
reaches the edited files, reasons and summaries. The connection below binds such text as
its bytes (a BLOB: SQLite compares it with the same bytes bound again, so ``WHERE
workspace = ?`` still finds it) and reads every BLOB back as text with surrogate escapes:
the store holds no other BLOB, so nothing else changes and each value reads back exactly.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NoReturn

Fault = Callable[[sqlite3.Error], Exception | None]


def bindable(value: Any) -> Any:
    """``value`` as SQLite can keep it: unchanged, or the bytes of text with surrogate escapes."""
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogateescape")
    return value


def _bindable_all(parameters: Any) -> Any:
    if isinstance(parameters, Mapping):
        return {key: bindable(value) for key, value in parameters.items()}
    return tuple(bindable(value) for value in parameters)


def _no_fault(error: sqlite3.Error) -> Exception | None:
    return None


class NameConnection(sqlite3.Connection):
    """A connection whose parameters may hold names that are not UTF-8 (see the module).

    Its ``fault`` turns an SQLite error met by *any* statement or fetch into the error the
    store reports (a damaged file, a full disk, a read-only file), or None to let it pass:
    corruption found in the middle of a command is then said as clearly as at open."""

    fault: Fault = staticmethod(_no_fault)

    def cursor(self, factory: Any = None) -> Any:
        return super().cursor(factory or FaultCursor)

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, _bindable_all(parameters))
        except sqlite3.Error as error:
            _reraise(self.fault(error), error)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        try:
            return super().executemany(sql, (_bindable_all(row) for row in parameters))
        except sqlite3.Error as error:
            _reraise(self.fault(error), error)


def _reraise(translated: Exception | None, error: sqlite3.Error) -> NoReturn:
    if translated is None:
        raise error
    raise translated from error


class FaultCursor(sqlite3.Cursor):
    """A cursor whose errors go through its connection's ``fault`` (rows are read lazily:
    a damaged page may first show in a fetch)."""

    def _fault(self, error: sqlite3.Error) -> Exception | None:
        connection = self.connection
        return connection.fault(error) if isinstance(connection, NameConnection) else None

    def execute(self, sql: str, parameters: Any = (), /) -> FaultCursor:
        try:
            return super().execute(sql, _bindable_all(parameters))
        except sqlite3.Error as error:
            _reraise(self._fault(error), error)

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.Error as error:
            _reraise(self._fault(error), error)

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        try:
            return super().fetchmany(size if size is not None else self.arraysize)
        except sqlite3.Error as error:
            _reraise(self._fault(error), error)

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.Error as error:
            _reraise(self._fault(error), error)

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except sqlite3.Error as error:
            _reraise(self._fault(error), error)


def row(cursor: sqlite3.Cursor, values: tuple[Any, ...]) -> sqlite3.Row:
    """The row factory: a :class:`sqlite3.Row` whose BLOBs (names kept as bytes) are text again."""
    if any(type(value) is bytes for value in values):
        values = tuple(value.decode("utf-8", "surrogateescape") if type(value) is bytes else value
                       for value in values)
    return sqlite3.Row(cursor, values)
