-- tugcode state schema, version 5 (docs/state.md §2, docs/run.md §1.2): the flags of the plan's last run
-- that ended (`last_run_flags`, a JSON array of the words src/run/run-flags.ts gives, secrets redacted) and
-- when it ended (`last_run_ended_at`), so a hint that runs the plan again after the run's lock is gone
-- repeats them. NULL: no run ended since the store gained the columns.
ALTER TABLE plans ADD COLUMN last_run_flags TEXT;
ALTER TABLE plans ADD COLUMN last_run_ended_at TEXT;
