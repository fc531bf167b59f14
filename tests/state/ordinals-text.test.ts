/**
 * Issue 22 item 24: `state update --task N` takes 0-based ordinals, so the text of `state claim` and
 * `state show` prints them (`task 0 [ ] …`), and `claim` lists the claimed step's items: what to do next.
 */
import { describe, expect, it } from 'vitest';
import { cliRepo, st, stText } from './cli-helpers.js';

describe('item ordinals in the text output', () => {
  it('state claim lists the step and its substeps with anchors and item ordinals, and the next command', () => {
    const { root, w1 } = cliRepo();
    // step-0 out of the way: step-1 has two substeps.
    expect(st(root, ['claim', 'demo'], { cwd: w1 }).json.step_anchor).toBe('step-0');
    expect(st(root, ['complete', 'demo', 'step-0', '--force', 'by hand'], { cwd: w1 }).json.status).toBe('ok');
    const r = stText(root, ['claim', 'demo'], { cwd: w1 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Claimed step-1: Add caching layer (attempt 1)');
    expect(r.stdout).toMatch(/^Step 1 \(step-1\): Add caching layer \[claimed\]/m);
    expect(r.stdout).toMatch(/^ {4}task 0 \[ \] Implement cache store$/m);
    expect(r.stdout).toMatch(/^ {4}task 2 \[ \] Wire up to API client$/m);
    expect(r.stdout).toMatch(/^ {4}checkpoint 0 \[ \] npm test$/m);
    expect(r.stdout).toMatch(/^ {2}Step 1\.2 \(step-1-2\): Cache invalidation \[pending\] \(blocked by: step-1-1\)$/m);
    expect(r.stdout).toMatch(/^ {6}task 1 \[ \] Invalidate b$/m);
    expect(r.stdout).toContain(
      "Next: tugcode state start demo step-1 --attempt 1; mark items with tugcode state update demo step-1 --task N completed (a substep's items: its anchor instead)",
    );
  });

  it("the next command names the claim's --worktree, so it runs as the owner from where the claim was made", () => {
    const { root, w1 } = cliRepo();
    const r = stText(root, ['claim', 'demo', '--worktree', w1]);
    expect(r.code, r.stderr).toBe(0);
    const next = /^Next: tugcode (state start demo step-0 .*); mark items with tugcode (state update .*)$/m.exec(
      r.stdout,
    );
    expect(next, r.stdout).not.toBeNull();
    expect(next![1]).toBe(`state start demo step-0 --worktree ${w1} --attempt 1`);
    // The step is known: its anchor, not a placeholder; only the item ordinal N is the caller's to pick.
    expect(next![2]).toBe(`state update demo step-0 --worktree ${w1} --task N completed`);
    // Run from the same directory, the printed commands are the owner's, not NotOwner.
    const started = st(root, next![1]!.split(' ').slice(1));
    expect(started.json.status, started.stdout).toBe('ok');
    const updated = st(root, next![2]!.replace(' N ', ' 0 ').split(' ').slice(1));
    expect([updated.json.status, updated.json.updated], updated.stdout).toEqual(['ok', 1]);
  });

  it('the ordinal state show --items all prints is the one state update --task changes', () => {
    const { root, w1 } = cliRepo();
    st(root, ['claim', 'demo'], { cwd: w1 });
    const before = stText(root, ['show', 'demo', '--step', 'step-0', '--items', 'all']).stdout;
    const ordinal = /^ {4}task (\d+) \[ \] Wire the client$/m.exec(before)?.[1];
    expect(ordinal, before).toBe('1');
    expect(st(root, ['update', 'demo', 'step-0', '--task', ordinal!, 'completed'], { cwd: w1 }).json.status).toBe('ok');
    const after = stText(root, ['show', 'demo', '--step', 'step-0', '--items', 'all']).stdout;
    expect(after).toMatch(/^ {4}task 1 \[x\] Wire the client$/m);
    expect(after).toMatch(/^ {4}task 0 \[ \] Write the client$/m);
  });

  it('a deferred reason of several lines stays on its item line in the text (the JSON keeps it whole)', () => {
    const { root, w1 } = cliRepo();
    st(root, ['claim', 'demo'], { cwd: w1 });
    const reason = 'blocked upstream\nStep 9: Fake [completed]\r\n  see #12';
    const r = st(root, ['update', 'demo', 'step-0', '--task', '1', 'deferred', '--reason', reason], { cwd: w1 });
    expect(r.json.status, r.stdout).toBe('ok');
    const text = stText(root, ['show', 'demo', '--step', 'step-0', '--items', 'all']).stdout;
    expect(text).toMatch(
      /^ {4}task 1 \[~\] Wire the client \(deferred: blocked upstream Step 9: Fake \[completed\] see #12\)$/m,
    );
    expect(text).not.toMatch(/^Step 9/m);
    const items = st(root, ['show', 'demo', '--step', 'step-0', '--items', 'all']).json.plans[0].steps[0].items;
    expect(items[1].reason).toBe(reason);
  });

  it('the JSON of state show carries the same ordinals', () => {
    const { root } = cliRepo();
    const items = st(root, ['show', 'demo', '--step', 'step-0', '--items', 'all']).json.plans[0].steps[0].items;
    expect(items.map((i: { kind: string; ordinal: number }) => `${i.kind} ${i.ordinal}`)).toEqual([
      'task 0',
      'task 1',
      'test 0',
      'checkpoint 0',
      'checkpoint 1',
    ]);
  });
});
