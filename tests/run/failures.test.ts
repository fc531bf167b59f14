/**
 * `tugcode run` when attempts fail (docs/run.md §1 items 4.7 and 4.9, §3): a failing checkpoint command is a
 * `CheckpointFailed` attempt with its output as a `verification_report` artifact, and two parallel steps
 * that conflict on integration fail the later one with `IntegrationConflict`, which then rebuilds on the
 * newer tip. Real repositories, the built CLI, scripted implementers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git } from '../helpers/repo.js';
import { checkSchema } from '../helpers/cli.js';
import { runEventSchema } from '../../src/contract/schemas/run.js';
import { sql } from '../state/helpers.js';
import { nodeImplementer, planText, runJsonl, runRepo, step, stepCommits } from './helpers.js';

describe('tugcode run: a failing checkpoint command', () => {
  it('fails the attempt with CheckpointFailed, records the output as a verification_report, retries', () => {
    const plan = planText([
      step(1, 'Base', { checkpoint: 'echo checking flag.txt; test -f flag.txt' }),
      step(2, 'After', { deps: [1], checkpoint: 'test -f flag.txt' }),
    ]);
    const root = runRepo(plan);
    // The implementer writes its step file every time, but flag.txt only from attempt 2 on.
    const impl = nodeImplementer(`
appendFileSync(join(dir, 'attempts'), step + ' ' + attempt + '\\n');
writeFileSync(join(wt, step + '.txt'), step + '\\n');
if (attempt >= 2 || step !== 'step-1') writeFileSync(join(wt, 'flag.txt'), 'ok\\n');
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const summary = r.events.at(-1);
    expect(summary, r.stderr + r.stdout).toMatchObject({ type: 'summary', status: 'ok', failed_steps: [] });
    expect(r.code).toBe(0);
    for (const e of r.events) checkSchema(runEventSchema, e);
    expect([...summary.steps_completed].sort()).toEqual(['step-1', 'step-2']);

    const failures = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ step_anchor: 'step-1', attempt: 1, reason_code: 'CheckpointFailed' });
    expect(failures[0].reason).toContain('test -f flag.txt');
    expect(readFileSync(join(impl.dir, 'attempts'), 'utf8')).toBe('step-1 1\nstep-1 2\nstep-2 1\n');

    // The verification report holds the command's output; the attempt is recorded as failed.
    const artifacts = sql<{ kind: string; summary: string; content: string }>(
      root,
      `SELECT kind, summary, content FROM step_artifacts WHERE step_anchor = 'step-1' ORDER BY id`,
    );
    expect(artifacts).toHaveLength(1);
    expect(artifacts[0]).toMatchObject({ kind: 'verification_report', summary: 'checking flag.txt' });
    expect(artifacts[0]!.content).toContain('checking flag.txt');
    const s1 = sql<{ status: string; failures: number }>(
      root,
      `SELECT status, failures FROM steps WHERE anchor = 'step-1'`,
    );
    expect(s1[0]).toMatchObject({ status: 'completed', failures: 1 });

    // One commit per step on the integration branch, the retried one holding the flag.
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
    expect(git(root, 'show', 'tugplan/demo:flag.txt')).toBe('ok\n');
  });
});

describe('tugcode run: two parallel steps that conflict', () => {
  it('integrates one; the other fails with IntegrationConflict and succeeds on the new tip', () => {
    const plan = planText([
      step(1, 'Base'),
      step(2, 'Left', { deps: [1] }),
      step(3, 'Right', { deps: [1] }),
      step(4, 'Join', { deps: [2, 3], checkpoint: 'grep -q step-2 shared.txt && grep -q step-3 shared.txt' }),
    ]);
    const root = runRepo(plan);
    // step-2 and step-3 both write shared.txt. On their first attempt they wait for each other (so both
    // start from the same tip) and create the file; a later attempt finds it on the newer tip and appends.
    const impl = nodeImplementer(`
appendFileSync(join(dir, 'log'), step + ' ' + attempt + ' ' + existsSync(join(wt, 'shared.txt')) + '\\n');
writeFileSync(join(wt, step + '.txt'), step + '\\n');
if (step === 'step-2' || step === 'step-3') {
  if (attempt === 1) {
    mkdirSync(join(dir, 'barrier'), { recursive: true });
    writeFileSync(join(dir, 'barrier', step), '');
    const end = Date.now() + 20000;
    while (readdirSync(join(dir, 'barrier')).length < 2 && Date.now() < end) await sleep(20);
  }
  const shared = join(wt, 'shared.txt');
  if (existsSync(shared)) appendFileSync(shared, 'from ' + step + '\\n');
  else writeFileSync(shared, 'from ' + step + '\\n');
}
`);
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv]);
    const summary = r.events.at(-1);
    expect(summary, r.stderr + r.stdout).toMatchObject({ type: 'summary', status: 'ok' });
    expect(r.code).toBe(0);
    for (const e of r.events) checkSchema(runEventSchema, e);

    const failures = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failures).toHaveLength(1);
    const loser = failures[0].step_anchor as string;
    const winner = loser === 'step-2' ? 'step-3' : 'step-2';
    expect(['step-2', 'step-3']).toContain(loser);
    expect(failures[0]).toMatchObject({ attempt: 1, reason_code: 'IntegrationConflict' });
    expect(failures[0].reason).toContain('shared.txt');

    // The loser's second attempt started from the tip holding the winner's file.
    const log = readFileSync(join(impl.dir, 'log'), 'utf8').trim().split('\n');
    expect(log).toContain(`${loser} 1 false`);
    expect(log).toContain(`${winner} 1 false`);
    expect(log).toContain(`${loser} 2 true`);
    expect(log.filter((l) => l.startsWith(winner))).toHaveLength(1);

    // Each step's commit is on the integration branch exactly once, the loser's after the winner's.
    const commits = stepCommits(root, 'tugplan/demo');
    expect(commits).toEqual(['step-1', winner, loser, 'step-4']);
    expect(git(root, 'show', 'tugplan/demo:shared.txt')).toBe(`from ${winner}\nfrom ${loser}\n`);
    const steps = sql<{ anchor: string; status: string; failures: number }>(
      root,
      `SELECT anchor, status, failures FROM steps ORDER BY step_index`,
    );
    expect(steps.map((s) => [s.anchor, s.status, s.failures])).toEqual([
      ['step-1', 'completed', 0],
      ['step-2', 'completed', loser === 'step-2' ? 1 : 0],
      ['step-3', 'completed', loser === 'step-3' ? 1 : 0],
      ['step-4', 'completed', 0],
    ]);
  });
});

describe('the step brief of a retry', () => {
  it('carries the earlier failed attempts and the items as state.db has them', () => {
    const root = runRepo(planText([step(1, 'One')]));
    const impl = nodeImplementer(`
const brief = JSON.parse(readFileSync(process.env.TUG_STEP_JSON, 'utf8'));
writeFileSync(join(dir, 'brief-' + attempt + '.json'), JSON.stringify(brief));
if (attempt === 1) { console.error('first try fails'); process.exit(1); }
writeFileSync(join(wt, step + '.txt'), step);
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(r.code, r.stderr).toBe(0);
    const first = JSON.parse(readFileSync(join(impl.dir, 'brief-1.json'), 'utf8'));
    const second = JSON.parse(readFileSync(join(impl.dir, 'brief-2.json'), 'utf8'));
    expect(first.previous_failures).toEqual([]);
    expect(second.previous_failures).toEqual([
      {
        attempt: 1,
        reason: expect.stringMatching(/^ImplementerFailed: step-1: the implementer exited 1: first try fails/),
      },
    ]);
    expect(second.items).toEqual([{ kind: 'task', ordinal: 0, text: 'write one', status: 'open' }]);
  });
});
