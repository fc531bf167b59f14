/**
 * Bodies of the `tugcode state` commands that change state (02-state.md §4). Each maps flags to the
 * library input, gathers git facts first when needed, and renders a short text; the library does the rest.
 * Every body imports what only it needs, so the hot commands load as few modules as possible.
 */
import type { Command } from 'commander';
import { TugError } from '../../contract/errors.js';
import type { CliContext } from '../context.js';
import type { CommandResult } from '../action.js';
import type { BulkChange } from '../../state/update-input.js';
import { attemptOpt, leaseOpt, readStdin, readTextFile, withState, worktreeArg } from './state-support.js';

type O = Record<string, unknown>;
const str = (v: unknown): string | undefined => (v === undefined ? undefined : String(v));

export async function init(cli: CliContext, args: string[], opts: O): Promise<CommandResult> {
  if (opts.releaseClaims && !opts.force)
    throw new TugError('InvalidArgument', { reason: '--release-claims requires --force' });
  const { init } = await import('../../state/init.js');
  const r = await withState(cli, 'state init', 'read', (ctx) =>
    init(ctx, { plan: args[0]!, force: Boolean(opts.force), release_claims: Boolean(opts.releaseClaims) }),
  );
  const { gitignore_added, ...data } = r;
  const what = r.reinitialized ? 'Re-initialized' : r.already_initialized ? 'Already initialized' : 'Initialized';
  let text = `${what} ${r.plan_path}: ${r.steps_created} steps, ${r.checklist_items_created} checklist items, ${r.refactors_created} refactors created`;
  if (r.implicit_sequential) text += ' (no Depends-on lines: steps run in order)';
  if (gitignore_added.length) text += `\nAdded to .gitignore: ${gitignore_added.join(', ')}`;
  return { data, text };
}

export async function claim(cli: CliContext, args: string[], opts: O): Promise<CommandResult> {
  const lease = leaseOpt(opts.leaseDuration);
  const { claim } = await import('../../state/claim.js');
  const { resolvePlanRef } = await import('../../state/plan-ref.js');
  const { slugOfPlanPath } = await import('../../plan/resolve.js');
  const { branchTipFast } = await import('../../git/log.js');
  const r = await withState(cli, 'state claim', 'write', async (ctx, repo) => {
    const worktree = worktreeArg(repo, String(opts.worktree), cli);
    const ref = resolvePlanRef(ctx, args[0]!, worktree);
    const slug = slugOfPlanPath(ref.plan_path);
    const branch = slug ? `tugplan/${slug}` : null;
    const tip = branch ? branchTipFast(repo.commonDir, branch, repo.worktreeRoot, cli.env) : null;
    return claim(ctx, {
      plan: ref.plan_path,
      worktree,
      lease_seconds: lease,
      step: str(opts.step),
      integration: branch && tip ? { branch, tip } : null,
    });
  });
  const text = r.claimed
    ? `${r.resumed ? 'Resumed' : 'Claimed'} ${r.step_anchor}: ${r.step_title} (attempt ${r.attempt}${r.reclaimed_from_expired ? `, taken over from ${r.previous_owner}` : ''})\n` +
      `Lease expires ${r.lease_expires_at}; ${r.remaining_ready} more ready, ${r.total_remaining} not completed`
    : `Nothing claimed (${r.reason})` +
      (r.blocked_by?.length ? `; blocked by: ${r.blocked_by.join(', ')}` : '') +
      (r.claimed_by ? `; claimed by ${r.claimed_by}` : '') +
      (r.blocked_steps.length ? `\nBlocked: ${r.blocked_steps.join(', ')}` : '') +
      (r.claimed_steps.length ? `\nClaimed: ${r.claimed_steps.join(', ')}` : '') +
      (r.failed_steps.length ? `\nFailed: ${r.failed_steps.join(', ')}` : '');
  return { data: r, text };
}

function owner(opts: O) {
  return { attempt: attemptOpt(opts.attempt) };
}

export async function start(cli: CliContext, args: string[], opts: O): Promise<CommandResult> {
  const { attempt } = owner(opts);
  const { start } = await import('../../state/start.js');
  const r = await withState(cli, 'state start', 'write', (ctx, repo) =>
    start(ctx, { plan: args[0]!, step: args[1]!, worktree: worktreeArg(repo, String(opts.worktree), cli), attempt }),
  );
  return {
    data: r,
    text: r.already_started
      ? `${r.step_anchor} was already in progress (since ${r.started_at})`
      : `Started ${r.step_anchor}`,
  };
}

export async function heartbeat(cli: CliContext, args: string[], opts: O): Promise<CommandResult> {
  const { attempt } = owner(opts);
  const lease = leaseOpt(opts.leaseDuration);
  const { heartbeat } = await import('../../state/heartbeat.js');
  const r = await withState(cli, 'state heartbeat', 'write', (ctx, repo) =>
    heartbeat(ctx, {
      plan: args[0]!,
      step: args[1]!,
      worktree: worktreeArg(repo, String(opts.worktree), cli),
      attempt,
      lease_seconds: lease,
    }),
  );
  return { data: r, text: `Lease of ${r.step_anchor} renewed until ${r.lease_expires_at}` };
}

export async function update(cli: CliContext, args: string[], opts: O, cmd: Command): Promise<CommandResult> {
  const { attempt } = owner(opts);
  const { itemFlags } = await import('./state-update-flags.js');
  const { checkStatus, parseBatch } = await import('../../state/update-input.js');
  let items = itemFlags(cmd);
  const bulk: BulkChange[] = [];
  for (const [flag, kind] of [
    ['allTasks', 'task'],
    ['allTests', 'test'],
    ['allCheckpoints', 'checkpoint'],
    ['all', 'all'],
  ] as const) {
    if (opts[flag] !== undefined) bulk.push({ kind, status: checkStatus(String(opts[flag]), false) });
  }
  const batch = Boolean(opts.batch);
  if (batch) {
    if (items.length > 0 || bulk.length > 0)
      throw new TugError('InvalidArgument', { reason: '--batch cannot be combined with per-item or --all* flags' });
    items = parseBatch(readStdin('--batch'));
  }
  const reason = str(opts.reason);
  const { update } = await import('../../state/update.js');
  const r = await withState(cli, 'state update', 'write', (ctx, repo) =>
    update(ctx, {
      plan: args[0]!,
      step: args[1]!,
      worktree: worktreeArg(repo, String(opts.worktree), cli),
      attempt,
      items,
      bulk,
      reason,
      batch,
      complete_remaining: Boolean(opts.completeRemaining),
    }),
  );
  const c = (k: { open: number; in_progress: number; completed: number; deferred: number }) =>
    `${k.completed + k.deferred}/${k.open + k.in_progress + k.completed + k.deferred}`;
  let text = `Updated ${r.updated} item(s) of ${r.step_anchor}: tasks ${c(r.tasks)}, tests ${c(r.tests)}, checkpoints ${c(r.checkpoints)}`;
  if (r.auto_completed_steps.length) text += `\nAuto-completed: ${r.auto_completed_steps.join(', ')}`;
  return { data: r, text };
}

export async function artifact(cli: CliContext, args: string[], opts: O): Promise<CommandResult> {
  const { attempt } = owner(opts);
  const summaryFile = str(opts.summaryFile);
  const contentFile = str(opts.contentFile);
  if ((opts.summary === undefined) === (summaryFile === undefined)) {
    throw new TugError('InvalidArgument', { reason: 'give exactly one of --summary and --summary-file' });
  }
  if (summaryFile === '-' && contentFile === '-')
    throw new TugError('InvalidArgument', {
      reason: 'at most one of --summary-file and --content-file can read stdin',
    });
  const summary = summaryFile !== undefined ? readTextFile('--summary-file', summaryFile) : String(opts.summary);
  const content = contentFile !== undefined ? readTextFile('--content-file', contentFile) : undefined;
  if ((summaryFile === '-' && summary === '') || (contentFile === '-' && content === '')) {
    throw new TugError('InvalidArgument', { reason: 'stdin is empty' });
  }
  const { artifact } = await import('../../state/artifact.js');
  const r = await withState(cli, 'state artifact', 'write', (ctx, repo) =>
    artifact(ctx, {
      plan: args[0]!,
      step: args[1]!,
      worktree: worktreeArg(repo, String(opts.worktree), cli),
      attempt,
      kind: String(opts.kind),
      summary,
      content,
    }),
  );
  return {
    data: r,
    text: `Recorded ${r.kind} #${r.artifact_id} for ${r.step_anchor}${r.truncated ? ' (truncated)' : ''}`,
  };
}

export async function complete(cli: CliContext, args: string[], opts: O): Promise<CommandResult> {
  const { attempt } = owner(opts);
  const force = str(opts.force);
  const { complete } = await import('../../state/complete.js');
  const { resolveCommitish } =
    opts.commit === undefined ? { resolveCommitish: null } : await import('../../git/log.js');
  const r = await withState(cli, 'state complete', 'write', (ctx, repo) => {
    const worktree = worktreeArg(repo, String(opts.worktree), cli);
    let commit: string | undefined;
    if (opts.commit !== undefined) {
      const rev = String(opts.commit);
      const full = rev.startsWith('-') ? null : resolveCommitish!(worktree, rev, cli.env);
      if (!full)
        throw new TugError('InvalidArgument', {
          reason: `--commit ${JSON.stringify(rev)} does not name a commit in ${worktree}`,
          argument: '--commit',
        });
      commit = full;
    }
    return complete(ctx, { plan: args[0]!, step: args[1]!, worktree, attempt, commit, force });
  });
  let text = r.already_completed
    ? `${r.step_anchor} was already completed`
    : `Completed ${r.step_anchor}${r.forced ? ` (forced: ${r.force_reason})` : ''}`;
  if (r.commit_hash) text += ` at ${r.commit_hash.slice(0, 12)}`;
  text += r.plan_completed ? '\nThe plan is complete.' : `\n${r.remaining_steps} step(s) not completed`;
  return { data: r, text };
}

export async function release(cli: CliContext, args: string[], opts: O): Promise<CommandResult> {
  const { attempt } = owner(opts);
  const { release } = await import('../../state/release.js');
  const r = await withState(cli, 'state release', 'write', (ctx, repo) =>
    release(ctx, { plan: args[0]!, step: args[1]!, worktree: worktreeArg(repo, String(opts.worktree), cli), attempt }),
  );
  return { data: r, text: `Released ${r.step_anchor}` };
}

export async function fail(cli: CliContext, args: string[], opts: O): Promise<CommandResult> {
  const { attempt } = owner(opts);
  const { fail } = await import('../../state/release.js');
  const r = await withState(cli, 'state fail', 'write', (ctx, repo) =>
    fail(ctx, {
      plan: args[0]!,
      step: args[1]!,
      worktree: worktreeArg(repo, String(opts.worktree), cli),
      attempt,
      reason: String(opts.reason),
    }),
  );
  return {
    data: r,
    text: `Attempt ${r.attempt} of ${r.step_anchor} failed (${r.failures} failure(s)); the step is ${r.step_status}`,
  };
}

export async function reset(cli: CliContext, args: string[]): Promise<CommandResult> {
  const { reset } = await import('../../state/reset.js');
  const r = await withState(cli, 'state reset', 'write', (ctx) => reset(ctx, { plan: args[0]!, step: args[1]! }));
  return { data: r, text: `Reset ${r.step_anchor} (was ${r.previous_status})` };
}

export async function reconcile(cli: CliContext, args: string[], opts: O): Promise<CommandResult> {
  const { reconcile } = await import('../../state/reconcile.js');
  const { resolvePlanRef } = await import('../../state/plan-ref.js');
  const { slugOfPlanPath } = await import('../../plan/resolve.js');
  const { branchTipFast, listTrailerCommits, localBranches, resolveCommitish } = await import('../../git/log.js');
  const { listWorktrees } = await import('../../git/repo.js');
  const r = await withState(cli, 'state reconcile', 'write', (ctx, repo) => {
    const ref = resolvePlanRef(ctx, args[0]!);
    const refs = [...((opts.ref as string[] | undefined) ?? [])];
    if (opts.allBranches) {
      refs.push(...localBranches(repo.worktreeRoot, cli.env).map((b) => `refs/heads/${b}`));
      for (const w of listWorktrees(repo, cli.env)) if (w.head) refs.push(w.head);
    }
    if (refs.length === 0) {
      const slug = slugOfPlanPath(ref.plan_path);
      const branch = slug ? `tugplan/${slug}` : null;
      refs.push(
        branch && branchTipFast(repo.commonDir, branch, repo.worktreeRoot, cli.env) ? `refs/heads/${branch}` : 'HEAD',
      );
    }
    for (const r of refs) {
      if (r.startsWith('-'))
        throw new TugError('InvalidArgument', { reason: `--ref ${JSON.stringify(r)} is not a ref`, argument: '--ref' });
      if (!resolveCommitish(repo.worktreeRoot, r, cli.env))
        throw new TugError('InvalidArgument', {
          reason: `--ref ${JSON.stringify(r)} does not name a commit`,
          argument: '--ref',
        });
    }
    const { commits, scanned } = listTrailerCommits(repo.worktreeRoot, [...new Set(refs)], cli.env);
    return reconcile(ctx, { plan: ref.plan_path, commits, scanned_commits: scanned, force: Boolean(opts.force) });
  });
  const lines = [`Scanned ${r.scanned_commits} commit(s); reconciled ${r.reconciled.length} step(s)`];
  for (const x of r.reconciled)
    lines.push(`  ${x.step_anchor}: ${x.previous_status} → completed at ${x.commit_hash.slice(0, 12)}`);
  for (const x of r.skipped_mismatches)
    lines.push(`  ${x.step_anchor}: skipped, DB has ${x.db_hash.slice(0, 12)}, git has ${x.git_hash.slice(0, 12)}`);
  for (const x of r.skipped_steps) lines.push(`  ${x.step_anchor}: skipped (${x.reason})`);
  if (r.unknown_steps.length) lines.push(`  unknown anchors: ${r.unknown_steps.join(', ')}`);
  return { data: r, text: lines.join('\n') };
}

export async function prune(cli: CliContext, _args: string[], opts: O): Promise<CommandResult> {
  const { prune } = await import('../../state/prune.js');
  const { listWorktrees } = await import('../../git/repo.js');
  const r = await withState(cli, 'state prune', 'write', (ctx, repo) =>
    prune(ctx, {
      work_trees: ctx.store ? listWorktrees(repo, cli.env).map((w) => w.path) : [],
      dry_run: Boolean(opts.dryRun),
      purge: Boolean(opts.purge),
    }),
  );
  const verb = opts.purge ? 'purge' : 'archive';
  const text =
    r.pruned.length === 0
      ? 'Nothing to prune'
      : `${r.dry_run ? `Would ${verb}` : opts.purge ? 'Purged' : 'Archived'}: ${r.pruned.join(', ')}`;
  return { data: r, text };
}
