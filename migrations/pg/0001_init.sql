-- tugcode state schema on PostgreSQL, version 1 (02-state.md §8): the same tables, columns, checks and
-- indexes as migrations/0001_init.sql, in PostgreSQL's types. Applied by src/state/sql/postgres.ts inside one
-- transaction under an advisory lock, in the project's own schema (search_path), which also holds
-- schema_version. Text compares bytewise (COLLATE "C"), as on SQLite, so timestamps and anchors order alike;
-- foreign keys are deferrable so `state init --force` can check them at commit, as SQLite's
-- defer_foreign_keys does.

CREATE TABLE plans (
  plan_path           TEXT COLLATE "C" PRIMARY KEY,                 -- repo-relative, e.g. .tugtool/tugplan-foo.md
  plan_hash           TEXT COLLATE "C" NOT NULL,                    -- SHA-256 of the file bytes
  plan_source         BYTEA NOT NULL,                    -- the file bytes themselves (drift: unchanged bytes need no hash)
  structure_hash      TEXT COLLATE "C" NOT NULL,                    -- SHA-256 of the canonical structure (01-plan-format.md §2)
  phase_title         TEXT COLLATE "C",
  status              TEXT COLLATE "C" NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'done', 'archived')),
  implicit_sequential INTEGER NOT NULL DEFAULT 0 CHECK (implicit_sequential IN (0, 1)),
  steps_total         INTEGER NOT NULL DEFAULT 0,       -- top-level steps
  steps_completed     INTEGER NOT NULL DEFAULT 0,       -- top-level steps completed (kept by every completing transaction)
  created_at          TEXT COLLATE "C" NOT NULL,
  updated_at          TEXT COLLATE "C" NOT NULL
);

-- One row per step and per substep (any depth). Claim columns live on top-level rows only.
CREATE TABLE steps (
  plan_path        TEXT COLLATE "C" NOT NULL REFERENCES plans(plan_path) DEFERRABLE INITIALLY IMMEDIATE,
  anchor           TEXT COLLATE "C" NOT NULL,
  parent_anchor    TEXT COLLATE "C",                                -- NULL for top-level steps
  top_anchor       TEXT COLLATE "C" NOT NULL,                       -- the top-level ancestor (itself for top-level steps)
  step_id          TEXT COLLATE "C" NOT NULL,                       -- the label after "Step": 1, 2.1, PRE-6
  step_index       INTEGER NOT NULL,                    -- interleaved declaration order
  depth            INTEGER NOT NULL DEFAULT 0,          -- 0 for top-level steps
  title            TEXT COLLATE "C" NOT NULL,
  status           TEXT COLLATE "C" NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'claimed', 'in_progress', 'completed', 'failed')),
  claimed_by       TEXT COLLATE "C",                                -- canonical worktree path
  claimed_at       TEXT COLLATE "C",
  lease_expires_at TEXT COLLATE "C",
  heartbeat_at     TEXT COLLATE "C",
  started_at       TEXT COLLATE "C",
  completed_at     TEXT COLLATE "C",
  commit_hash      TEXT COLLATE "C",
  complete_reason  TEXT COLLATE "C",
  attempt          INTEGER NOT NULL DEFAULT 0,          -- fencing token
  failures         INTEGER NOT NULL DEFAULT 0,          -- attempts given up
  previous_owner   TEXT COLLATE "C",
  fail_reason      TEXT COLLATE "C",
  completed_via    TEXT COLLATE "C" CHECK (completed_via IS NULL OR completed_via IN ('complete', 'force', 'reconcile')),
  commit_message   TEXT COLLATE "C",
  unmet_deps       INTEGER NOT NULL DEFAULT 0,          -- lifted dependencies not completed (top-level rows)
  PRIMARY KEY (plan_path, anchor),
  FOREIGN KEY (plan_path, parent_anchor) REFERENCES steps(plan_path, anchor) DEFERRABLE INITIALLY IMMEDIATE,
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
  plan_path   TEXT COLLATE "C" NOT NULL,
  step_anchor TEXT COLLATE "C" NOT NULL,
  depends_on  TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (plan_path, step_anchor, depends_on),
  FOREIGN KEY (plan_path, step_anchor) REFERENCES steps(plan_path, anchor) DEFERRABLE INITIALLY IMMEDIATE,
  FOREIGN KEY (plan_path, depends_on) REFERENCES steps(plan_path, anchor) DEFERRABLE INITIALLY IMMEDIATE
);
CREATE INDEX idx_step_deps_target ON step_deps(plan_path, depends_on, step_anchor);

-- Lifted dependencies of the claim units (02-state.md §3): top-level step → top-level step.
CREATE TABLE step_lifted_deps (
  plan_path   TEXT COLLATE "C" NOT NULL,
  step_anchor TEXT COLLATE "C" NOT NULL,
  depends_on  TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (plan_path, step_anchor, depends_on),
  FOREIGN KEY (plan_path, step_anchor) REFERENCES steps(plan_path, anchor) DEFERRABLE INITIALLY IMMEDIATE,
  FOREIGN KEY (plan_path, depends_on) REFERENCES steps(plan_path, anchor) DEFERRABLE INITIALLY IMMEDIATE
);
CREATE INDEX idx_step_lifted_deps_target ON step_lifted_deps(plan_path, depends_on, step_anchor);

CREATE TABLE checklist_items (
  id          INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  plan_path   TEXT COLLATE "C" NOT NULL,
  step_anchor TEXT COLLATE "C" NOT NULL,
  kind        TEXT COLLATE "C" NOT NULL CHECK (kind IN ('task', 'test', 'checkpoint')),
  ordinal     INTEGER NOT NULL,                        -- 0-based within (step, kind)
  depth       INTEGER NOT NULL DEFAULT 0,              -- list nesting depth, for display
  text        TEXT COLLATE "C" NOT NULL,
  status      TEXT COLLATE "C" NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'in_progress', 'completed', 'deferred')),
  reason      TEXT COLLATE "C",                                    -- required for deferred
  updated_at  TEXT COLLATE "C",
  FOREIGN KEY (plan_path, step_anchor) REFERENCES steps(plan_path, anchor) DEFERRABLE INITIALLY IMMEDIATE,
  CHECK (status <> 'deferred' OR (reason IS NOT NULL AND reason <> ''))
);
CREATE UNIQUE INDEX idx_checklist_step ON checklist_items(plan_path, step_anchor, kind, ordinal);

CREATE TABLE step_artifacts (
  id          INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  plan_path   TEXT COLLATE "C" NOT NULL,
  step_anchor TEXT COLLATE "C" NOT NULL,
  kind        TEXT COLLATE "C" NOT NULL,
  summary     TEXT COLLATE "C" NOT NULL,                           -- at most 500 code points
  content     TEXT COLLATE "C",                                    -- at most 64 KiB (code points)
  recorded_at TEXT COLLATE "C" NOT NULL,
  FOREIGN KEY (plan_path, step_anchor) REFERENCES steps(plan_path, anchor) DEFERRABLE INITIALLY IMMEDIATE
);
CREATE INDEX idx_artifacts_step ON step_artifacts(plan_path, step_anchor);

-- Refactor operations declared in a step (05-kernel.md §7.2).
CREATE TABLE step_refactors (
  plan_path       TEXT COLLATE "C" NOT NULL,
  step_anchor     TEXT COLLATE "C" NOT NULL,
  ordinal         INTEGER NOT NULL,                    -- 0-based, document order
  op_text         TEXT COLLATE "C" NOT NULL,
  status          TEXT COLLATE "C" NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'applied', 'failed', 'skipped')),
  snapshot_before TEXT COLLATE "C",
  snapshot_after  TEXT COLLATE "C",
  exit_code       INTEGER,
  result_json     TEXT COLLATE "C",
  updated_at      TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (plan_path, step_anchor, ordinal),
  FOREIGN KEY (plan_path, step_anchor) REFERENCES steps(plan_path, anchor) DEFERRABLE INITIALLY IMMEDIATE
);

-- Append-only audit trail: one event per state change, appended last in its transaction.
CREATE TABLE events (
  id           INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  at           TEXT COLLATE "C" NOT NULL,
  plan_path    TEXT COLLATE "C",                                   -- NULL for events about no single plan (state prune --purge)
  step_anchor  TEXT COLLATE "C",
  command      TEXT COLLATE "C" NOT NULL,                          -- CLI name (state claim, run, …) or a secondary change (takeover, …)
  actor        TEXT COLLATE "C" NOT NULL,                          -- canonical worktree path, or admin
  attempt      INTEGER,
  details_json TEXT COLLATE "C" NOT NULL DEFAULT '{}'
);
CREATE INDEX idx_events_plan ON events(plan_path, id);
CREATE INDEX idx_events_step ON events(plan_path, step_anchor, actor);
