-- tugcode state schema on PostgreSQL, version 5: the same columns as migrations/0005_last_run.sql
-- (docs/state.md §2): the flags of the plan's last run that ended, and when; NULL until a run ends.
ALTER TABLE plans ADD COLUMN last_run_flags TEXT COLLATE "C";
ALTER TABLE plans ADD COLUMN last_run_ended_at TEXT COLLATE "C";
