-- Scheduled tasks, their runs, the runtime backends that fire them, and the requests
-- one-shot commands leave for a live backend (DESIGN §7, §13 "Schedules").
-- Times a person reads are ISO 8601 UTC text ('...Z', fixed width, so they compare as
-- text); liveness times (*_real) are Unix seconds of the real wall clock.

CREATE TABLE schedule_tasks (
    id                   TEXT PRIMARY KEY,
    title                TEXT NOT NULL DEFAULT '',
    kind                 TEXT NOT NULL,            -- at | daily | weekly | cron
    expression           TEXT NOT NULL,            -- ISO instant, HH:MM, DAY@HH:MM or 5 cron fields
    tz                   TEXT NOT NULL,            -- IANA zone the expression is read in
    recipe               TEXT NOT NULL,
    overrides            TEXT NOT NULL DEFAULT '[]',   -- JSON list of Hydra overrides
    catch_up             TEXT NOT NULL DEFAULT 'run_once',
    grace                REAL NOT NULL DEFAULT 300,
    max_run_duration     REAL NOT NULL DEFAULT 3600,
    source               TEXT NOT NULL,            -- 'schedule add' or 'recipe <name>'
    status               TEXT NOT NULL DEFAULT 'active',   -- active | paused | done
    status_reason        TEXT,
    next_run             TEXT,                     -- NULL when paused or done
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    backoff_until        TEXT,
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL
);
CREATE INDEX schedule_tasks_due ON schedule_tasks (status, next_run);

-- One row per occurrence (or per group of folded occurrences): nothing is dropped silently.
CREATE TABLE schedule_runs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id          TEXT NOT NULL REFERENCES schedule_tasks (id) ON DELETE CASCADE,
    scheduled_for    TEXT NOT NULL,      -- the earliest occurrence this row stands for
    last_scheduled   TEXT NOT NULL,      -- the latest one (equal unless folded > 1)
    folded           INTEGER NOT NULL DEFAULT 1,
    trigger          TEXT NOT NULL,      -- schedule | catch_up | manual
    status           TEXT NOT NULL,      -- queued | starting | running | succeeded | failed | skipped | cancelled
    reason           TEXT,
    recipe           TEXT NOT NULL,
    overrides        TEXT NOT NULL,
    max_run_duration REAL NOT NULL,
    queued_at        TEXT NOT NULL,
    started_at       TEXT,
    finished_at      TEXT,
    exit_code        INTEGER,
    backend          TEXT,               -- the backend that claimed, then the one that dispatched
    host             TEXT,
    dispatch_token   TEXT,
    dispatched_real  REAL,
    launcher_pid     INTEGER,
    heartbeat_real   REAL,
    run_dir          TEXT,
    log              TEXT
);
CREATE INDEX schedule_runs_task ON schedule_runs (task_id, id);
CREATE INDEX schedule_runs_open ON schedule_runs (status) WHERE status IN ('queued', 'starting', 'running');

CREATE TABLE runtime_backends (
    id                 TEXT PRIMARY KEY,
    pid                INTEGER NOT NULL,
    host               TEXT NOT NULL,
    root               TEXT NOT NULL,
    started_at         TEXT NOT NULL,
    heartbeat_real     REAL NOT NULL,
    sweep_interval     REAL NOT NULL,
    last_sweep_at      TEXT,
    last_sweep_seconds REAL,
    sweeps             INTEGER NOT NULL DEFAULT 0,
    claimed            INTEGER NOT NULL DEFAULT 0,
    testing            TEXT,
    stop_requested     TEXT
);

CREATE TABLE runtime_requests (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    action       TEXT NOT NULL,          -- pause | resume | delete | run
    task_id      TEXT NOT NULL,
    created_real REAL NOT NULL,
    claimed_by   TEXT,
    done_real    REAL,
    exit_code    INTEGER,                -- how the action ended, as the CLI would exit
    message      TEXT
);
CREATE INDEX runtime_requests_pending ON runtime_requests (done_real, id);
