/**
 * The driver's shared shapes (docs/run.md §1–§3): events, the step brief, the summary. Plain types; the
 * zod schemas of the events live in src/contract/schemas/run.ts and are checked against these by a test.
 */

import type { TouchesHeld } from '../contract/touches.js';
import type { Usage, UsageRole, UsageTotals } from '../contract/usage.js';

export type Phase =
  | 'reset'
  | 'setup'
  | 'refactors'
  | 'implementer'
  | 'checkpoints'
  | 'commit'
  | 'review'
  | 'integrate'
  /** A conflict of the integration rebase, in the resolver's hands (docs/run.md §1.9). */
  | 'resolve'
  | 'complete';

/** The `reason_code` of `attempt_failed` and the first word of the `state fail` reason (docs/run.md §1). */
export type FailCode =
  | 'ImplementerFailed'
  | 'StepTimeout'
  | 'RefactorFailed'
  | 'CheckpointFailed'
  | 'HookFailed'
  | 'CommitFailed'
  | 'ChecklistIncomplete'
  | 'SubstepsIncomplete'
  | 'RefactorsIncomplete'
  | 'IntegrationConflict'
  /** The worker's worktree is gone, not its own any more, or locked by a stale `index.lock` (worktrees.ts). */
  | 'WorktreeBroken'
  | 'OutsideWrite'
  /** The reviewer's verdict was REVISE `review_rounds` times in this attempt (docs/run.md §6). */
  | 'ReviewRejected'
  /** The reviewer exited non-zero, answered no valid verdict, or changed the worktree (docs/run.md §6). */
  | 'ReviewerFailed'
  /** A step approved by a human (`state decide --approve`) whose kept commit is gone (docs/run.md §6.3). */
  | 'ReviewCommitMissing'
  /** The implementer showed no output, no item change and no file change for stall_seconds (docs/run.md §7.3). */
  | 'Stalled'
  /** The implementer or resolver changed the running plan or `.tugtool/config.toml` in its worktree (plan-guard.ts). */
  | 'PlanEdited';

/** A reviewer's verdict (docs/run.md §6.2). */
export type Verdict = 'APPROVE' | 'REVISE' | 'ESCALATE';

/** One issue a reviewer names. */
export interface ReviewIssue {
  severity: 'blocker' | 'major' | 'minor';
  file?: string | undefined;
  line?: number | null | undefined;
  message: string;
}

/** The JSON object on the last non-empty line of a reviewer's output (docs/run.md §6.2). */
export interface ReviewVerdict {
  verdict: Verdict;
  summary: string;
  issues: ReviewIssue[];
}

/** A worker's name: `w1`, `w2`, … (its worktree is `.tugtree/tugplan__<slug>--w<k>`). */
export type WorkerName = string;

export type RunEvent =
  | {
      type: 'run_started';
      at: string;
      plan_path: string;
      integration_branch: string;
      base_branch: string;
      /** The workers the run started: `--workers`, but no more than the plan can keep busy at once. */
      workers: number;
      /** `--workers` when the run started fewer (docs/run.md §1 item 3); absent when it started them all. */
      workers_requested?: number;
      /** `--remote NAME`: the integration branch is NAME's (docs/state.md §8.4); absent for a local run. */
      remote?: string;
    }
  | {
      type: 'claimed';
      at: string;
      worker: WorkerName;
      step_anchor: string;
      attempt: number;
      resumed: boolean;
      reclaimed_from_expired: boolean;
      /**
       * The step's failures so far and the cap they count against (docs/state.md §3.6): the attempt number
       * counts claims, interruptions included, so it can pass the cap without the step failing.
       */
      failures?: number;
      max_attempts?: number;
    }
  | {
      type: 'phase';
      at: string;
      worker: WorkerName;
      step_anchor: string;
      phase: Phase;
      /** The substep of `step_anchor` this phase runs for (docs/run.md §1.3); absent for the step's own. */
      substep_anchor?: string;
    }
  | { type: 'step_completed'; at: string; worker: WorkerName; step_anchor: string; commit_hash: string | null }
  | {
      type: 'attempt_failed';
      at: string;
      worker: WorkerName;
      step_anchor: string;
      attempt: number;
      reason_code: FailCode;
      reason: string;
      /** The implementer logs of this attempt, repo-relative (docs/run.md §1.3); absent when it wrote none. */
      logs?: string[];
      /** The substep of `step_anchor` whose phase failed (docs/run.md §1.3); absent for the step's own. */
      substep_anchor?: string;
    }
  | {
      type: 'claim_lost';
      at: string;
      worker: WorkerName;
      step_anchor: string;
      attempt: number;
      error_code: string;
      kept_commit?: string;
    }
  | {
      type: 'review';
      at: string;
      worker: WorkerName;
      step_anchor: string;
      round: number;
      verdict: Verdict;
      summary: string;
    }
  | { type: 'needs_human'; at: string; step_anchor: string; review_ref: string; reason: string }
  | { type: 'conflict'; at: string; worker: WorkerName; step_anchor: string; files: string[] }
  | { type: 'conflict_resolved'; at: string; worker: WorkerName; step_anchor: string; files: string[]; round: number }
  /**
   * `claimed_steps`: the steps held now, which the waiting worker waits on (their completion makes others
   * ready); `touches_held`: the ready steps held back because their Touches overlap a running step's, when some.
   */
  | {
      type: 'waiting';
      at: string;
      worker: WorkerName;
      claimed_steps?: string[];
      touches_held?: TouchesHeld[];
      /** Of `claimed_steps`, those an owner outside this run holds, with its lease (docs/run.md §1.4); when some. */
      held_by?: HeldElsewhere[];
    }
  /** One agent run's usage, recorded in the state, with the plan's totals after it (docs/run.md §7.1). */
  | {
      type: 'usage';
      at: string;
      worker: WorkerName;
      step_anchor: string;
      attempt: number;
      role: UsageRole;
      usage: Usage;
      plan: { tokens: number; cost_usd: number | null };
    }
  /** The watchdog killed a silent implementer; `attempt_failed` (Stalled) follows (docs/run.md §7.3). */
  | { type: 'stalled'; at: string; worker: WorkerName; step_anchor: string; attempt: number; idle_seconds: number }
  /** An attempt failure that was the step's last: the step is `failed` (docs/run.md §1 item 4.9). */
  | {
      type: 'step_failed';
      at: string;
      worker: WorkerName;
      step_anchor: string;
      failures: number;
      reason: string;
      /** The cap its failures reached. */
      max_attempts?: number;
    }
  /** The plan's usage reached a budget: no new claims (docs/run.md §7.2). */
  | {
      type: 'budget_exhausted';
      at: string;
      budget_usd: number | null;
      budget_tokens: number | null;
      usage: UsageTotals;
      running: string[];
    }
  /** Something the run noticed and handled (a usage file it could not read, a notify command that failed). */
  | { type: 'warning'; at: string; code: string; message: string }
  | { type: 'worker_stopped'; at: string; worker: WorkerName; reason: 'done' | 'signal' }
  | ({ type: 'summary'; at: string } & RunSummary);

/** A step claimed by an owner outside the run (a worktree that is none of its workers), and its lease. */
export interface HeldElsewhere {
  step_anchor: string;
  owner: string;
  lease_expires_at: string | null;
  lease_expired: boolean;
}

export interface RunSummary {
  status: 'ok' | 'error';
  steps_completed: string[];
  /** `logs`: the step's implementer logs, every attempt's, repo-relative (docs/run.md §1.1 item 6). */
  failed_steps: { step_anchor: string; reason: string; logs?: string[] }[];
  blocked_steps: string[];
  /**
   * Why each of `blocked_steps` cannot run: `blocked_by`, the failed steps (and steps waiting for a human)
   * behind it, and `reason`, its unfinished dependencies (docs/run.md §1.1 item 6); present when any.
   */
  blocked_reasons?: { step_anchor: string; blocked_by: string[]; reason: string }[];
  /**
   * Steps that were running when the run stopped (a signal, a fatal error): their implementers killed, their
   * claims handed back (`released`) or, when that failed, left to expire (docs/run.md §1.1 item 5); present when any.
   */
  interrupted_steps?: { step_anchor: string; released: boolean }[];
  commits: string[];
  wall_ms: number;
  workers: { worker: WorkerName; busy_ms: number }[];
  /** The plan's top-level steps in plan order, the order of the text summary's rows; absent when the run did not start. */
  plan_steps?: string[];
  /** Every step of the plan is completed (by this run or not); absent when the run did not start. */
  plan_done?: boolean;
  /** Top-level steps completed, but not by this run (before it, or by another host while it ran); present when any. */
  already_completed?: string[];
  /**
   * The plan is done and has no integration branch (merged already, or the branch deleted): nothing for
   * `tugcode merge` to bring back, so the text summary names no `next:` (docs/run.md §1.1 item 6); present when so.
   */
  nothing_to_merge?: true;
  /** With a reviewer: each step this run reviewed, its rounds and last verdict (docs/run.md §6). */
  review_rounds?: { step_anchor: string; rounds: number; verdict: Verdict }[];
  /** Steps waiting for `tugcode state decide` (docs/run.md §6.3); present when there are any. */
  needs_human?: { step_anchor: string; review_ref: string; reason: string }[];
  /** Completed steps this run integrated as a human approved them (`state decide --approve`, docs/run.md §6.3). */
  human_approved?: string[];
  /**
   * Steps behind a step waiting for a human (and no failed one): not blocked, held until the decision, and
   * why (as `blocked_reasons`, docs/run.md §1.10); present when there are any.
   */
  waiting_steps?: string[];
  waiting_reasons?: { step_anchor: string; blocked_by: string[]; reason: string }[];
  /**
   * Top-level steps the run never settled because it stopped claiming early (a plan change, the git
   * directory changed, a budget, a signal, a fatal error): not completed, failed, blocked, waiting or
   * interrupted; the next run takes them (docs/run.md §1.1 item 6); present when any.
   */
  not_run_steps?: string[];
  /**
   * Of `not_run_steps`, those an owner outside the run held when it ended, with its lease: the run waited on
   * them (docs/run.md §1.4); present when any.
   */
  held_steps?: HeldElsewhere[];
  /**
   * Steps completed behind the driver's back while a worker held them (StepCompletedElsewhere, docs/agents.md
   * §1.7): `own_worktree` when the worker's own implementer did it, `kept_commit` the commit keeping the
   * worktree's work (null when it held none). Not in `steps_completed` nor `already_completed`; present when any.
   */
  completed_outside?: { step_anchor: string; own_worktree: boolean; kept_commit: string | null }[];
  /** Conflicts a resolver merged during the run (docs/run.md §1.9); absent when there were none. */
  conflicts_resolved?: { step_anchor: string; files: string[]; round: number }[];
  /** What this run's agent runs used (docs/run.md §7.1); absent when the run did not start. */
  usage?: UsageTotals;
  /** The plan's usage in the state after the run, earlier runs included. */
  plan_usage?: UsageTotals;
  /** When status is `error`: the error object of docs/output.md §2. */
  error?: { code: string; message: string; details: Record<string, unknown>; hint?: string };
}

/** One checklist item of a brief. */
export interface BriefItem {
  kind: 'task' | 'test' | 'checkpoint';
  ordinal: number;
  text: string;
  status: 'open' | 'in_progress' | 'completed' | 'deferred';
}

/** The step brief (docs/run.md §2): on the implementer's stdin and in the file `TUG_STEP_JSON` names. */
export interface StepBrief {
  plan_path: string;
  step_anchor: string;
  title: string;
  attempt: number;
  commit_message: string | null;
  references: string | null;
  depends_on: string[];
  items: BriefItem[];
  substeps: StepBrief[];
  previous_failures: { attempt: number; reason: string }[];
  /** What a human wrote with `tugcode state decide --revise` (docs/run.md §6.3); only when there is some. */
  human_notes?: string;
  /** In a REVISE round: the reviewer's issues to address (docs/run.md §6.2); only then. */
  review_issues?: ReviewIssue[];
  /** Set for the resolver of a conflict (docs/run.md §1.9): what the integration rebase stopped on. */
  conflict?: ConflictBrief;
}

/** The conflict a resolver is asked to merge (docs/run.md §1.9). */
export interface ConflictBrief {
  /** The integration tip the step's commits are being rebased onto. */
  onto: string;
  /** The conflicted files, repo-relative. */
  files: string[];
  /**
   * The integration commits since the step's base that touched those files, oldest first: the step each
   * carries in its `Tug-Step` trailer (null for a commit without one), its hash and subject.
   */
  integrated: { step_anchor: string | null; commit: string; subject: string }[];
}

/** The reviewer's stdin (docs/run.md §6.1): the step's brief plus `review`. */
export interface ReviewBrief extends StepBrief {
  review: {
    round: number;
    /** The integration tip the step will be integrated onto. */
    base: string;
    /** The worker branch's head: the step's commit(s). */
    head: string;
    /** `git diff <base>...<head>`, at most 256 KiB. */
    diff: string;
    diff_truncated: boolean;
    previous_verdicts: (ReviewVerdict & { round: number })[];
  };
}

/** What the driver reports of one child process (implementer or checkpoint command). */
export interface ChildOutcome {
  /** Exit 0 and not killed. */
  ok: boolean;
  exit_code: number | null;
  /** The signal that ended the child (`SIGKILL`, …), when one did; then exit_code is null. */
  signal?: string | null;
  timed_out: boolean;
  /** Killed because the caller aborted (lost lease, signal). */
  aborted: boolean;
  /** The last 4 KiB of stdout+stderr, interleaved as written. */
  tail: string;
  /** The last non-empty line of the output ('' when none). */
  last_line: string;
  /** Why the program could not be started at all (`ENOENT`, `EACCES`, …); absent when it ran. */
  spawn_error?: string;
}
