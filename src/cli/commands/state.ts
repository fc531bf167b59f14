/**
 * The `tugcode state` command group (02-state.md §4): declarations only. Each body lazily imports its
 * implementation (state-write.ts or state-read.ts), which in turn imports only the library operation it
 * calls, so `state heartbeat` loads neither markdown-it nor zod and `--help` loads nothing heavy.
 */
import type { Command } from 'commander';
import { action, type Body } from '../action.js';

type Lazy = (name: keyof typeof import('./state-write.js') | keyof typeof import('./state-read.js')) => Body;

const write: Lazy = (name) => async (cli, args, opts, cmd) => {
  const m = (await import('./state-write.js')) as unknown as Record<string, Body>;
  return m[name]!(cli, args, opts, cmd);
};
const readOnly: Lazy = (name) => async (cli, args, opts, cmd) => {
  const m = (await import('./state-read.js')) as unknown as Record<string, Body>;
  return m[name]!(cli, args, opts, cmd);
};

const collect = (v: string, prev: string[] = []) => [...prev, v];

export function registerState(program: Command): void {
  const state = program
    .command('state')
    .description('the shared state database: claims, leases, checklists, completion');
  const owner = (c: Command) =>
    c
      .requiredOption('--worktree <path>', "the caller's worktree (main checkout or linked worktree root)")
      .option('--attempt <n>', 'fencing token: refuse unless it is the current attempt');

  state
    .command('init <plan>')
    .description('parse the plan and record its steps, items and refactors')
    .option('--force', 're-initialize after a structural change (completed steps and live claims are kept)')
    .option('--release-claims', 'with --force: also reset steps with live claims')
    .action(action('state init', write('init')));

  state
    .command('claim <plan>')
    .description('atomically claim the next ready step (or resume your own claim)')
    .requiredOption('--worktree <path>', "the claimer's worktree")
    .option('--lease-duration <seconds>', 'lease length (default: config state.lease_seconds)')
    .option('--step <anchor>', 'claim only this top-level step')
    .action(action('state claim', write('claim')));

  owner(
    state.command('start <plan> <step>').description('claimed → in_progress (a substep: pending → in_progress)'),
  ).action(action('state start', write('start')));

  owner(state.command('heartbeat <plan> <step>').description('renew the lease of your claim'))
    .option('--lease-duration <seconds>', 'lease length (default: config state.lease_seconds)')
    .action(action('state heartbeat', write('heartbeat')));

  owner(
    state
      .command('update <plan> <step>')
      .description('change checklist items (--task ORD STATUS or ORD:STATUS, repeatable)'),
  )
    .option('--task <ord-status...>', 'a task: ORD STATUS or ORD:STATUS (0-based ordinal)')
    .option('--test <ord-status...>', 'a test: ORD STATUS or ORD:STATUS')
    .option('--checkpoint <ord-status...>', 'a checkpoint: ORD STATUS or ORD:STATUS')
    .option('--all-tasks <status>', 'every task of the step')
    .option('--all-tests <status>', 'every test of the step')
    .option('--all-checkpoints <status>', 'every checkpoint of the step')
    .option('--all <status>', 'every item of the step')
    .option('--reason <text>', 'reason for deferred items')
    .option('--batch', 'read a JSON array [{kind, ordinal, status, reason?}] from stdin')
    .option('--complete-remaining', 'then complete every item not yet completed or deferred (step and substeps)')
    .action(action('state update', write('update')));

  owner(state.command('artifact <plan> <step>').description('record an audit breadcrumb for the step'))
    .requiredOption(
      '--kind <kind>',
      'architect_strategy, reviewer_verdict, auditor_summary, coder_report, refactor_report, verification_report, note',
    )
    .option('--summary <text>', 'short summary (at most 500 characters kept)')
    .option('--summary-file <path>', 'read the summary from a file, or - for stdin')
    .option('--content-file <path>', 'long content from a file, or - for stdin (at most 64 KiB kept)')
    .action(action('state artifact', write('artifact')));

  owner(state.command('complete <plan> <step>').description('complete the step (strict unless --force REASON)'))
    .option('--commit <rev>', "the step's commit (stored as its full object name)")
    .option('--force <reason>', 'complete anyway; the reason is recorded')
    .action(action('state complete', write('complete')));

  owner(state.command('release <plan> <step>').description('hand your claim back (the attempt is discarded)')).action(
    action('state release', write('release')),
  );

  owner(state.command('fail <plan> <step>').description('give up this attempt (failures + 1)'))
    .requiredOption('--reason <text>', 'why the attempt failed')
    .action(action('state fail', write('fail')));

  state
    .command('reset <plan> <step>')
    .description('admin: return a claimed, in-progress or failed step to pending')
    .option('--force', 'also reset a claim whose lease is still live')
    .action(action('state reset', write('reset')));

  state
    .command('reconcile <plan>')
    .description('complete steps from commits carrying Tug-Step/Tug-Plan trailers')
    .option('--ref <ref>', 'scan commits reachable from this ref (repeatable)', collect)
    .option('--all-branches', 'scan every local branch and every worktree HEAD')
    .option('--force', 'also change failed or live-claimed steps and overwrite differing hashes')
    .action(action('state reconcile', write('reconcile')));

  state
    .command('prune')
    .description('archive plans whose file is gone from every work tree')
    .option('--dry-run', 'report only')
    .option('--purge', 'delete their rows and events instead of archiving')
    .action(action('state prune', write('prune')));

  state
    .command('show [plan]')
    .description('progress of one plan, or of every active plan')
    .option('--items <mode>', 'which items to list: active (default), all, none')
    .option('--step <anchor>', 'only this step and its substeps')
    .option('--watch [seconds]', 'redraw every SECONDS (default 2) until interrupted')
    .action(action('state show', readOnly('show')));

  state
    .command('ready <plan>')
    .description('which steps are ready, claimed, blocked, completed or failed')
    .action(action('state ready', readOnly('ready')));

  state
    .command('log [plan]')
    .description('the audit trail of state changes')
    .option('--step <anchor>', 'only events of this step')
    .option('--limit <n>', 'at most N events (default 50, max 1000)')
    .option('--after-id <id>', 'the first events after this id (paging forward)')
    .option('--since <iso>', 'only events at or after this instant')
    .action(action('state log', readOnly('log')));

  state
    .command('list')
    .description('every plan in state.db with its progress')
    .action(action('state list', readOnly('list')));

  state
    .command('graph <plan>')
    .description('the dependency graph with statuses')
    .option('--format <format>', 'mermaid (default) or dot')
    .action(action('state graph', readOnly('graph')));
}
