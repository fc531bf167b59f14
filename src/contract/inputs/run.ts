/** Input tables of `tugcode run` and `tugcode demo` (docs/run.md §1, §4). */
import type { Field, InputTable } from './fields.js';
import { MAX_LEASE_SECONDS, MAX_PATH, MAX_PLAN } from './limits.js';

const seconds = (description: string, max: number): Field => ({
  type: 'int',
  min: 1,
  max,
  placeholder: '<seconds>',
  description,
});

export const run: InputTable = {
  command: 'run',
  description:
    'run a plan to completion with N parallel workers, each in its own worktree. A claimed step with substeps ' +
    'runs the implementer once per substep (in dependency order, TUG_STEP=step-4-1, step-4-2), then once for ' +
    'the step (step-4); each run gets the brief of that (sub)step and ends in its own commit',
  fields: {
    plan: { type: 'string', arg: 0, required: true, max: MAX_PLAN, description: 'plan path or slug' },
    workers: {
      type: 'int',
      min: 1,
      max: 64,
      placeholder: '<n>',
      description: 'parallel workers, at most (default: config run.workers); never more than the plan can keep busy',
    },
    implementer: {
      type: 'string',
      max: 8192,
      placeholder: '<argv>',
      description:
        "command run once per step and once per substep in the worker's worktree, the (sub)step's brief on " +
        'stdin, split shell-style (default: config run.implementer)',
    },
    agent: {
      type: 'enum',
      values: ['claude', 'codex'],
      placeholder: '<name>',
      description:
        'agent implementer preset run once per step and substep instead of --implementer (default: config run.agent)',
    },
    reviewer: {
      type: 'string',
      max: 8192,
      placeholder: '<argv>',
      description:
        "command run after each step's commit, its brief and diff on stdin; its one-line JSON verdict " +
        '(APPROVE, REVISE, ESCALATE) gates integration (default: config run.reviewer)',
    },
    review_agent: {
      type: 'enum',
      values: ['claude', 'codex'],
      placeholder: '<name>',
      description: 'agent reviewer preset, read-only, instead of --reviewer (default: config run.review_agent)',
    },
    review_rounds: {
      type: 'int',
      min: 1,
      max: 20,
      placeholder: '<n>',
      description: 'REVISE verdicts per attempt before it fails ReviewRejected (default: config run.review_rounds)',
    },
    resolver: {
      type: 'string',
      max: 8192,
      placeholder: '<argv>',
      description:
        'command that merges a conflict of the integration rebase in the worktree, the brief with its conflict ' +
        'on stdin (default: config run.resolver, else the implementer)',
    },
    resolve_rounds: {
      type: 'int',
      min: 0,
      max: 100,
      placeholder: '<n>',
      description:
        'resolver runs per attempt before a conflict fails it (IntegrationConflict); 0 = never resolve ' +
        '(default: config run.resolve_rounds)',
    },
    base: {
      type: 'string',
      max: MAX_PATH,
      placeholder: '<branch>',
      description: 'base branch (default: config run.base_branch)',
    },
    lease_seconds: {
      ...seconds('lease length of each claim (default: config state.lease_seconds)', MAX_LEASE_SECONDS),
      flag: '--lease-duration',
    },
    heartbeat_seconds: {
      ...seconds('heartbeat interval while a step runs (default: config run.heartbeat_seconds)', 86_400),
      flag: '--heartbeat',
    },
    step_timeout_seconds: {
      ...seconds('wall-clock limit per step attempt (default: config run.step_timeout_seconds)', 7 * 86_400),
      flag: '--step-timeout',
    },
    max_attempts: {
      type: 'int',
      min: 1,
      max: 1000,
      placeholder: '<n>',
      description: 'failed attempts before a step is failed (default: config state.max_attempts)',
    },
    no_checkpoints: { type: 'bool', description: 'do not run checkpoint commands' },
    merge: { type: 'bool', description: 'merge the integration branch into the base when the plan is done' },
    keep_worktrees: { type: 'bool', description: 'keep the worker worktrees after a successful run' },
    remote: {
      type: 'string',
      max: 255,
      placeholder: '<name>',
      description: 'git remote holding the integration branch, shared by hosts (default: config run.remote)',
    },
    move_integration: {
      type: 'bool',
      description:
        "integrate where this run does (--remote, or the clone's own branch) even though the plan's recorded " +
        'integration target is elsewhere, and record it as the target from now on (docs/run.md §1.11)',
    },
    budget_usd: {
      type: 'number',
      min: 0,
      max: 1e9,
      placeholder: '<usd>',
      description:
        "stop claiming steps once the plan's recorded cost reaches this many USD; running steps finish, then " +
        'exit 4 BudgetExhausted (default: config run.budget_usd; 0 = none)',
    },
    budget_tokens: {
      type: 'int',
      min: 0,
      max: 1e15,
      placeholder: '<n>',
      description:
        "stop claiming steps once the plan's recorded tokens (all kinds) reach this (default: config " +
        'run.budget_tokens; 0 = none)',
    },
    stall_seconds: {
      ...seconds(
        'fail an attempt Stalled when its implementer shows no output, no item change and no file change in its ' +
          'worktree for this long (default: config run.stall_seconds, 600)',
        7 * 86_400,
      ),
      flag: '--stall-seconds',
    },
    dry_run: {
      type: 'bool',
      description: 'print the schedule (waves, critical path, what each step runs); change nothing',
    },
    board: {
      type: 'bool',
      description: 'serve the live web board beside the run (read-only, on 127.0.0.1; its URL is printed first)',
    },
  },
};

export const demo: InputTable = {
  command: 'demo',
  description: 'create a small TypeScript repository with a plan and run it with parallel workers',
  fields: {
    dir: {
      type: 'string',
      arg: 0,
      max: MAX_PATH,
      description: 'where to create the demo repository (must not exist or be empty; default: a temporary directory)',
    },
    workers: { type: 'int', min: 1, max: 8, placeholder: '<n>', description: 'parallel workers (default 3)' },
    keep: { type: 'bool', description: 'keep the temporary repository' },
    board: {
      type: 'bool',
      description:
        'serve the live web board: the run starts once the page is open (or after 60 s), at a watchable pace, and the board stays up until interrupted',
    },
  },
};
