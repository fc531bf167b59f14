/**
 * `state reconcile` (docs/state.md §6): heal the DB from commits carrying `Tug-Step`/`Tug-Plan` trailers.
 * The caller lists the commits (git runs before the transaction); for each step the newest commit (by
 * committer date, then the caller's order, which is git's topology order) wins. Idempotent.
 */
import { TugError } from '../contract/errors.js';
import { normalizeAnchor } from '../plan/anchors.js';
import { recordEvent } from './record.js';
import { stepArg } from './owner.js';
import { releaseIn } from './release.js';
import { completeTopLevel, recordPlanDone, type PlanDone } from './complete.js';
import type { StateContext } from './context.js';
import { requirePlanRow, resolvePlanRef, writeStore } from './plan-ref.js';
import { completeNonTerminal } from './queries/items.js';
import { completeRow, getStep, setCommitHash, stepsOfPlan } from './queries/steps.js';
import { refactorsOfStep, setRefactor } from './queries/refactors.js';
import type { Conn } from './sql/conn.js';
import { candidateOpHashes } from './op-hash.js';
import { isExpired, isHeld } from './status.js';
import { Subtree } from './tree.js';
import type { StepRow } from './types.js';

/** One commit with trailers, as the caller listed it (src/git/trailers.ts has the same shape). */
export interface TrailerCommit {
  /** Full object name. */
  hash: string;
  /** Committer time, seconds since the epoch. */
  committer_time: number;
  /** `Tug-Step` values (several allowed). */
  steps: string[];
  /** `Tug-Plan` values. */
  plans: string[];
  /** `Tug-Refactor` values: `<op_hash> <snapshot_before>..<snapshot_after>` (docs/kernel.md §7.4). */
  refactors?: string[] | undefined;
}

export interface ReconcileInput {
  plan: string;
  /** Commits in git log order (newest first, topologically). */
  commits: TrailerCommit[];
  /** How many commits were scanned (default: commits.length). */
  scanned_commits?: number | undefined;
  force?: boolean | undefined;
  /**
   * The caller's own claim on a top-level step that these commits settle (the driver, docs/run.md §1.5): it
   * is released in the same transaction, so no other worker can claim the step in between. Refused like
   * `state release` when the claim is not `worktree`'s.
   */
  held?: { step: string; attempt: number } | undefined;
  /** The caller's worktree (its owner name); required with `held`. */
  worktree?: string | undefined;
}

export interface ReconcileResult {
  reconciled: { step_anchor: string; commit_hash: string; previous_status: string }[];
  skipped_mismatches: { step_anchor: string; db_hash: string; git_hash: string }[];
  skipped_steps: { step_anchor: string; status: string; reason: string }[];
  unknown_steps: string[];
  scanned_commits: number;
}

const normPath = (p: string) => p.trim().replace(/^\.\//, '');

/** For each anchor named by a commit of this plan: the winning commit. */
export function winningCommits(plan_path: string, commits: TrailerCommit[]): Map<string, TrailerCommit> {
  const wins = new Map<string, { c: TrailerCommit; order: number }>();
  commits.forEach((c, order) => {
    if (!c.plans.some((p) => normPath(p) === plan_path)) return;
    for (const raw of c.steps) {
      const a = normalizeAnchor(raw);
      if (!a) continue;
      const cur = wins.get(a);
      if (!cur || c.committer_time > cur.c.committer_time) wins.set(a, { c, order });
    }
  });
  return new Map([...wins].map(([a, w]) => [a, w.c]));
}

export async function reconcile(ctx: StateContext, input: ReconcileInput): Promise<ReconcileResult> {
  const ref = await resolvePlanRef(ctx, input.plan);
  await requirePlanRow(ctx, ref);
  const store = writeStore(ctx);
  const plan_path = ref.plan_path;
  const wins = winningCommits(plan_path, input.commits);
  const force = Boolean(input.force);
  return store.write(async (c) => {
    if (input.held) {
      const worktree = input.worktree;
      if (worktree === undefined)
        throw new TugError('InvalidArgument', { reason: 'a held claim needs its worktree', argument: 'worktree' });
      const owner = { worktree, attempt: input.held.attempt };
      await releaseIn(ctx, c, plan_path, stepArg(input.held.step), owner, 'state reconcile');
    }
    const now = ctx.clock.now();
    const steps = await stepsOfPlan(c, plan_path);
    const known = new Set(steps.map((s) => s.anchor));
    const out: ReconcileResult = {
      reconciled: [],
      skipped_mismatches: [],
      skipped_steps: [],
      unknown_steps: [...wins.keys()].filter((a) => !known.has(a)),
      scanned_commits: input.scanned_commits ?? input.commits.length,
    };
    const refactorsApplied: { step_anchor: string; ordinal: number; op_hash: string; previous_status: string }[] = [];
    const healRefactors = async (anchor: string, commit: TrailerCommit) =>
      refactorsApplied.push(...(await applyRefactorTrailers(c, plan_path, anchor, commit, now)));
    const byTop = new Map<string, Subtree>();
    const treeOf = (s: StepRow) => {
      let t = byTop.get(s.top_anchor);
      if (!t) byTop.set(s.top_anchor, (t = new Subtree(steps.filter((x) => x.top_anchor === s.top_anchor))));
      return t;
    };
    let planDone: PlanDone | null = null;
    for (const original of steps) {
      const win = wins.get(original.anchor);
      if (!win) continue;
      const row = (await getStep(c, plan_path, original.anchor))!;
      const hash = win.hash;
      if (row.status === 'completed') {
        if (row.commit_hash === hash) {
          await healRefactors(row.anchor, win);
          continue;
        }
        if (row.commit_hash === null || force) {
          await setCommitHash(c, plan_path, row.anchor, hash);
          await healRefactors(row.anchor, win);
          out.reconciled.push({ step_anchor: row.anchor, commit_hash: hash, previous_status: row.status });
        } else {
          out.skipped_mismatches.push({ step_anchor: row.anchor, db_hash: row.commit_hash, git_hash: hash });
        }
        continue;
      }
      const top = (await getStep(c, plan_path, row.top_anchor))!;
      const live = isHeld(top.status) && !isExpired(top.lease_expires_at, now);
      if (!force && (top.status === 'failed' || live)) {
        out.skipped_steps.push({
          step_anchor: row.anchor,
          status: row.status,
          reason: top.status === 'failed' ? 'failed' : `claimed by ${top.claimed_by} with a live lease`,
        });
        continue;
      }
      // The step and its non-completed descendants without a trailer of their own.
      const cascade: StepRow[] = [];
      for (const d of treeOf(row).descendants(row.anchor)) {
        if (wins.has(d.anchor)) continue;
        const fresh = (await getStep(c, plan_path, d.anchor))!;
        if (fresh.status !== 'completed') cascade.push(fresh);
      }
      await completeNonTerminal(c, plan_path, [row.anchor, ...cascade.map((d) => d.anchor)], now);
      for (const d of [...cascade].sort((a, b) => b.depth - a.depth || a.step_index - b.step_index)) {
        await completeRow(c, {
          plan_path,
          anchor: d.anchor,
          now,
          commit_hash: hash,
          reason: 'reconciled',
          via: 'reconcile',
          owner: null,
        });
        out.reconciled.push({ step_anchor: d.anchor, commit_hash: hash, previous_status: d.status });
      }
      await completeRow(c, {
        plan_path,
        anchor: row.anchor,
        now,
        commit_hash: hash,
        reason: 'reconciled',
        via: 'reconcile',
        owner: null,
      });
      await healRefactors(row.anchor, win);
      out.reconciled.push({ step_anchor: row.anchor, commit_hash: hash, previous_status: row.status });
      if (row.parent_anchor === null) {
        const r = await completeTopLevel(c, plan_path, row.anchor, now);
        if (r.plan_completed)
          planDone = {
            plan_path,
            anchor: row.anchor,
            actor: 'admin',
            attempt: row.attempt,
            now,
            steps_completed: r.steps_completed,
          };
      }
    }
    if (out.reconciled.length > 0 || refactorsApplied.length > 0) {
      const details = {
        reconciled: out.reconciled,
        force,
        ...(refactorsApplied.length ? { refactors_applied: refactorsApplied } : {}),
      };
      recordEvent(ctx, c, { at: now, plan_path, step_anchor: null, actor: 'admin', attempt: null, details });
    }
    // After the reconcile event that completed its last step (`state log` reads in order).
    if (planDone) recordPlanDone(ctx, c, planDone);
    return out;
  });
}

const TRAILER = /^([0-9a-f]{12})\s+(\S+)\.\.(\S+)$/;

/**
 * docs/kernel.md §7.4: a refactor row of the step that is neither applied nor skipped becomes `applied` when
 * its op_hash, recomputed from `op_text`, appears in a `Tug-Refactor` trailer of the step's commit; it takes
 * the trailer's snapshots. Each trailer marks one row (rows in ordinal order, trailers in commit order).
 */
async function applyRefactorTrailers(c: Conn, plan_path: string, anchor: string, commit: TrailerCommit, now: string) {
  const trailers = (commit.refactors ?? [])
    .map((v) => TRAILER.exec(v.trim()))
    .filter((m): m is RegExpExecArray => m !== null);
  const used = new Set<number>();
  const out: { step_anchor: string; ordinal: number; op_hash: string; previous_status: string }[] = [];
  if (trailers.length === 0) return out;
  for (const r of await refactorsOfStep(c, plan_path, anchor)) {
    if (r.status === 'applied' || r.status === 'skipped') continue;
    const hashes = candidateOpHashes(r.op_text);
    const i = trailers.findIndex((m, k) => !used.has(k) && hashes.includes(m[1]!));
    if (i < 0) continue;
    used.add(i);
    const [, op_hash, before, after] = trailers[i]!;
    const previous = r.result_json === null ? undefined : (JSON.parse(r.result_json) as Record<string, unknown>);
    const result = JSON.stringify({
      op_hash,
      reconciled: true,
      commit_hash: commit.hash,
      ...(previous ? { previous: { ...previous, previous: undefined } } : {}),
    });
    await setRefactor(c, {
      ...r,
      status: 'applied',
      snapshot_before: before!,
      snapshot_after: after!,
      exit_code: 0,
      result_json: result,
      updated_at: now,
    });
    out.push({ step_anchor: anchor, ordinal: r.ordinal, op_hash: op_hash!, previous_status: r.status });
  }
  return out;
}
