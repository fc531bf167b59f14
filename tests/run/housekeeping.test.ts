/**
 * Work the driver keeps off the steps' critical path (issue 12, Speed): git's auto maintenance runs once
 * after the run instead of after every step commit (and not at all when the repository turned it off);
 * the opt-in timing trace (TUGCODE_RUN_TRACE) records the steps' spans without touching the output.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../helpers/repo.js';
import { implementerScript, planText, runJsonl, runRepo, step } from './helpers.js';

const PLAN = planText([step(1, 'One'), step(2, 'Two', { deps: [1] }), step(3, 'Three', { deps: [1] })]);

/** How many git processes of the run were `git maintenance run --auto` (GIT_TRACE logs every git process). */
function maintenanceRuns(traceFile: string): number {
  return readFileSync(traceFile, 'utf8')
    .split('\n')
    .filter((l) => /trace: built-in: git maintenance run --auto/.test(l)).length;
}

describe('git auto maintenance during a run', () => {
  it('runs once, after the steps, not after each step commit', () => {
    const root = runRepo(PLAN);
    const trace = join(tempDir(), 'git-trace');
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', implementerScript().argv], {
      GIT_TRACE: trace,
    });
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(maintenanceRuns(trace)).toBe(1);
  });

  it('does not run when the repository turned it off', () => {
    const root = runRepo(PLAN);
    git(root, 'config', 'maintenance.auto', 'false');
    const trace = join(tempDir(), 'git-trace');
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', implementerScript().argv], {
      GIT_TRACE: trace,
    });
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(maintenanceRuns(trace)).toBe(0);
  });
});

describe('fresh worker worktrees', () => {
  it('are used as checked out: no HEAD lookup, no clean, before their first step', () => {
    const root = runRepo(PLAN);
    const trace = join(tempDir(), 'git-trace');
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', implementerScript().argv], {
      GIT_TRACE: trace,
    });
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    const gits = readFileSync(trace, 'utf8')
      .split('\n')
      .flatMap((l) => /trace: built-in: git (.*)$/.exec(l)?.[1] ?? []);
    expect(gits.filter((a) => a.startsWith('clean'))).toEqual([]);
    expect(gits.filter((a) => a.startsWith('rev-parse --verify --quiet HEAD'))).toEqual([]);
    expect(gits.filter((a) => a.startsWith('worktree add'))).toHaveLength(2);
  });
});

describe('TUGCODE_RUN_TRACE', () => {
  it('writes one JSON line per timed span of each step, and the run output stays the same', () => {
    const root = runRepo(PLAN);
    const file = join(tempDir(), 'spans.jsonl');
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', implementerScript().argv], {
      TUGCODE_RUN_TRACE: file,
    });
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(r.events.every((e) => typeof e.type === 'string' && e.type !== 'span')).toBe(true);
    const spans = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    for (const s of spans)
      expect(s).toEqual({
        worker: expect.any(String),
        step: expect.any(String),
        name: expect.any(String),
        start: expect.any(Number),
        ms: expect.any(Number),
      });
    for (const anchor of ['step-1', 'step-2', 'step-3'])
      for (const name of ['reset', 'implementer', 'commit', 'commit.status', 'integrate', 'integrate.lock', 'complete'])
        expect(
          spans.some((s) => s.step === anchor && s.name === name),
          `${anchor} ${name}`,
        ).toBe(true);
  });
});
