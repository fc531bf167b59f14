-- tugcode state schema: the ledger (docs/state.md §2): what each agent run of an attempt used.
-- One row per run that reported usage (an implementer, reviewer or resolver run), recorded by its step's
-- owner under the claim, like an artifact. Token counts and cost are null when the run did not say.

CREATE TABLE step_usage (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  plan_path          TEXT NOT NULL,
  step_anchor        TEXT NOT NULL,                    -- the (sub)step the run worked on
  attempt            INTEGER NOT NULL,                 -- the top-level step's attempt (fencing token)
  role               TEXT NOT NULL CHECK (role IN ('implementer', 'reviewer', 'resolver')),
  input_tokens       INTEGER CHECK (input_tokens IS NULL OR input_tokens >= 0),
  output_tokens      INTEGER CHECK (output_tokens IS NULL OR output_tokens >= 0),
  cache_read_tokens  INTEGER CHECK (cache_read_tokens IS NULL OR cache_read_tokens >= 0),
  cache_write_tokens INTEGER CHECK (cache_write_tokens IS NULL OR cache_write_tokens >= 0),
  cost_usd           REAL CHECK (cost_usd IS NULL OR cost_usd >= 0),
  recorded_at        TEXT NOT NULL,
  FOREIGN KEY (plan_path, step_anchor) REFERENCES steps(plan_path, anchor)
);
CREATE INDEX idx_usage_step ON step_usage(plan_path, step_anchor);
