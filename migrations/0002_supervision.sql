-- tugcode:foreign_keys=off
-- Schema 2 (docs/state.md §3.11, §3.8): the `needs_human` step status and the columns of the review gate and of
-- `**Touches:**`. SQLite cannot change a CHECK in place: the steps table is rebuilt (the documented
-- create-copy-drop-rename procedure) with foreign keys off, checked by PRAGMA foreign_key_check after it.
CREATE TABLE steps_v2 (
  plan_path        TEXT NOT NULL REFERENCES plans(plan_path),
  anchor           TEXT NOT NULL,
  parent_anchor    TEXT,                                -- NULL for top-level steps
  top_anchor       TEXT NOT NULL,                       -- the top-level ancestor (itself for top-level steps)
  step_id          TEXT NOT NULL,                       -- the label after "Step": 1, 2.1, PRE-6
  step_index       INTEGER NOT NULL,                    -- interleaved declaration order
  depth            INTEGER NOT NULL DEFAULT 0,          -- 0 for top-level steps
  title            TEXT NOT NULL,
  status           TEXT NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'claimed', 'in_progress', 'completed', 'failed', 'needs_human')),
  claimed_by       TEXT,                                -- canonical worktree path
  claimed_at       TEXT,
  lease_expires_at TEXT,
  heartbeat_at     TEXT,
  started_at       TEXT,
  completed_at     TEXT,
  commit_hash      TEXT,
  complete_reason  TEXT,
  attempt          INTEGER NOT NULL DEFAULT 0,          -- fencing token
  failures         INTEGER NOT NULL DEFAULT 0,          -- attempts given up
  previous_owner   TEXT,
  fail_reason      TEXT,
  completed_via    TEXT CHECK (completed_via IS NULL OR completed_via IN ('complete', 'force', 'reconcile')),
  commit_message   TEXT,
  unmet_deps       INTEGER NOT NULL DEFAULT 0,          -- lifted dependencies not completed (top-level rows)
  review_commit    TEXT,                                -- needs_human / approved: the kept commit (docs/state.md §3.11)
  human_decision   TEXT CHECK (human_decision IS NULL OR human_decision = 'approved'),
  human_notes      TEXT,                                -- decide --revise: joins the next brief
  touches          TEXT,                                -- JSON array of the step's **Touches:** globs, or NULL
  PRIMARY KEY (plan_path, anchor),
  FOREIGN KEY (plan_path, parent_anchor) REFERENCES steps(plan_path, anchor),
  CHECK ((status = 'completed') = (completed_via IS NOT NULL)),
  CHECK (parent_anchor IS NULL OR (
    status IN ('pending', 'in_progress', 'completed') AND claimed_by IS NULL AND claimed_at IS NULL
    AND lease_expires_at IS NULL AND heartbeat_at IS NULL AND attempt = 0 AND failures = 0)),
  CHECK (parent_anchor IS NOT NULL OR status NOT IN ('claimed', 'in_progress')
    OR (claimed_by IS NOT NULL AND lease_expires_at IS NOT NULL))
);

INSERT INTO steps_v2 (plan_path, anchor, parent_anchor, top_anchor, step_id, step_index, depth, title, status, claimed_by, claimed_at, lease_expires_at, heartbeat_at, started_at, completed_at, commit_hash, complete_reason, attempt, failures, previous_owner, fail_reason, completed_via, commit_message, unmet_deps)
  SELECT plan_path, anchor, parent_anchor, top_anchor, step_id, step_index, depth, title, status, claimed_by, claimed_at, lease_expires_at, heartbeat_at, started_at, completed_at, commit_hash, complete_reason, attempt, failures, previous_owner, fail_reason, completed_via, commit_message, unmet_deps FROM steps;

DROP TABLE steps;
ALTER TABLE steps_v2 RENAME TO steps;
-- Readiness is one indexed lookup: pending top-level steps with no unmet lifted dependency, by step_index.
CREATE INDEX idx_steps_ready ON steps(plan_path, status, unmet_deps, step_index) WHERE parent_anchor IS NULL;
CREATE INDEX idx_steps_parent ON steps(plan_path, parent_anchor);
CREATE INDEX idx_steps_top ON steps(plan_path, top_anchor, step_index);
CREATE INDEX idx_steps_lease ON steps(plan_path, status, lease_expires_at);
