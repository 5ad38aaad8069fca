-- PostgreSQL port of ../0006_faults.sql (see docs/store.md, 'Porting a migration').
-- Faults handled as faults (issue 25).
-- child_pid: the `axpipe run` a launcher started, so recovery can end it when the
-- launcher dies (its dispatch token, inherited by every process of the run, finds the rest).
-- receipts.pid: the process that runs a check, so a receipt left `running` by a process
-- that is gone (a write that failed on a full disk, a SIGKILL) is closed as an error.
ALTER TABLE schedule_runs ADD COLUMN child_pid BIGINT;
ALTER TABLE receipts ADD COLUMN pid BIGINT;
-- What a new run or receipt looks for to close (axpipe.store.faults.close_left_open).
CREATE INDEX runs_open ON runs (pid) WHERE finished_at IS NULL;
CREATE INDEX receipts_open ON receipts (pid) WHERE status = 'running';
