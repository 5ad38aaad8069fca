-- PostgreSQL port of ../0004_loops.sql (see docs/store.md, 'Porting a migration').
-- Loops (DESIGN §7): one row per loop a process has run. A loop lives only in the process
-- that runs it; this row is how other processes see it (`axpipe loop status`, `loop stop`)
-- and what is left of it afterwards. Liveness is the heartbeat (real Unix seconds) and, on
-- the same host, the pid.
-- Migration 0004 (merged before the gates branch, whose migration follows it).

CREATE TABLE loops (
    rowid BIGINT GENERATED ALWAYS AS IDENTITY,
    id               TEXT PRIMARY KEY,
    run_id           TEXT,                     -- the `axpipe run` carrying the loop (runs.id)
    workspace        TEXT NOT NULL,
    recipe           TEXT NOT NULL,
    goal_id          TEXT,                     -- NULL for a loop without a goal
    session_id       TEXT,
    interval         DOUBLE PRECISION NOT NULL,            -- seconds between ticks
    prompt           TEXT,
    command          TEXT,                     -- JSON: a string or a list
    max_runs         BIGINT NOT NULL,
    pid              BIGINT NOT NULL,
    host             TEXT NOT NULL,
    started_at       TEXT NOT NULL,
    heartbeat_real   DOUBLE PRECISION NOT NULL,
    status           TEXT NOT NULL DEFAULT 'running',   -- running | ended
    runs             BIGINT NOT NULL DEFAULT 0,        -- ticks that ran
    busy_skips       BIGINT NOT NULL DEFAULT 0,        -- ticks skipped: the previous one still ran
    tick             BIGINT,                  -- the tick in progress, NULL between ticks
    tick_started_at  TEXT,
    last_tick        BIGINT,
    last_status      TEXT,
    last_summary     TEXT,
    last_finished_at TEXT,
    next_tick_at     TEXT,
    stop_requested   TEXT,                     -- why someone asked the loop to stop
    stop_now         BIGINT NOT NULL DEFAULT 0,   -- 1: end the tick in progress too
    ended_at         TEXT,
    end_reason       TEXT,
    exit_code        BIGINT                   -- the code a tick ended it with, NULL when stopped or capped
);
CREATE INDEX loops_started ON loops (started_at);
