"""A real PostgreSQL for the store's tests: one throwaway cluster per test process, a fresh
schema per test.

``AXPIPE_TEST_PG_URL`` (what ``.ci/pg-throwaway.sh start`` prints; ``.ci/run`` exports it)
names a server to use. Without it, a cluster is started from Debian's binaries
(``/usr/lib/postgresql/*/bin``) in a folder under /tmp and destroyed at the end. When
there are no binaries the PostgreSQL tests are skipped with that reason, except under
``AXPIPE_REQUIRE_PG=1`` (set by ``.ci/run``), where they fail: CI never skips them.
"""

from __future__ import annotations

import glob
import os
import re
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / ".ci" / "pg-throwaway.sh"
# Read at import: the autouse environment fixture clears variables for each test.
SERVER_URL = os.environ.get("AXPIPE_TEST_PG_URL", "").strip()
REQUIRED = os.environ.get("AXPIPE_REQUIRE_PG") == "1"


def _unavailable(reason: str) -> None:
    if REQUIRED:
        pytest.fail(f"PostgreSQL is required here (AXPIPE_REQUIRE_PG=1) but {reason}", pytrace=False)
    pytest.skip(f"{reason}; install it (apt-get install postgresql) or start one with "
                f"`.ci/pg-throwaway.sh start` and export AXPIPE_TEST_PG_URL")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """The URL of a running PostgreSQL database the tests may create schemas in."""
    if SERVER_URL:
        yield SERVER_URL
        return
    if not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        _unavailable("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin")
    folder = f"/tmp/axpipe-pg-{os.getpid()}"  # short: the server's socket lives in it
    started = subprocess.run(["bash", str(SCRIPT), "start", folder], capture_output=True, text=True, check=False)
    match = re.search(r"^AXPIPE_TEST_PG_URL=(\S+)$", started.stdout, re.M)
    if started.returncode != 0 or match is None:
        pytest.fail(f"could not start a throwaway PostgreSQL in {folder}: {started.stderr.strip()}", pytrace=False)
    try:
        yield match.group(1)
    finally:
        subprocess.run(["bash", str(SCRIPT), "destroy", folder], capture_output=True, check=False)


@pytest.fixture
def pg_url(pg_server: str) -> Iterator[str]:
    """A URL whose connections land in a new, empty schema of their own (dropped afterwards)."""
    import psycopg

    schema = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in pg_server else "?"
    yield f"{pg_server}{separator}options={quote(f'-csearch_path={schema}')}"
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgresql"])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """Where a contract test's store lives: once a SQLite file, once a PostgreSQL schema."""
    if request.param == "sqlite":
        return tmp_path / "state.db"
    return str(request.getfixturevalue("pg_url"))
