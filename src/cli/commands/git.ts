/**
 * `tugcode worktree create|list|remove`, `commit`, `merge`, `status`, `doctor` (docs/git.md §3–§7):
 * tables, operations (src/ops/git.ts, loaded on first use) and text renderers.
 */
import type { Command } from 'commander';
import * as T from '../../contract/inputs/git.js';
import type { CliApp, CliCommand } from '../define.js';

const op =
  (name: keyof typeof import('../../ops/git.js')): CliCommand['op'] =>
  async () =>
    (await import('../../ops/git.js'))[name] as never;
const text =
  (name: keyof typeof import('./git-text.js')): CliCommand['text'] =>
  async (data, cli) =>
    ((await import('./git-text.js'))[name] as (d: unknown, c: typeof cli) => string | Promise<string>)(data, cli);

export function registerGit(program: Command, app: CliApp): void {
  const wt = program.command('worktree').description('create, list and remove plan worktrees under .tugtree/');
  app.register(wt, { table: T.worktreeCreate, op: op('worktreeCreate'), text: text('worktreeCreate') });
  app.register(wt, { table: T.worktreeList, op: op('worktreeList'), text: text('worktreeList') });
  app.register(wt, { table: T.worktreeRemove, op: op('worktreeRemove'), text: text('worktreeRemove') });
  app.register(program, { table: T.commit, op: op('commit'), text: text('commit') });
  app.register(program, { table: T.merge, op: op('merge'), text: text('merge') });
  app.register(program, { table: T.status, op: op('status'), text: text('status') });
  app.register(program, {
    table: T.doctor,
    op: op('doctor'),
    text: text('doctor'),
    // A failure prints the same table as a success (docs/git.md §7): its details are the checks and summary.
    errorText: async (err, cli) => (err.code === 'DoctorFailed' ? text('doctor')!(err.details, cli, {}) : undefined),
  });
}
