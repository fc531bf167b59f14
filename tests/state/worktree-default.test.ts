/**
 * Issue 22 item 23: the state owner commands default `--worktree` to the work tree of the current
 * directory (like `tugcode commit`); an explicit `--worktree` still wins, an empty one is still refused.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { cliRepo, st } from './cli-helpers.js';

/** Who holds `step` according to `state show --json`. */
function holder(root: string, step: string): string | null {
  const r = st(root, ['show', 'demo', '--step', step]);
  const row = (r.json.plans[0].steps as { anchor: string; claimed_by: string | null }[]).find((s) => s.anchor === step);
  return row?.claimed_by ?? null;
}

describe('state owner commands without --worktree', () => {
  it('claim, start, update, complete from a subdirectory of a linked worktree act as that worktree', () => {
    const { root, w1 } = cliRepo();
    const sub = join(w1, 'deep', 'er');
    mkdirSync(sub, { recursive: true });
    const claim = st(root, ['claim', 'demo'], { cwd: sub });
    expect(claim.json, claim.stderr).toMatchObject({ status: 'ok', claimed: true, step_anchor: 'step-0' });
    expect(holder(root, 'step-0')).toBe(realpathSync(w1));
    for (const args of [
      ['start', 'demo', 'step-0', '--attempt', '1'],
      ['heartbeat', 'demo', 'step-0'],
      ['update', 'demo', 'step-0', '--complete-remaining'],
      ['complete', 'demo', 'step-0', '--attempt', '1'],
    ]) {
      const r = st(root, args, { cwd: sub });
      expect(r.json.status, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe('ok');
    }
    expect(st(root, ['show', 'demo', '--step', 'step-0']).json.plans[0].steps[0].status).toBe('completed');
  });

  it('in the main checkout acts as the main checkout', () => {
    const { root } = cliRepo();
    const r = st(root, ['claim', 'demo'], { cwd: join(root, '.tugtool') });
    expect(r.json, r.stderr).toMatchObject({ status: 'ok', step_anchor: 'step-0' });
    expect(holder(root, 'step-0')).toBe(realpathSync(root));
  });

  it('an explicit --worktree wins over the current directory', () => {
    const { root, w1, w2 } = cliRepo();
    const r = st(root, ['claim', 'demo', '--worktree', w2], { cwd: w1 });
    expect(r.json.status, r.stderr).toBe('ok');
    expect(holder(root, 'step-0')).toBe(realpathSync(w2));
    // The owner is w2: the same call without --worktree in w1 is a new claimer, not the owner.
    const start = st(root, ['start', 'demo', 'step-0'], { cwd: w1 });
    expect(start.json.error.code).toBe('NotOwner');
  });

  it('an empty --worktree (an unset $TUG_WORKTREE) is still refused, not read as the current directory', () => {
    const { root, w1 } = cliRepo();
    const r = st(root, ['claim', 'demo', '--worktree', ''], { cwd: w1 });
    expect(r.code).toBe(2);
    expect(r.json.error).toMatchObject({ code: 'InvalidArgument', details: { argument: '--worktree' } });
    expect(holder(root, 'step-0')).toBeNull();
  });

  it('--help names the default', () => {
    const { root } = cliRepo();
    const h = runCli(['state', 'claim', '--help'], { cwd: root });
    expect(h.stdout.replace(/\s+/g, ' ')).toContain('default: the work tree of the current directory');
  });
});
