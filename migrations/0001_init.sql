-- tugcode state schema, version 1 (02-state.md §2; seed 003 plus the additions listed there).
-- Applied by src/state/migrate.ts inside one IMMEDIATE transaction together with the version row.
-- Timestamps are fixed-width ISO 8601 UTC strings (YYYY-MM-DDTHH:MM:SS.mmmZ): string order = time order.

CREATE TABLE schema_version (
  version INTEGER NOT NULL
);

CREATE TABLE plans (
  plan_path           TEXT PRIMARY KEY,                 -- repo-relative, e.g. .tugtool/tugplan-foo.md
  plan_hash           TEXT NOT NULL,                    -- SHA-256 of the file bytes
  plan_source         BLOB NOT NULL,                    -- the file bytes themselves (drift: unchanged bytes need no hash)
  structure_hash      TEXT NOT NULL,                    -- SHA-256 of the canonical structure (01-plan-format.md §2)
  phase_title         TEXT,
  status              TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'done', 'archived')),
  implicit_sequential INTEGER NOT NULL DEFAULT 0 CHECK (implicit_sequential IN (0, 1)),
  steps_total         INTEGER NOT NULL DEFAULT 0,       -- top-level steps
  steps_completed     INTEGER NOT NULL DEFAULT 0,       -- top-level steps completed (kept by every completing transaction)
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL
);

-- One row per step and per substep (any depth). Claim columns live on top-level rows only.
CREATE TABLE steps (
  plan_path        TEXT NOT NULL REFERENCES plans(plan_path),
  anchor           TEXT NOT NULL,
  parent_anchor    TEXT,                                -- NULL for top-level steps
  top_anchor       TEXT NOT NULL,                       -- the top-level ancestor (itself for top-level steps)
  step_id          TEXT NOT NULL,                       -- the label after "Step": 1, 2.1, PRE-6
  step_index       INTEGER NOT NULL,                    -- interleaved declaration order
  depth            INTEGER NOT NULL DEFAULT 0,          -- 0 for top-level steps
  title            TEXT NOT NULL,
  status           TEXT NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'claimed', 'in_progress', 'completed', 'failed')),
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
  PRIMARY KEY (plan_path, anchor),
  FOREIGN KEY (plan_path, parent_anchor) REFERENCES steps(plan_path, anchor),
  CHECK ((status = 'completed') = (completed_via IS NOT NULL)),
  CHECK (parent_anchor IS NULL OR (
    status IN ('pending', 'in_progress', 'completed') AND claimed_by IS NULL AND claimed_at IS NULL
    AND lease_expires_at IS NULL AND heartbeat_at IS NULL AND attempt = 0 AND failures = 0)),
  CHECK (parent_anchor IS NOT NULL OR status NOT IN ('claimed', 'in_progress')
    OR (claimed_by IS NOT NULL AND lease_expires_at IS NOT NULL))
);

-- Readiness is one indexed lookup: pending top-level steps with no unmet lifted dependency, by step_index.
CREATE INDEX idx_steps_ready ON steps(plan_path, status, unmet_deps, step_index) WHERE parent_anchor IS NULL;
CREATE INDEX idx_steps_parent ON steps(plan_path, parent_anchor);
CREATE INDEX idx_steps_top ON steps(plan_path, top_anchor, step_index);
CREATE INDEX idx_steps_lease ON steps(plan_path, status, lease_expires_at);

-- Effective dependency edges of every step (declared, or implied by order): step_anchor depends on depends_on.
CREATE TABLE step_deps (
  plan_path   TEXT NOT NULL,
  step_anchor TEXT NOT NULL,
  depends_on  TEXT NOT NULL,
  PRIMARY KEY (plan_path, step_anchor, depends_on),
  FOREIGN KEY (plan_path, step_anchor) REFERENCES steps(plan_path, anchor),
  FOREIGN KEY (plan_path, depends_on) REFERENCES steps(plan_path, anchor)
);
CREATE INDEX idx_step_deps_target ON step_deps(plan_path, depends_on, step_anchor);

-- Lifted dependencies of the claim units (02-state.md §3): top-level step → top-level step.
CREATE TABLE step_lifted_deps (
  plan_path   TEXT NOT NULL,
  step_anchor TEXT NOT NULL,
  depends_on  TEXT NOT NULL,
  PRIMARY KEY (plan_path, step_anchor, depends_on),
  FOREIGN KEY (plan_path, step_anchor) REFERENCES steps(plan_path, anchor),
  FOREIGN KEY (plan_path, depends_on) REFERENCES steps(plan_path, anchor)
);
CREATE INDEX idx_step_lifted_deps_target ON step_lifted_deps(plan_path, depends_on, step_anchor);

CREATE TABLE checklist_items (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  plan_path   TEXT NOT NULL,
  step_anchor TEXT NOT NULL,
  kind        TEXT NOT NULL CHECK (kind IN ('task', 'test', 'checkpoint')),
  ordinal     INTEGER NOT NULL,                        -- 0-based within (step, kind)
  depth       INTEGER NOT NULL DEFAULT 0,              -- list nesting depth, for display
  text        TEXT NOT NULL,
  status      TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'in_progress', 'completed', 'deferred')),
  reason      TEXT,                                    -- required for deferred
  updated_at  TEXT,
  FOREIGN KEY (plan_path, step_anchor) REFERENCES steps(plan_path, anchor),
  CHECK (status <> 'deferred' OR (reason IS NOT NULL AND reason <> ''))
);
CREATE UNIQUE INDEX idx_checklist_step ON checklist_items(plan_path, step_anchor, kind, ordinal);

CREATE TABLE step_artifacts (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  plan_path   TEXT NOT NULL,
  step_anchor TEXT NOT NULL,
  kind        TEXT NOT NULL,
  summary     TEXT NOT NULL,                           -- at most 500 code points
  content     TEXT,                                    -- at most 64 KiB (code points)
  recorded_at TEXT NOT NULL,
  FOREIGN KEY (plan_path, step_anchor) REFERENCES steps(plan_path, anchor)
);
CREATE INDEX idx_artifacts_step ON step_artifacts(plan_path, step_anchor);

-- Refactor operations declared in a step (05-kernel.md §7.2).
CREATE TABLE step_refactors (
  plan_path       TEXT NOT NULL,
  step_anchor     TEXT NOT NULL,
  ordinal         INTEGER NOT NULL,                    -- 0-based, document order
  op_text         TEXT NOT NULL,
  status          TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'applied', 'failed', 'skipped')),
  snapshot_before TEXT,
  snapshot_after  TEXT,
  exit_code       INTEGER,
  result_json     TEXT,
  updated_at      TEXT NOT NULL,
  PRIMARY KEY (plan_path, step_anchor, ordinal),
  FOREIGN KEY (plan_path, step_anchor) REFERENCES steps(plan_path, anchor)
);

-- Append-only audit trail: one event per state change, appended last in its transaction.
CREATE TABLE events (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  at           TEXT NOT NULL,
  plan_path    TEXT,                                   -- NULL for events about no single plan (state prune --purge)
  step_anchor  TEXT,
  command      TEXT NOT NULL,                          -- CLI name (state claim, run, …) or a secondary change (takeover, …)
  actor        TEXT NOT NULL,                          -- canonical worktree path, or admin
  attempt      INTEGER,
  details_json TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX idx_events_plan ON events(plan_path, id);
CREATE INDEX idx_events_step ON events(plan_path, step_anchor, actor);
