"""``axpipe store migrate`` and ``axpipe store copy --to URL`` (docs/store.md)."""

from __future__ import annotations

import sys

from axpipe import workspace
from axpipe.errors import InputError
from axpipe.store import Store, copy, locate, migrations, postgres


def migrate() -> int:
    """Bring the project's store (SQLite file or PostgreSQL) to this axpipe's schema."""
    root = workspace.find_root()
    where = locate.location(root)
    if not isinstance(where, str):
        workspace.ensure_state_dir(root)
    with Store(where) as store:
        sys.stdout.write(f"store {store.display}: schema version {store.schema_version} "
                         f"(this axpipe knows {len(migrations())})\n")
    return 0


def copy_to(url: str) -> int:
    """Copy the project's SQLite store into the empty PostgreSQL store at ``url``, then
    compare every row; exit 1 when any differs."""
    if not postgres.is_url(url):
        raise InputError(f"--to: expected a postgresql:// URL, got {postgres.redact(url)!r}")
    root = workspace.find_root()
    path = workspace.store_path(root)
    if not path.is_file():
        raise InputError(f"store copy: no SQLite store at {path} to copy")
    with Store(path) as source, Store(url) as target:
        copied = copy.copy(source, target)
        for table in copied:
            sys.stdout.write(f"copied {table.rows:>7} row(s) of {table.table}\n")
        wrong = copy.differences(source, target)
        if wrong:
            sys.stderr.write("axpipe: error: the copy differs from the SQLite store:\n"
                             + "".join(f"  {line}\n" for line in wrong))
            return 1
        total = sum(table.rows for table in copied)
        sys.stdout.write(f"verified: all {total} row(s) of {len(copied)} table(s) read back equal from "
                         f"{target.display}\nSet store.url in axpipe.yaml (or AXPIPE_STORE_URL) to use it.\n")
    return 0
