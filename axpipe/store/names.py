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
from collections.abc import Iterable, Mapping
from typing import Any


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


class NameConnection(sqlite3.Connection):
    """A connection whose parameters may hold names that are not UTF-8 (see the module)."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        return super().execute(sql, _bindable_all(parameters))

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        return super().executemany(sql, (_bindable_all(row) for row in parameters))


def row(cursor: sqlite3.Cursor, values: tuple[Any, ...]) -> sqlite3.Row:
    """The row factory: a :class:`sqlite3.Row` whose BLOBs (names kept as bytes) are text again."""
    if any(type(value) is bytes for value in values):
        values = tuple(value.decode("utf-8", "surrogateescape") if type(value) is bytes else value
                       for value in values)
    return sqlite3.Row(cursor, values)
