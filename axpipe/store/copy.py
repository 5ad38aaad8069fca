"""``axpipe store copy --to URL``: a project's SQLite store into an empty PostgreSQL store,
in one transaction, then verified row by row (DESIGN §12).

The target is migrated to the same schema version first and must hold no rows: a copy
never merges into a store other hosts already use. Tables are copied parents first (by
their foreign keys) and each in SQLite's rowid order, so PostgreSQL's stand-in ``rowid``
keeps the order ties are broken by. Identity sequences are moved past the copied ids.
Afterwards every row of every table is read back from both stores and compared; any
difference rolls nothing back (the copy is committed) but is reported and exits 1, so a
copy that is not exact is never taken for one.
"""

from __future__ import annotations

from typing import Any

from axpipe.errors import ExitCode
from axpipe.records import record
from axpipe.store import Store, StoreError


@record
class TableCopy:
    table: str
    rows: int


def copy(source: Store, target: Store) -> list[TableCopy]:
    """Copy every table of ``source`` (SQLite) into ``target`` (PostgreSQL, empty)."""
    if source.dialect != "sqlite" or target.dialect != "postgresql":
        raise StoreError("store copy reads a SQLite store and writes a PostgreSQL one")
    if source.schema_version != target.schema_version:
        raise StoreError(f"the stores have schema versions {source.schema_version} and {target.schema_version}; "
                         "run `axpipe store migrate` with this axpipe on both first")
    tables = _parents_first(source)
    busy = [table for table in tables if target.connection.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone()]
    if busy:
        raise StoreError(f"the target store {target.display} already holds rows ({', '.join(busy)}); "
                         "copy into an empty database or schema, never over a store in use",
                         exit_code=ExitCode.INPUT_ERROR)
    copied = []
    with target.transaction() as db:
        for table in tables:
            columns = _columns(source, table)
            rows = [tuple(row) for row in source.connection.execute(
                f"SELECT {', '.join(columns)} FROM {table} ORDER BY rowid")]
            if rows:
                try:
                    db.executemany(f"INSERT INTO {table} ({', '.join(columns)}) "
                                   f"VALUES ({', '.join('?' for _ in columns)})", rows)
                except UnicodeEncodeError as error:
                    raise StoreError(f"table {table} holds a name that is not UTF-8 ({error.object[:60]!r}...); "
                                     "PostgreSQL text cannot keep it: nothing was copied") from error
            copied.append(TableCopy(table, len(rows)))
            if "id" in columns and _is_identity(db, table):
                db.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                           f"COALESCE((SELECT MAX(id) FROM {table}), 0) + 1, false)")
    return copied


def differences(source: Store, target: Store) -> list[str]:
    """Every table whose rows differ between the stores, with the first differing row."""
    found = []
    for table in _parents_first(source):
        columns = _columns(source, table)
        select = f"SELECT {', '.join(columns)} FROM {table}"
        mine = sorted((_key(row) for row in source.connection.execute(select)), key=repr)
        theirs = sorted((_key(row) for row in target.connection.execute(select)), key=repr)
        if mine != theirs:
            first = next((a for a, b in zip(mine, theirs, strict=False) if a != b), None)
            found.append(f"{table}: {len(mine)} row(s) in the SQLite store, {len(theirs)} in PostgreSQL"
                         + (f"; first differing row {first!r}" if first is not None else ""))
    return found


def _key(row: Any) -> tuple[Any, ...]:
    # SQLite hands back 300 for a REAL column declared with an integer default; compare as numbers.
    return tuple(float(value) if isinstance(value, int | float) and not isinstance(value, bool) else value
                 for value in row)


def _columns(store: Store, table: str) -> list[str]:
    return [row[1] for row in store.connection.execute(f"PRAGMA table_info({table})")]


def _parents_first(store: Store) -> list[str]:
    tables = [row[0] for row in store.connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    parents = {table: {row[2] for row in store.connection.execute(f"PRAGMA foreign_key_list({table})")}
               for table in tables}
    ordered: list[str] = []
    while len(ordered) < len(tables):
        ready = [table for table in tables if table not in ordered and parents[table] <= set(ordered)]
        if not ready:
            circle = sorted(set(tables) - set(ordered))
            raise StoreError(f"the store's tables refer to each other in a circle: {circle}")
        ordered.extend(ready)
    return ordered


def _is_identity(db: Any, table: str) -> bool:
    return bool(db.execute("SELECT pg_get_serial_sequence(?, 'id') IS NOT NULL", (table,)).fetchone()[0])
