"""Small helpers the store's query modules share: rows as dicts, generic insert and update."""

from __future__ import annotations

from typing import Any

Row = dict[str, Any]


def rows(cursor: Any) -> list[Row]:
    return [dict(row) for row in cursor.fetchall()]


def one(cursor: Any) -> Row | None:
    row = cursor.fetchone()
    return dict(row) if row else None


def insert(db: Any, table: str, values: Row) -> int:
    """``INSERT`` the columns of ``values`` (our own column names, never user input); the
    row's integer id (0 for a table whose id is text). ``RETURNING`` serves both engines."""
    columns = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    key = db.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks}) RETURNING id",
                     tuple(values.values())).fetchone()[0]
    return key if isinstance(key, int) else 0


def update(db: Any, table: str, key: str, values: Row) -> None:
    """``UPDATE`` the columns of ``values`` of the row whose id is ``key``."""
    assignments = ", ".join(f"{column} = ?" for column in values)
    db.execute(f"UPDATE {table} SET {assignments} WHERE id = ?", (*values.values(), key))
