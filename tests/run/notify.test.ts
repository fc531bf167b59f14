/**
 * `[run] notify` (docs/run.md §7.4): the command gets every event it should — a stall, a step failed at its
 * cap, a budget reached, the run's end — with the event's JSON on stdin; a failing or hanging one changes
 * nothing else (a warning, its group killed after 10 s, the workers never wait for it).
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/repo.js';
import { fakeAgents } from './fake-agents.js';
import { groupAlive, nodeImplementer, planText, runJsonl, runRepo, step } from './helpers.js';

/** A notify script with `body` (sh); `dir` holds what it records. */
function notifyScript(body: string): { argv: string; dir: string } {
  const dir = tempDir('tugcode-notify-');
  const script = join(dir, 'notify.sh');
  writeFileSync(script, `#!/bin/sh\n${body}\n`);
  chmodSync(script, 0o755);
  return { argv: `${script} ${dir}`, dir };
}

function recorded(dir: string): any[] {
  const f = join(dir, 'events');
  if (!existsSync(f)) return [];
  return readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

const config = (argv: string, more = '') => ({
  '.tugtool/config.toml': `[run]\nnotify = ${JSON.stringify(argv)}\n${more}`,
});

/** Two independent steps (a plan that declares no dependency is sequential): step-1 and step-2, step-3 after 2. */
const PLAN = planText([step(1, 'One'), step(2, 'Two'), step(3, 'Three', { deps: [2] })]);

/** step-1 stalls (silent), step-2 and step-3 are done. */
const STALLS = nodeImplementer(`
if (step === 'step-1') await sleep(120000);
writeFileSync(join(wt, step + '.txt'), step);
`);

describe('[run] notify', () => {
  it('records a stall, a step failed at its cap and the run’s end, each event’s JSON on stdin', () => {
    const n = notifyScript('cat >> "$1/events"; echo "$TUG_EVENT" >> "$1/types"');
    const root = runRepo(PLAN, 'demo', config(n.argv));
    const r = runJsonl(root, [
      'demo',
      '--workers',
      '1',
      '--implementer',
      STALLS.argv,
      '--stall-seconds',
      '2',
      '--max-attempts',
      '1',
    ]);
    expect(r.code, r.stderr).toBe(4);
    const got = recorded(n.dir);
    expect(got.map((e) => e.type)).toEqual(['stalled', 'step_failed', 'run_finished']);
    // The same objects the event stream carries, each naming its plan: a person with several runs going
    // learns from the notification which plan's step stalled or failed (docs/run.md §7.4).
    const stream = (t: string) => r.events.find((e) => e.type === t);
    expect(got[0]).toEqual({ ...stream('stalled'), plan_path: '.tugtool/tugplan-demo.md' });
    expect(got[1]).toEqual({ ...stream('step_failed'), plan_path: '.tugtool/tugplan-demo.md' });
    const { type: _t, at: _a, ...summary } = r.events.at(-1);
    expect(got[2]).toMatchObject({
      type: 'run_finished',
      plan_path: '.tugtool/tugplan-demo.md',
      ...summary,
      wall_ms: expect.any(Number),
    });
    expect(got[2].error.code).toBe('PlanIncomplete');
    expect(readFileSync(join(n.dir, 'types'), 'utf8')).toBe('stalled\nstep_failed\nrun_finished\n');
    expect(r.events.filter((e) => e.type === 'warning')).toEqual([]);
  });

  it('records budget_exhausted', () => {
    const n = notifyScript('cat >> "$1/events"');
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]), 'demo', config(n.argv));
    const r = runJsonl(root, ['demo', '--workers', '1', '--agent', 'claude', '--budget-usd', '0.2'], fakeAgents().env);
    expect(r.code).toBe(4);
    expect(recorded(n.dir).map((e) => e.type)).toEqual(['budget_exhausted', 'run_finished']);
    expect(recorded(n.dir)[0]).toMatchObject({ budget_usd: 0.2, usage: { cost_usd: 0.25 }, running: ['step-1'] });
  });

  it('a failing notify command is a warning and changes nothing else', () => {
    const n = notifyScript('echo "no route to the webhook" >&2; exit 7');
    const root = runRepo(PLAN, 'demo', config(n.argv));
    const r = runJsonl(root, [
      'demo',
      '--workers',
      '1',
      '--implementer',
      STALLS.argv,
      '--stall-seconds',
      '2',
      '--max-attempts',
      '1',
    ]);
    expect(r.code).toBe(4);
    expect(r.events.at(-1)).toMatchObject({
      status: 'error',
      steps_completed: ['step-2', 'step-3'],
      failed_steps: [{ step_anchor: 'step-1' }],
      error: { code: 'PlanIncomplete' },
    });
    const warnings = r.events.filter((e) => e.type === 'warning');
    expect(warnings.map((w) => w.code)).toEqual(['NotifyFailed', 'NotifyFailed', 'NotifyFailed']);
    expect(warnings[0].message).toMatch(
      /notify for (stalled|step_failed): .*notify\.sh exited 7: no route to the webhook/,
    );
    // Its output is in the run's notify log.
    expect(readFileSync(join(root, '.tugtool', 'logs', 'demo', 'notify.log'), 'utf8')).toContain(
      'no route to the webhook',
    );
  });

  it('a hanging notify command is killed after 10 s with its group; the workers never wait for it', () => {
    const n = notifyScript('echo $$ >> "$1/pids"; sleep 120');
    const root = runRepo(PLAN, 'demo', config(n.argv));
    // step-1 fails at once (its cap is 1); step-2 and step-3 run while the notify for that hangs.
    const impl = nodeImplementer(`
if (step === 'step-1') { console.error('broken'); process.exit(1); }
await sleep(300);
writeFileSync(join(wt, step + '.txt'), step);
`);
    const t0 = Date.now();
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--max-attempts', '1']);
    expect(r.code).toBe(4);
    expect(r.events.at(-1)).toMatchObject({
      steps_completed: ['step-2', 'step-3'],
      failed_steps: [{ step_anchor: 'step-1' }],
    });
    const at = (t: string, s?: string) =>
      Date.parse(r.events.find((e) => e.type === t && (s === undefined || e.step_anchor === s)).at);
    // step-3 was done long before the hanging notify's 10 s were up.
    expect(at('step_completed', 'step-3') - at('step_failed', 'step-1')).toBeLessThan(8000);
    const warnings = r.events.filter((e) => e.type === 'warning');
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/notify for step_failed: .* ran past 10 s and was killed/),
      expect.stringMatching(/notify for run_finished: .* ran past 10 s and was killed/),
    ]);
    // Two notify runs (step_failed, run_finished), each over 10 s; their groups are gone.
    expect(Date.now() - t0).toBeGreaterThan(10_000);
    const pids = readFileSync(join(n.dir, 'pids'), 'utf8').trim().split('\n').map(Number);
    expect(pids).toHaveLength(2);
    for (const p of pids) expect(groupAlive(p)).toBe(false);
  }, 90_000);
});
