"""Small helpers the store's query modules share: rows as dicts, generic insert and update."""

from __future__ import annotations

import sqlite3
from typing import Any

Row = dict[str, Any]


def rows(cursor: sqlite3.Cursor) -> list[Row]:
    return [dict(row) for row in cursor.fetchall()]


def one(cursor: sqlite3.Cursor) -> Row | None:
    row = cursor.fetchone()
    return dict(row) if row else None


def insert(db: sqlite3.Connection, table: str, values: Row) -> int:
    """``INSERT`` the columns of ``values`` (our own column names, never user input); the row id."""
    columns = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    cursor = db.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", tuple(values.values()))
    return int(cursor.lastrowid or 0)


def update(db: sqlite3.Connection, table: str, key: str, values: Row) -> None:
    """``UPDATE`` the columns of ``values`` of the row whose id is ``key``."""
    assignments = ", ".join(f"{column} = ?" for column in values)
    db.execute(f"UPDATE {table} SET {assignments} WHERE id = ?", (*values.values(), key))
