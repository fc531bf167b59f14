/**
 * The catalogue of tugcode's warning codes (docs/output.md §2): each code a command may put in `warnings`
 * (and a run in its `warning` events), with when it is raised. A warning never changes the exit code.
 * docs/errors.md lists them, generated from here. Two other kinds of code may stand in `warnings`: an
 * error code, when an error is reported without failing the command (a run lock that could not be
 * released), and a plan validator's codes (`W…`, `P…`, docs/plan-format.md §3).
 */
import type { ErrorCode } from './errors.js';

interface WarningEntry {
  /** When the warning is raised (documentation, docs/errors.md). */
  when: string;
}

export const WARNINGS = {
  BoardNotLoopback: {
    when: 'the board listens on an address other machines can reach (`--host`): anyone with its URL can read the state, and act on it with `--allow-actions` (docs/board.md §2)',
  },
  BoardNotOpened: {
    when: '`tugcode board --open` could not open a browser; the URL is printed instead',
  },
  BudgetUnmeasured: {
    when:
      "a run's budget (`--budget-usd`, `--budget-tokens`) cannot see what some runs use: no implementer at all, " +
      'codex tokens without `[run.prices]` (said at the start), or a run that reported nothing, such as a command ' +
      'that does not write `TUG_USAGE_OUT` (said at its first such run); once per run (docs/run.md §7.2)',
  },
  CommitMismatch: {
    when: '`state complete` of a step already completed with another commit: the given commit is not recorded',
  },
  ConfigUnknownKey: {
    when: 'a table or key of `.tugtool/config.toml` that tugcode does not know: ignored',
  },
  DeadRunTakenOver: {
    when: 'a run took over the lock and claims of a run on the same plan whose driver died or stopped refreshing its lock (docs/run.md §1.8)',
  },
  GitDirChanged: {
    when: "an agent, checkpoint, setup or refactor changed the repository's git directory (hooks, config): the run claims no further step (docs/agents.md §1.6)",
  },
  NoImplementer: {
    when: 'a run with no implementer or agent: each step is done by its refactors and command checkpoints alone',
  },
  NotIntegrated: {
    when: '`tugcode commit` committed in the worktree but could not integrate the commit: it stays on the worker branch; the message says what to run',
  },
  NotifyFailed: {
    when: 'the `[run] notify` command failed, could not start, or was killed after 10 s; the run goes on (docs/run.md §7.4)',
  },
  PlanProseChanged: {
    when: "the plan's prose changed since `state init` (same structure): titles and texts are refreshed",
  },
  PlanReinitialized: {
    when: "the plan's structure changed since `state init`: the run re-initialises the state from it first (`run --dry-run` says it will) (docs/run.md §1.1 item 1)",
  },
  ProcessesLeftRunning: {
    when: 'a command the driver started left processes running outside its process group: they were ended and are named (docs/agents.md §1.6)',
  },
  StaleIndexLock: {
    when:
      'the driver removed a lock file of one of its worker trees (`index.lock`, `HEAD.lock`, or its worker ' +
      "branch's ref lock) left by a git that is gone, such as one killed by a signal (docs/run.md §1.6)",
  },
  TextTruncated: {
    when: 'a reason or note longer than its bound was cut to it',
  },
  UsageNotRecorded: {
    when: "an implementer's or reviewer's usage could not be written to the state; the run goes on (docs/run.md §7.1)",
  },
  UsageOutOfBounds: {
    when: "a reported usage value past the ledger's bound counts as the bound, so a budget is stricter, never looser (docs/run.md §7.1)",
  },
  UsageUnreadable: {
    when: "an agent's or script's usage report could not be read; that run counts nothing (docs/run.md §7.1)",
  },
  WorkerBranchRestored: {
    when: "a worker tree found on another branch or a detached HEAD was put back on its worker branch; a branch of the agent's own is kept",
  },
} as const satisfies Record<string, WarningEntry>;

export type WarningCode = keyof typeof WARNINGS;

/** What a command's warning may carry: a warning of the catalogue, or an error reported as a warning. */
export type WarningSinkCode = WarningCode | ErrorCode;

/** A warning of the catalogue, for the places that build one without a sink. */
export function warning(code: WarningCode, message: string): { code: WarningCode; message: string } {
  return { code, message };
}
