"""Where a project's store is: ``AXPIPE_STORE_URL``, else ``store.url`` in ``axpipe.yaml``
(a PostgreSQL database several hosts share), else the SQLite file ``.axpipe/state.db``."""

from __future__ import annotations

import os
from pathlib import Path

from axpipe import workspace
from axpipe.errors import ConfigError, Problem
from axpipe.store import Store, postgres

ENV = "AXPIPE_STORE_URL"


def store_url(root: Path) -> str | None:
    """The PostgreSQL URL the project's store lives at, or None for its SQLite file."""
    url = os.environ.get(ENV, "").strip()
    if url:
        if not postgres.is_url(url):
            raise ConfigError([Problem(ENV, f"expected a postgresql:// URL, got {postgres.redact(url)!r}")])
        return url
    return workspace.load_project(root).store_url


def location(root: Path) -> Path | str:
    """What :class:`Store` opens for the project at ``root``."""
    return store_url(root) or workspace.store_path(root)


def exists(root: Path) -> bool:
    """Is there a store to read (a PostgreSQL store always is; a SQLite one once written)?"""
    where = location(root)
    return isinstance(where, str) or where.is_file()


def open_store(root: Path) -> Store:
    return Store(location(root))


def existing_store(root: Path) -> Store | None:
    """The project's store, or None when it has none yet (read commands create nothing)."""
    return open_store(root) if exists(root) else None
