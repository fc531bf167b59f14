/**
 * Drift detection (docs/state.md §3). The plan file is read before the transaction; inside it `checkDrift`
 * compares it with the plan stored at init (SQLite compares the bytes, PostgreSQL their SHA-256 with
 * `plan_hash`: no stored bytes cross the connection either way). The parser is loaded (dynamically: it pulls
 * in markdown-it) only when they differ. `checkDrift` decides: same bytes → nothing; same structure →
 * warning PlanProseChanged and the DB copies of the prose and bytes are refreshed; different structure →
 * PlanDrift; file gone → PlanNotFound.
 */
import { readFileSync } from 'node:fs';
import { TugError } from '../contract/errors.js';
import { liftedTouches } from '../plan/lift.js';
import type { ParsedPlan } from '../plan/types.js';
import type { StateContext } from './context.js';
import type { Conn } from './sql/conn.js';
import { sha256Hex } from '../util/hash.js';
import { planSourceIs, refreshPlanProse } from './queries/plans.js';
import { stepsOfPlan, touchesColumn, updateStepProse } from './queries/steps.js';
import { depsOfPlan } from './queries/deps.js';
import { itemsOfPlan, setItemProse } from './queries/items.js';
import { refactorsOfPlan } from './queries/refactors.js';
import type { PlanRow } from './types.js';

export interface PlanSnapshot {
  plan_path: string;
  abs_path: string;
  /** The file's bytes, or null when it does not exist. */
  bytes: Buffer | null;
  /** Present on the second try, after the transaction found the file differs from the stored plan. */
  parsed?: ParsedPlan;
}

/** Thrown inside a transaction when the file differs from the stored plan and the snapshot has no parse. */
class NeedsParse extends Error {}

export async function parseSource(bytes: Uint8Array): Promise<ParsedPlan> {
  const { parsePlan } = await import('../plan/parse.js');
  return parsePlan(bytes);
}

/** The file's bytes; parsed only with `parse`. */
async function readPlanSnapshot(plan_path: string, abs_path: string, o: { parse: boolean }): Promise<PlanSnapshot> {
  let bytes: Buffer;
  try {
    bytes = readFileSync(abs_path);
  } catch {
    return { plan_path, abs_path, bytes: null };
  }
  const snap: PlanSnapshot = { plan_path, abs_path, bytes };
  if (o.parse) snap.parsed = await parseSource(bytes);
  return snap;
}

/**
 * Runs `fn` with a snapshot of the file taken on the bet that it is the plan as stored (the usual case: the
 * transaction compares its hash with the row it reads, and no parse is needed); when the transaction finds
 * otherwise it throws NeedsParse, and `fn` runs once more with the file parsed outside the lock.
 */
export async function withSnapshot<T>(
  plan_path: string,
  abs_path: string,
  fn: (snap: PlanSnapshot) => T | Promise<T>,
): Promise<T> {
  const first = await readPlanSnapshot(plan_path, abs_path, { parse: false });
  try {
    return await fn(first);
  } catch (e) {
    if (!(e instanceof NeedsParse)) throw e;
  }
  return fn(await readPlanSnapshot(plan_path, abs_path, { parse: true }));
}

/** Inside the transaction. Returns 'same' or 'prose' (refreshed); throws PlanNotFound / PlanDrift. */
export async function checkDrift(
  ctx: StateContext,
  c: Conn,
  plan: PlanRow,
  snap: PlanSnapshot,
  now: string,
): Promise<'same' | 'prose'> {
  if (snap.bytes === null) {
    throw new TugError('PlanNotFound', {
      plan: plan.plan_path,
      plan_path: plan.plan_path,
      reason: `the file is gone from ${snap.abs_path}`,
    });
  }
  // SQLite compares the bytes where they are stored: hashing them here would load node:crypto, ~5 ms of every
  // claim, update and complete. PostgreSQL compares hashes, so the bytes do not cross the network.
  if (
    c.dialect === 'sqlite'
      ? await planSourceIs(c, plan.plan_path, snap.bytes)
      : sha256Hex(snap.bytes) === plan.plan_hash
  )
    return 'same';
  if (!snap.parsed) throw new NeedsParse();
  if (snap.parsed.structure_hash !== plan.structure_hash) {
    const diff = await structureDiff(c, plan.plan_path, snap.parsed);
    // Read from another work tree (`--worktree W`): the state init that takes this copy over runs there
    // (hint `tugcode -C W state init …`); from here it would read this work tree's copy (docs/state.md §3).
    const root = snap.abs_path.slice(0, -(plan.plan_path.length + 1));
    const elsewhere = snap.abs_path.endsWith(`/${plan.plan_path}`) && root !== ctx.workTree ? { read_from: root } : {};
    throw new TugError('PlanDrift', {
      plan_path: plan.plan_path,
      summary: diff.summary,
      ...diff.details,
      ...elsewhere,
    });
  }
  await refreshProse(c, plan.plan_path, snap.parsed, snap.bytes, now);
  warnProseChanged(ctx, plan.plan_path);
  return 'prose';
}

/** The one wording of PlanProseChanged, whether a command or a repeated `state init` found the change. */
export function warnProseChanged(ctx: StateContext, planPath: string): void {
  ctx.warnings.add(
    'PlanProseChanged',
    `${planPath}: the prose changed since state init (structure unchanged); titles and texts refreshed`,
    { plan_path: planPath },
  );
}

/** Copy titles, labels, commit messages, item texts and the bytes (and hash) from a same-structure parse. */
export async function refreshProse(
  c: Conn,
  plan_path: string,
  parsed: ParsedPlan,
  bytes: Uint8Array,
  now: string,
): Promise<void> {
  await refreshPlanProse(c, plan_path, parsed.plan_hash, bytes, parsed.title, now);
  const seen = new Set<string>();
  const touches = liftedTouches(parsed);
  for (const s of parsed.steps) {
    if (seen.has(s.anchor)) continue;
    seen.add(s.anchor);
    await updateStepProse(c, plan_path, s.anchor, {
      title: s.title,
      step_id: s.id,
      commit_message: s.commit_message,
      touches: touchesColumn(touches.get(s.anchor) ?? s.touches),
    });
  }
  const byKey = new Map<string, { text: string; depth: number }>();
  for (const s of parsed.steps) for (const it of s.items) byKey.set(`${s.anchor}\0${it.kind}\0${it.ordinal}`, it);
  for (const row of await itemsOfPlan(c, plan_path)) {
    const it = byKey.get(`${row.step_anchor}\0${row.kind}\0${row.ordinal}`);
    if (it && (it.text !== row.text || it.depth !== row.depth)) await setItemProse(c, row.id, it.text, it.depth);
  }
}

export interface DriftDetails {
  summary: string;
  details: {
    added_steps: string[];
    removed_steps: string[];
    changed_steps: { step_anchor: string; changes: string[] }[];
  };
}

/** What changed between the DB's structure and a parse (for the PlanDrift message). */
export async function structureDiff(c: Conn, plan_path: string, parsed: ParsedPlan): Promise<DriftDetails> {
  const dbSteps = await stepsOfPlan(c, plan_path);
  const dbItems = await itemsOfPlan(c, plan_path);
  const dbDeps = await depsOfPlan(c, plan_path);
  const dbRefs = await refactorsOfPlan(c, plan_path);
  const count = (rows: { kind: string }[], kind: string) => rows.filter((r) => r.kind === kind).length;
  const newByAnchor = new Map(parsed.steps.map((s) => [s.anchor, s]));
  const oldByAnchor = new Map(dbSteps.map((s) => [s.anchor, s]));
  const added = parsed.steps.filter((s) => !oldByAnchor.has(s.anchor)).map((s) => s.anchor);
  const removed = dbSteps.filter((s) => !newByAnchor.has(s.anchor)).map((s) => s.anchor);
  const changed: { step_anchor: string; changes: string[] }[] = [];
  for (const old of dbSteps) {
    const s = newByAnchor.get(old.anchor);
    if (!s) continue;
    const changes: string[] = [];
    if (s.parent_anchor !== old.parent_anchor)
      changes.push(`parent ${old.parent_anchor ?? 'none'}→${s.parent_anchor ?? 'none'}`);
    const items = dbItems.filter((i) => i.step_anchor === old.anchor);
    for (const kind of ['task', 'test', 'checkpoint']) {
      const a = count(items, kind);
      const b = count(s.items, kind);
      if (a !== b) changes.push(`${kind}s ${a}→${b}`);
    }
    const oldDeps = dbDeps
      .filter((d) => d.step_anchor === old.anchor)
      .map((d) => d.depends_on)
      .sort();
    const newDeps = parsed.edges
      .filter(([f]) => f === old.anchor)
      .map(([, t]) => t)
      .sort();
    if (oldDeps.join(',') !== newDeps.join(','))
      changes.push(`depends on ${oldDeps.join(', ') || 'none'}→${newDeps.join(', ') || 'none'}`);
    const oldOps = dbRefs.filter((r) => r.step_anchor === old.anchor).map((r) => r.op_text);
    const newOps = s.refactors.map((r) => r.command ?? r.text);
    if (oldOps.join('\n') !== newOps.join('\n')) changes.push('refactors');
    if (changes.length > 0) changed.push({ step_anchor: old.anchor, changes });
  }
  const parts: string[] = [];
  if (added.length) parts.push(`added ${added.join(', ')}`);
  if (removed.length) parts.push(`removed ${removed.join(', ')}`);
  if (changed.length)
    parts.push(`changed ${changed.map((c) => `${c.step_anchor} (${c.changes.join('; ')})`).join(', ')}`);
  return {
    summary: parts.join('; ') || 'the dependency structure changed',
    details: { added_steps: added, removed_steps: removed, changed_steps: changed },
  };
}
