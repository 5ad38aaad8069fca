-- PostgreSQL port of ../0001_runs.sql (see docs/store.md, 'Porting a migration').
-- Every `axpipe run` job leaves one row, whatever its outcome.
CREATE TABLE runs (
    rowid BIGINT GENERATED ALWAYS AS IDENTITY,
    id          TEXT PRIMARY KEY,
    recipe      TEXT NOT NULL,
    workspace   TEXT NOT NULL,
    run_dir     TEXT NOT NULL,
    pid         BIGINT NOT NULL,
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    status      TEXT NOT NULL DEFAULT 'running',
    exit_code   BIGINT,
    summary     TEXT
);
CREATE INDEX runs_started_at ON runs (started_at);
