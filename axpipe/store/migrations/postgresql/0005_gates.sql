-- PostgreSQL port of ../0005_gates.sql (see docs/store.md, 'Porting a migration').
-- Units of work, their verdicts and the bounce counter (DESIGN §8; docs/gates.md).
-- A unit is one pass of work → gate → verify → review → settle on a goal. Its starting
-- point is recorded before the agent runs, so a hard stop can quarantine exactly what the
-- unit changed and put the tree back as it was.
ALTER TABLE goals ADD COLUMN bounces BIGINT NOT NULL DEFAULT 0;  -- failed QA + rejected reviews since the last reset

CREATE TABLE units (
    rowid BIGINT GENERATED ALWAYS AS IDENTITY,
    goal_id     TEXT NOT NULL,
    number      BIGINT NOT NULL,             -- 1, 2, ... per goal: the <n> of `axpipe quarantine: <goal> unit <n>`
    session_id  TEXT NOT NULL,
    status      TEXT NOT NULL,                -- running, then how it ended: passed bounced blocked quarantined no-verdict ...
    reason      TEXT,
    start_head  TEXT,                         -- HEAD before the agent ran (NULL: no commit yet)
    start_ref   TEXT,                         -- the branch HEAD named (NULL: detached)
    start_tree  TEXT,                         -- tree id of the working tree before the agent ran (untracked files too)
    stash       TEXT,                         -- the quarantine stash commit, after a hard stop
    verdicts    TEXT NOT NULL DEFAULT '[]',   -- JSON list of {role, name, verdict, trace, reason}
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    PRIMARY KEY (goal_id, number)
)
