-- PostgreSQL port of ../0007_agents.sql (see docs/store.md, 'Porting a migration').
-- Agents for real (DESIGN §18, docs/agents.md): cost budgets, usage-limit resets, pacing.
ALTER TABLE goals ADD COLUMN cost_used DOUBLE PRECISION NOT NULL DEFAULT 0;  -- USD the agents reported
ALTER TABLE goals ADD COLUMN unpriced_turns BIGINT NOT NULL DEFAULT 0;    -- turns whose agent reported no cost
ALTER TABLE goals ADD COLUMN resumes_at TEXT;                             -- a usage limit's reset (ISO UTC), while paused by it

-- One row per paced agent (agent.pacing): when its next unit may start. A unit takes the
-- slot in one transaction, so every run, loop and backend sharing the store is spaced.
CREATE TABLE agent_pacing (
    rowid         BIGINT GENERATED ALWAYS AS IDENTITY,
    key           TEXT PRIMARY KEY,            -- the agent kind and model (agent.pacing.key)
    next_request  DOUBLE PRECISION NOT NULL DEFAULT 0,     -- epoch seconds: requests_per_minute's next slot
    next_tokens   DOUBLE PRECISION NOT NULL DEFAULT 0,     -- epoch seconds: when the tokens used so far are paid back
    last_started  DOUBLE PRECISION NOT NULL DEFAULT 0,     -- epoch seconds of the last unit's agent.started event
    updated_at    TEXT NOT NULL
)
