/**
 * SQL of `state export` / `state import` (docs/state.md §8): every row of one plan, whole, in both
 * directions. Child rows are written without their plan_path column (it is the document's) and without
 * surrogate ids (the importing store assigns its own, in document order).
 */
import type { Conn } from '../sql/conn.js';
import type { EventRow, ItemRow, RefactorRow, StepRow, ArtifactRow, PlanRow, UsageRow } from '../types.js';

export type FullPlanRow = PlanRow & {
  plan_source: Uint8Array;
  /** Absent when read from a store older than the recorded target (docs/state.md §8.4). */
  integration_kind?: 'local' | 'remote' | null;
  integration_where?: string | null;
  /** Absent when read from a store older than the last run's flags (docs/state.md §2); never exported. */
  last_run_flags?: string | null;
  last_run_ended_at?: string | null;
};

export interface PlanRows {
  plan: FullPlanRow;
  steps: StepRow[];
  step_deps: { step_anchor: string; depends_on: string }[];
  step_lifted_deps: { step_anchor: string; depends_on: string }[];
  checklist_items: ItemRow[];
  step_artifacts: ArtifactRow[];
  step_refactors: RefactorRow[];
  step_usage: UsageRow[];
  events: EventRow[];
}

/**
 * Every row of a plan, or null when it has no plans row. Run it inside one read transaction. `ledger`: the
 * store has the `step_usage` table (a reader of an older store does not migrate it).
 */
export async function readPlanRows(c: Conn, plan_path: string, ledger = true): Promise<PlanRows | null> {
  const plan = await c.get<FullPlanRow>('SELECT * FROM plans WHERE plan_path = ?', [plan_path]);
  if (!plan) return null;
  const p = [plan_path];
  const edges = (t: string) =>
    c.all<{ step_anchor: string; depends_on: string }>(
      `SELECT step_anchor, depends_on FROM ${t} WHERE plan_path = ? ORDER BY step_anchor, depends_on`,
      p,
    );
  return {
    plan,
    steps: await c.all<StepRow>('SELECT * FROM steps WHERE plan_path = ? ORDER BY step_index, anchor', p),
    step_deps: await edges('step_deps'),
    step_lifted_deps: await edges('step_lifted_deps'),
    checklist_items: await c.all<ItemRow>('SELECT * FROM checklist_items WHERE plan_path = ? ORDER BY id', p),
    step_artifacts: await c.all<ArtifactRow>('SELECT * FROM step_artifacts WHERE plan_path = ? ORDER BY id', p),
    step_refactors: await c.all<RefactorRow>(
      'SELECT * FROM step_refactors WHERE plan_path = ? ORDER BY step_anchor, ordinal',
      p,
    ),
    step_usage: ledger
      ? (await c.all<UsageRow>('SELECT * FROM step_usage WHERE plan_path = ? ORDER BY id', p)).map(usageRow)
      : [],
    events: await c.all<EventRow>('SELECT * FROM events WHERE plan_path = ? ORDER BY id', p),
  };
}

/** A ledger row with its numbers as numbers (PostgreSQL returns BIGINT as text). */
function usageRow(u: UsageRow): UsageRow {
  const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    ...u,
    input_tokens: n(u.input_tokens),
    output_tokens: n(u.output_tokens),
    cache_read_tokens: n(u.cache_read_tokens),
    cache_write_tokens: n(u.cache_write_tokens),
    cost_usd: n(u.cost_usd),
  };
}

/** How many rows the plan has here: its plans row, its steps and its events (refusal of `state import`). */
export async function planFootprint(
  c: Conn,
  plan_path: string,
): Promise<{ plan: boolean; steps: number; events: number }> {
  const n = async (sql: string) => Number((await c.get<{ n: number | string }>(sql, [plan_path]))!.n);
  return {
    plan: (await n('SELECT COUNT(*) AS n FROM plans WHERE plan_path = ?')) > 0,
    steps: await n('SELECT COUNT(*) AS n FROM steps WHERE plan_path = ?'),
    events: await n('SELECT COUNT(*) AS n FROM events WHERE plan_path = ?'),
  };
}

/** Inserts every row of a plan (the caller's transaction; steps must come parents first). */
export async function insertPlanRows(c: Conn, r: PlanRows): Promise<void> {
  const plan_path = r.plan.plan_path;
  await c.run(
    `INSERT INTO plans (plan_path, plan_hash, plan_source, structure_hash, phase_title, status, implicit_sequential,
       steps_total, steps_completed, created_at, updated_at, integration_kind, integration_where)
     VALUES (@plan_path, @plan_hash, @plan_source, @structure_hash, @phase_title, @status, @implicit_sequential,
       @steps_total, @steps_completed, @created_at, @updated_at, @integration_kind, @integration_where)`,
    {
      ...r.plan,
      integration_kind: r.plan.integration_kind ?? null,
      integration_where: r.plan.integration_where ?? null,
    },
  );
  for (const s of r.steps) {
    await c.run(
      `INSERT INTO steps (plan_path, anchor, parent_anchor, top_anchor, step_id, step_index, depth, title, status,
         claimed_by, claimed_at, lease_expires_at, heartbeat_at, started_at, completed_at, commit_hash, complete_reason,
         attempt, failures, previous_owner, fail_reason, completed_via, commit_message, unmet_deps,
         review_commit, human_decision, human_notes, touches)
       VALUES (@plan_path, @anchor, @parent_anchor, @top_anchor, @step_id, @step_index, @depth, @title, @status,
         @claimed_by, @claimed_at, @lease_expires_at, @heartbeat_at, @started_at, @completed_at, @commit_hash,
         @complete_reason, @attempt, @failures, @previous_owner, @fail_reason, @completed_via, @commit_message, @unmet_deps,
         @review_commit, @human_decision, @human_notes, @touches)`,
      { ...s, plan_path },
    );
  }
  for (const [t, edges] of [
    ['step_deps', r.step_deps],
    ['step_lifted_deps', r.step_lifted_deps],
  ] as const) {
    for (const e of edges)
      await c.run(`INSERT INTO ${t} (plan_path, step_anchor, depends_on) VALUES (?, ?, ?)`, [
        plan_path,
        e.step_anchor,
        e.depends_on,
      ]);
  }
  for (const i of r.checklist_items) {
    await c.run(
      `INSERT INTO checklist_items (plan_path, step_anchor, kind, ordinal, depth, text, status, reason, updated_at)
       VALUES (@plan_path, @step_anchor, @kind, @ordinal, @depth, @text, @status, @reason, @updated_at)`,
      { ...i, plan_path },
    );
  }
  for (const a of r.step_artifacts) {
    await c.run(
      `INSERT INTO step_artifacts (plan_path, step_anchor, kind, summary, content, recorded_at)
       VALUES (@plan_path, @step_anchor, @kind, @summary, @content, @recorded_at)`,
      { ...a, plan_path },
    );
  }
  for (const f of r.step_refactors) {
    await c.run(
      `INSERT INTO step_refactors (plan_path, step_anchor, ordinal, op_text, status, snapshot_before, snapshot_after,
         exit_code, result_json, updated_at)
       VALUES (@plan_path, @step_anchor, @ordinal, @op_text, @status, @snapshot_before, @snapshot_after, @exit_code,
         @result_json, @updated_at)`,
      { ...f, plan_path },
    );
  }
  for (const u of r.step_usage) {
    await c.run(
      `INSERT INTO step_usage (plan_path, step_anchor, attempt, role, input_tokens, output_tokens, cache_read_tokens,
         cache_write_tokens, cost_usd, recorded_at)
       VALUES (@plan_path, @step_anchor, @attempt, @role, @input_tokens, @output_tokens, @cache_read_tokens,
         @cache_write_tokens, @cost_usd, @recorded_at)`,
      { ...u, plan_path },
    );
  }
  for (const e of r.events) {
    await c.run(
      `INSERT INTO events (at, plan_path, step_anchor, command, actor, attempt, details_json)
       VALUES (@at, @plan_path, @step_anchor, @command, @actor, @attempt, @details_json)`,
      { ...e, plan_path },
    );
  }
}
