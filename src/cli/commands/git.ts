/**
 * `tugcode worktree create|list|remove`, `commit`, `merge`, `status`, `doctor` (04-git.md §3–§7).
 * Each body maps flags to library input and lazy-loads the library.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { TugError } from '../../contract/errors.js';
import { action } from '../action.js';
import type { CliContext } from '../context.js';
import type { FlowCtx } from '../../git/flow-context.js';

async function flow(ctx: CliContext): Promise<FlowCtx> {
  const { repo, config } = await ctx.load();
  return { repo, config, clock: ctx.clock, warnings: ctx.warnings, env: ctx.env };
}

/** Text from `--x` or `--x-file PATH|-` (at most one of them; stdin only when named). */
function textOption(
  opts: Record<string, unknown>,
  name: string,
  fileName: string,
  required: boolean,
): string | undefined {
  const direct = opts[name] as string | undefined;
  const file = opts[fileName] as string | undefined;
  const flag = (n: string) => '--' + n.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
  if (direct !== undefined && file !== undefined) {
    throw new TugError('InvalidArgument', { reason: `pass either ${flag(name)} or ${flag(fileName)}, not both` });
  }
  let text = direct;
  if (file !== undefined) {
    if (file === '-') {
      if (process.stdin.isTTY)
        throw new TugError('InvalidArgument', { reason: `${flag(fileName)} - reads stdin, which is a terminal` });
      text = readFileSync(0, 'utf8');
      if (text === '') throw new TugError('InvalidArgument', { reason: `${flag(fileName)} -: stdin is empty` });
    } else {
      try {
        text = readFileSync(file, 'utf8');
      } catch (e) {
        throw new TugError('InvalidArgument', { reason: `cannot read ${file}: ${(e as Error).message}` });
      }
    }
  }
  if (text !== undefined && text.includes('\0'))
    throw new TugError('InvalidArgument', { reason: `${flag(name)} contains a NUL byte` });
  if (required && (text === undefined || text.trim() === '')) {
    throw new TugError('InvalidArgument', {
      reason: `${flag(name)} (or ${flag(fileName)}) is required and must not be empty`,
    });
  }
  return text;
}

function attemptOption(v: unknown): number | undefined {
  if (v === undefined) return undefined;
  const s = String(v);
  if (!/^\d{1,9}$/.test(s))
    throw new TugError('InvalidArgument', {
      reason: `--attempt must be a non-negative integer, got ${JSON.stringify(s)}`,
    });
  return Number(s);
}

function registerWorktree(program: Command): void {
  const wt = program.command('worktree').description('create, list and remove plan worktrees under .tugtree/');
  wt.command('create <plan>')
    .description('create branch tugplan/<slug>--<timestamp> and its worktree; state init + reconcile the plan')
    .option('--base <branch>', 'base branch (default: config run.base_branch)')
    .option('--name <name>', 'use <name> instead of the UTC timestamp')
    .option('--reuse', 'return the live worktree of this plan when there is one')
    .option('--new', 'make another worktree even when one exists')
    .action(
      action('worktree create', async (ctx, args, opts) => {
        const { createWorktree } = await import('../../git/worktree.js');
        const data = await createWorktree(await flow(ctx), {
          plan: args[0]!,
          base: opts.base as string | undefined,
          name: opts.name as string | undefined,
          reuse: Boolean(opts.reuse),
          new: Boolean(opts.new),
        });
        const text = [
          `${data.reused ? 'reusing' : 'created'} ${data.worktree_path}`,
          `branch ${data.branch_name} (from ${data.base_branch}), plan ${data.plan_path}`,
          `ready: ${data.ready_steps.join(', ') || '(none)'}   all: ${data.all_steps.length} step(s)`,
        ].join('\n');
        return { data, text };
      }),
    );
  wt.command('list')
    .description('worktrees under .tugtree/ with branch, HEAD, dirty flag, plan and held steps (read-only)')
    .action(
      action('worktree list', async (ctx) => {
        const { listTugWorktrees } = await import('../../git/worktree-admin.js');
        const data = await listTugWorktrees(await flow(ctx));
        const text = data.worktrees.length
          ? data.worktrees
              .map((w) => {
                const flags = [w.missing ? 'MISSING' : '', w.dirty ? 'dirty' : ''].filter(Boolean).join(',');
                const held = w.claimed_steps
                  .map((c) => `${c.step_anchor}${c.lease_expired ? ' (expired)' : ''}`)
                  .join(', ');
                return `${w.worktree_path}  ${w.branch ?? '(detached)'}  ${w.head?.slice(0, 12) ?? '-'}${flags ? `  [${flags}]` : ''}  ${w.plan_path ?? '(no plan)'}${held ? `  holds: ${held}` : ''}`;
              })
              .join('\n')
          : 'no worktrees under .tugtree/';
        return { data, text };
      }),
    );
  wt.command('remove <worktree>')
    .description(
      'remove one worktree (path, directory name or branch) and its branch; refuses dirty, unmerged or claimed trees',
    )
    .option('--force', 'remove anyway and release its claims (admin action)')
    .action(
      action('worktree remove', async (ctx, args, opts) => {
        const { removeWorktree } = await import('../../git/worktree-admin.js');
        const data = await removeWorktree(await flow(ctx), args[0]!, { force: Boolean(opts.force) });
        const text = [
          `removed ${data.worktree_path}`,
          data.branch_deleted
            ? `deleted branch ${data.branch} (was ${data.branch_tip?.slice(0, 12)}; restore with git branch ${data.branch} ${data.branch_tip})`
            : '',
          data.released_claims.length ? `released: ${data.released_claims.map((c) => c.step_anchor).join(', ')}` : '',
        ]
          .filter(Boolean)
          .join('\n');
        return { data, text };
      }),
    );
}

export function registerGit(program: Command): void {
  registerWorktree(program);

  program
    .command('commit')
    .description('commit a step: log entry, git add -A, Tug-Step/Tug-Plan trailers, then strict state complete')
    .option('--worktree <path>', 'the worktree to commit in (default: the current work tree)')
    .requiredOption('--plan <plan>', 'plan path or slug')
    .requiredOption('--step <anchor>', 'the step this commit completes')
    .option('--message <text>', 'commit message (multi-line allowed)')
    .option('--message-file <path>', 'read the commit message from a file, or - for stdin')
    .option('--summary <text>', 'summary for the implementation-log entry (default: the message subject)')
    .option('--summary-file <path>', 'read the summary from a file, or - for stdin')
    .option('--attempt <n>', 'fencing token passed to state complete')
    .option('--integrate', 'rebase onto and fast-forward tugplan/<slug> (created from the base when missing)')
    .option('--allow-main', 'allow committing in the main checkout')
    .option('--allow-empty', 'record the step even without changes')
    .action(
      action('commit', async (ctx, _args, opts) => {
        if (opts.messageFile === '-' && opts.summaryFile === '-')
          throw new TugError('InvalidArgument', {
            reason: 'only one of --message-file and --summary-file may read stdin',
          });
        const message = textOption(opts, 'message', 'messageFile', true)!;
        const summary = textOption(opts, 'summary', 'summaryFile', false);
        const attempt = attemptOption(opts.attempt);
        const { commitStep } = await import('../../git/commit.js');
        const data = await commitStep(await flow(ctx), {
          worktree: opts.worktree as string | undefined,
          plan: opts.plan as string,
          step: opts.step as string,
          message,
          summary,
          attempt,
          integrate: Boolean(opts.integrate),
          allowMain: Boolean(opts.allowMain),
          allowEmpty: Boolean(opts.allowEmpty),
        });
        const text = [
          `committed ${data.commit_hash.slice(0, 12)} on ${data.branch} (${data.files_staged.length} file(s))`,
          data.integrated ? `integrated into ${data.integration_branch}` : '',
          data.state_updated ? `state: step completed${data.plan_completed ? '; plan completed' : ''}` : '',
          data.state_update_failed
            ? `state NOT updated (${data.state_failure_reason}): ${data.state_error?.error.message}\n  heal later with: tugcode state reconcile <plan>`
            : '',
        ]
          .filter(Boolean)
          .join('\n');
        return { data, text };
      }),
    );

  program
    .command('merge <plan>')
    .description(
      'merge a completed plan back into its base (--no-ff), verifying every step commit; then remove merged worktrees',
    )
    .option('--into <branch>', 'target branch (default: the base recorded for the plan branch)')
    .option(
      '--branch <branch>',
      'the branch to merge when the plan has several worktree branches and no integration branch',
    )
    .option('--dry-run', 'report what would happen, change nothing')
    .option('--force', 'merge even when steps are not completed')
    .action(
      action('merge', async (ctx, args, opts) => {
        const { mergePlan } = await import('../../git/merge.js');
        const data = await mergePlan(await flow(ctx), {
          plan: args[0]!,
          into: opts.into as string | undefined,
          branch: opts.branch as string | undefined,
          dryRun: Boolean(opts.dryRun),
          force: Boolean(opts.force),
        });
        const verb = data.dry_run ? 'would merge' : data.already_merged ? 'already merged' : 'merged';
        const text = [
          `${verb} ${data.branch} into ${data.into}${data.merge_commit ? ` (${data.merge_commit.slice(0, 12)})` : ''}: ${data.steps_included.length} step(s)`,
          ...data.worktrees_removed.map((w) => `${data.dry_run ? 'would remove' : 'removed'} worktree ${w}`),
          ...data.branches_deleted.map((b) => `${data.dry_run ? 'would delete' : 'deleted'} branch ${b}`),
          ...data.kept.map((k) => `kept ${k.branch}${k.worktree_path ? ` (${k.worktree_path})` : ''}: ${k.reason}`),
        ].join('\n');
        return { data, text };
      }),
    );

  program
    .command('status [plan]')
    .description('one progress line per plan (from state.db, else from the checkboxes); read-only')
    .action(
      action('status', async (ctx, args) => {
        const { planStatus, renderStatus } = await import('../../git/status.js');
        const data = await planStatus(await flow(ctx), args[0]);
        return { data, text: renderStatus(data) };
      }),
    );

  program
    .command('doctor')
    .description('read-only health checks of git, .tugtool/, state.db, worktrees and the kernel')
    .action(
      action('doctor', async (ctx) => {
        const { runDoctor, renderDoctor } = await import('../../git/doctor.js');
        const { loadConfig } = await import('../../config/config.js');
        const data = await runDoctor({
          cwd: ctx.cwd,
          env: ctx.env,
          clock: ctx.clock,
          warnings: ctx.warnings,
          loadConfig: (repo) => loadConfig(repo.mainRoot, ctx.env, ctx.warnings),
        });
        return { data, text: renderDoctor(data) };
      }),
    );
}
