-- PostgreSQL port of ../0002_goals.sql (see docs/store.md, 'Porting a migration').
-- Goals, their frozen contracts, sessions, receipts and the files agents edited.
CREATE TABLE goals (
    rowid BIGINT GENERATED ALWAYS AS IDENTITY,
    id              TEXT PRIMARY KEY,
    recipe          TEXT NOT NULL,
    overrides       TEXT NOT NULL DEFAULT '[]',   -- JSON list of the run's Hydra overrides
    variables       TEXT NOT NULL DEFAULT '{}',   -- JSON: the recipe's variables (batch=...)
    objective       TEXT NOT NULL,
    assured         BIGINT NOT NULL,
    status          TEXT NOT NULL,                -- planning active complete blocked budget_limited paused
    status_reason   TEXT,
    blocked         TEXT,                         -- JSON {kind, reason, external_change, evidence, no_independent_work}
    contract_digest TEXT,
    baseline        TEXT,
    workspace       TEXT NOT NULL,
    plan            TEXT NOT NULL,                -- JSON: the checks to run (the contract's, or an unassured goal's plan)
    budget          TEXT NOT NULL DEFAULT '{}',   -- JSON: the limits of the latest run (tokens, time, steps, no_progress_limit)
    tokens_used     BIGINT NOT NULL DEFAULT 0,
    time_used       DOUBLE PRECISION NOT NULL DEFAULT 0,
    steps_used      BIGINT NOT NULL DEFAULT 0,
    no_progress     BIGINT NOT NULL DEFAULT 0,   -- consecutive ticks without new passing evidence
    guidance_given  BIGINT NOT NULL DEFAULT 0,
    wrap_up_done    BIGINT NOT NULL DEFAULT 0,
    bad_success     BIGINT NOT NULL DEFAULT 0,
    last_edit_at    TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);

CREATE TABLE contracts (
    rowid BIGINT GENERATED ALWAYS AS IDENTITY,
    digest      TEXT PRIMARY KEY,
    goal_id     TEXT NOT NULL,
    canonical   TEXT NOT NULL,                    -- the canonical JSON the digest is taken over
    revises     TEXT,                             -- digest of the contract this one replaces
    correction  TEXT,                             -- the correction that made this revision
    created_at  TEXT NOT NULL
);
CREATE INDEX contracts_goal ON contracts (goal_id);

CREATE TABLE sessions (
    rowid BIGINT GENERATED ALWAYS AS IDENTITY,
    id              TEXT PRIMARY KEY,
    goal_id         TEXT NOT NULL,
    contract_digest TEXT,
    workspace       TEXT NOT NULL,
    forked_from     TEXT,
    started_at      TEXT NOT NULL
);
CREATE INDEX sessions_goal ON sessions (goal_id, started_at);

CREATE TABLE receipts (
    rowid BIGINT GENERATED ALWAYS AS IDENTITY,
    id                 TEXT PRIMARY KEY,
    goal_id            TEXT NOT NULL,
    session_id         TEXT NOT NULL,
    workspace          TEXT NOT NULL,
    contract_digest    TEXT,
    check_id           TEXT NOT NULL,
    held_out           BIGINT NOT NULL DEFAULT 0,
    fingerprint        TEXT,                      -- NULL when the tree gave no fresh evidence
    fingerprint_reason TEXT,                      -- why there is no fresh evidence
    command            TEXT NOT NULL,
    exit_code          BIGINT,
    status             TEXT NOT NULL,             -- running passed failed error
    summary            TEXT,
    started_at         TEXT NOT NULL,
    finished_at        TEXT,
    output_tail        TEXT NOT NULL DEFAULT '',
    artifacts          TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX receipts_latest ON receipts (goal_id, check_id, started_at);

CREATE TABLE edited_files (
    rowid BIGINT GENERATED ALWAYS AS IDENTITY,
    goal_id   TEXT NOT NULL,
    path      TEXT NOT NULL,
    edited_at TEXT NOT NULL,
    PRIMARY KEY (goal_id, path)
);
