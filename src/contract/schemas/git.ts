/**
 * Output schemas of the worktree, commit, merge, status and doctor commands (docs/git.md §3–§7).
 */
import { z } from 'zod';
import {
  absPath,
  anchor,
  commitHash,
  errorEnvelope,
  okEnvelope,
  repoPath,
  runDriverLine,
  lastRunLine,
  timestamp,
} from './common.js';
import { PLAN_STATUSES } from '../status.js';
import { usageTotalsSchema } from './usage.js';

const branchName = z.string().min(1);

const worktreeInfo = z
  .object({
    worktree_path: absPath,
    branch: branchName.nullable(),
    head: commitHash.nullable(),
    dirty: z.boolean(),
    missing: z.boolean(),
    plan_path: repoPath.nullable(),
    base_branch: branchName.nullable(),
    claimed_steps: z.array(
      z
        .object({
          plan_path: repoPath,
          step_anchor: anchor,
          status: z.enum(['claimed', 'in_progress']),
          lease_expires_at: timestamp.nullable(),
          lease_expired: z.boolean(),
        })
        .strict(),
    ),
  })
  .strict();

// `skipped`: the check did not run (status stays `pass`, counted in both `pass` and `skipped`, docs/git.md §7).
const doctorCheck = z
  .object({
    name: z.string(),
    status: z.enum(['pass', 'warn', 'fail']),
    message: z.string(),
    fix: z.string().min(1),
    skipped: z.boolean(),
  })
  .strict();
export const doctorSummary = z
  .object({
    total: z.number().int().nonnegative(),
    pass: z.number().int().nonnegative(),
    warn: z.number().int().nonnegative(),
    fail: z.number().int().nonnegative(),
    skipped: z.number().int().nonnegative(),
  })
  .strict();
/** `details` of the DoctorFailed error envelope. */
export const doctorFailedDetails = z
  .object({ failed: z.number().int().positive(), checks: z.array(doctorCheck), summary: doctorSummary })
  .strict();

export const gitSchemas: Record<string, z.ZodTypeAny> = {
  'worktree create': okEnvelope('worktree create', {
    worktree_path: absPath,
    branch_name: branchName,
    base_branch: branchName,
    plan_path: repoPath,
    all_steps: z.array(anchor),
    ready_steps: z.array(anchor),
    state_initialized: z.boolean(),
    reused: z.boolean(),
  }),
  'worktree list': okEnvelope('worktree list', { worktrees: z.array(worktreeInfo) }),
  'worktree remove': okEnvelope('worktree remove', {
    removed: z.boolean(),
    worktree_path: absPath,
    branch: branchName.nullable(),
    branch_deleted: z.boolean(),
    branch_tip: commitHash.nullable(),
    released_claims: z.array(z.object({ plan_path: repoPath, step_anchor: anchor }).strict()),
    forced: z.boolean(),
  }),
  commit: okEnvelope('commit', {
    committed: z.boolean(),
    commit_hash: commitHash,
    branch: branchName,
    files_staged: z.array(repoPath),
    log_entry_path: repoPath,
    integrated: z.boolean(),
    integration_branch: branchName.nullable(),
    state_updated: z.boolean(),
    state_update_failed: z.boolean(),
    state_failure_reason: z
      .enum(['open_items', 'substeps', 'refactors', 'ownership', 'drift', 'integration_conflict', 'db_error'])
      .nullable(),
    state_error: errorEnvelope.nullable(),
    plan_completed: z.boolean(),
  }),
  merge: okEnvelope('merge', {
    merged: z.boolean(),
    merge_commit: commitHash.nullable(),
    branch: branchName,
    into: branchName,
    dry_run: z.boolean(),
    already_merged: z.boolean(),
    steps_included: z.array(anchor),
    step_commits: z.record(anchor, commitHash.nullable()),
    worktrees_removed: z.array(absPath),
    branches_deleted: z.array(branchName),
    kept: z.array(z.object({ branch: branchName, worktree_path: absPath.nullable(), reason: z.string() }).strict()),
  }),
  status: okEnvelope('status', {
    plans: z.array(
      z
        .object({
          plan_path: repoPath,
          source: z.enum(['state', 'checkboxes']),
          status: z.enum(PLAN_STATUSES),
          steps_completed: z.number().int().nonnegative(),
          steps_total: z.number().int().nonnegative(),
          percent: z.number().int().min(0).max(100),
          claimed_steps: z.array(anchor),
          failed_steps: z.array(anchor),
          needs_human_steps: z.array(anchor),
          // Approved by a human (docs/git.md §6): the next run integrates the kept commit.
          approved_steps: z.array(z.object({ step_anchor: anchor, review_commit: commitHash.nullable() }).strict()),
          // Sent back by a human with notes (docs/git.md §6): the next attempt reads them.
          revised_steps: z.array(z.object({ step_anchor: anchor, notes: z.string() }).strict()),
          usage: usageTotalsSchema.nullable(),
          // The run holding the plan's lock (docs/git.md §6): alive false = its pid on this host is gone.
          run_driver: runDriverLine,
          // The plan's last run that ended (docs/state.md §2): what a hint's `tugcode run` repeats once no lock is held.
          last_run: lastRunLine,
          // The plan file's first error at the configured level (docs/git.md §6), null when valid or absent.
          plan_error: z
            .object({
              code: z.string(),
              message: z.string(),
              line: z.number().int().positive().nullable(),
              error_count: z.number().int().positive(),
              command: z.string(),
            })
            .strict()
            .nullable(),
          // The plan file's structure differs from the state's (docs/git.md §6): the next run re-initialises it.
          structure_changed: z.boolean(),
        })
        .strict(),
    ),
  }),
  doctor: okEnvelope('doctor', { checks: z.array(doctorCheck), summary: doctorSummary }),
};
