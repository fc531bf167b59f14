/**
 * Issue 22 item 26: the text of `state log` names the operation of each event (claim, start, update,
 * complete, fail, release, reset, takeover, …) with its key details, marks the command that ran it when
 * that was not the `state` command itself (`[run]`), and shortens the worktree (`w1`, `main`).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { implementerScript, planText, runJsonl, runRepo, step } from '../run/helpers.js';
import { renderLog } from '../../src/state/log-text.js';
import { at } from './helpers.js';
import { cliRepo, st, stText } from './cli-helpers.js';

const OPS = /^ *\d+ {2}\S+ {2}(\S+) +(\S+) +(\S+)/;

describe('state log text', () => {
  it('for a plan that run drove: one named operation per event, the worker as w1/w2, [run]', () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] }), step(3, 'Three')]));
    const impl = implementerScript();
    writeFileSync(join(impl.failDir, 'step-2'), '1'); // one failed attempt: a fail event
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv]);
    expect(r.code, r.stderr).toBe(0);

    const log = runCli(['state', 'log', 'demo', '--limit', '200'], { cwd: root });
    expect(log.code, log.stderr).toBe(0);
    const lines = log.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('Plan: .tugtool/tugplan-demo.md');
    expect(log.stdout).not.toContain('.tugtree/'); // worker paths are shortened
    const events = lines.slice(1);
    const ops = new Set<string>();
    for (const line of events) {
      const m = OPS.exec(line);
      expect(m, line).not.toBeNull();
      const [, , who, op] = m!;
      expect(['admin', 'w1', 'w2'], line).toContain(who);
      expect(op, line).not.toBe('run');
      ops.add(op!);
    }
    for (const op of ['init', 'claim', 'start', 'update', 'complete', 'fail']) expect([...ops], op).toContain(op);
    expect(log.stdout).toMatch(/ step-1 +w[12] +claim +attempt 1, lease until \S+ {2}\[run\]$/m);
    expect(log.stdout).toMatch(/ step-1 +w[12] +complete +attempt 1, commit [0-9a-f]{12} {2}\[run\]$/m);
    expect(log.stdout).toMatch(/ step-2 +w[12] +fail +attempt 1, ".+", failures 1, step pending/m);
    expect(log.stdout).toMatch(/ step-2 +w[12] +claim +attempt 2, /m);
    expect(log.stdout).toMatch(/ step-3 +w[12] +update +1 item\(s\)[^:]*: task 0 completed/m);
  }, 180_000);

  it('for hand-run commands: takeover, release, reset, heartbeat revival, with main for the main checkout', () => {
    const { root, w1 } = cliRepo();
    const ok = (args: string[], cwd: string, now: string) => {
      const r = st(root, args, { cwd, now });
      expect(r.json.status, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe('ok');
    };
    ok(['claim', 'demo', '--lease-duration', '60'], root, at(0));
    ok(['heartbeat', 'demo', 'step-0', '--lease-duration', '60'], root, at(120)); // expired, nobody took it: revived
    ok(['update', 'demo', 'step-0', '--task', '1', 'completed'], root, at(130));
    ok(['claim', 'demo', '--step', 'step-0'], w1, at(400)); // takeover of the expired claim
    ok(['release', 'demo', 'step-0'], w1, at(410));
    ok(['claim', 'demo'], w1, at(420));
    ok(['reset', 'demo', 'step-0', '--force'], root, at(430));

    const text = stText(root, ['log', 'demo', '--step', 'step-0']).stdout;
    expect(text).toMatch(/ step-0 +main +claim +attempt 1, lease until /m);
    expect(text).toMatch(/ step-0 +main +heartbeat +attempt 1, lease revived \(expired \S+\), until \S+$/m);
    expect(text).toMatch(/ step-0 +main +update +1 item\(s\): task 1 completed$/m);
    expect(text).toMatch(
      / step-0 +one +takeover +from main \(lease expired\), attempt 2; discarded: 1 item\(s\) reopened$/m,
    );
    expect(text).toMatch(/ step-0 +one +release +attempt 2$/m);
    expect(text).toMatch(/ step-0 +admin +reset +was claimed, claimed by one, attempt 3$/m);
    expect(text).not.toMatch(/\[state /); // the state commands themselves are not repeated
  });

  it('a usage report: the role, its tokens by kind and its cost, not the stored JSON', () => {
    const usage = (id: number, details: Record<string, unknown>) => ({
      id,
      at: '2026-03-01T10:00:00.000Z',
      plan_path: '.tugtool/tugplan-demo.md',
      step_anchor: 'step-1',
      command: 'run',
      actor: '/r/.tugtree/tugplan__demo--w1',
      attempt: 2,
      details: { usage_id: id, ...details },
    });
    const none = { input_tokens: null, output_tokens: null, cache_read_tokens: null, cache_write_tokens: null };
    const lines = renderLog([
      usage(1, { ...none, role: 'implementer', input_tokens: 1000, output_tokens: 100, cost_usd: 0.5 }),
      usage(2, { ...none, role: 'reviewer', input_tokens: 20, cache_read_tokens: 3000, cost_usd: null }),
      usage(3, { ...none, role: 'resolver', cost_usd: 0.25 }),
    ]).split('\n');
    expect(lines.slice(1).map((l) => l.replace(/^.* usage {2}/, ''))).toEqual([
      'attempt 2, implementer 1,100 tokens (input 1,000, output 100) · $0.50  [run]',
      'attempt 2, reviewer 3,020 tokens (input 20, cache read 3,000) · cost unknown  [run]',
      'attempt 2, resolver no tokens · $0.25  [run]',
    ]);
  });
});
