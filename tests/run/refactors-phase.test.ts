/**
 * A step's declared refactors in `tugcode run` (docs/run.md §5): run by `tugcode refactor run-step` as a
 * child process, its stderr and JSON answer in the attempt's logs, so the kernel's work never holds up the
 * driver's event loop; a refactor that fails fails the attempt RefactorFailed, naming the kernel's error.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stepText } from '../helpers/plan.js';
import { git } from '../helpers/repo.js';
import { TS_FILES } from '../refactor/helpers.js';
import { implementerScript, planText, runJsonl, runRepo } from './helpers.js';

const ONE = { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' };

function refactorStep(refactor: string): string {
  return stepText({
    id: '1',
    title: 'Rename',
    commit: 'refactor: rename',
    tasks: ['rename'],
    refactors: [refactor],
  });
}

describe('the refactors phase', () => {
  it('runs run-step as a child: the rename lands in the step commit, its answer kept in the logs', () => {
    const root = runRepo(
      planText([refactorStep('rename-symbol --symbol src/util.ts::parseConfig --to loadConfig')]),
      'demo',
      {
        ...TS_FILES,
        ...ONE,
      },
    );
    const impl = implementerScript();
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(r.events.at(-1), r.stdout + r.stderr).toMatchObject({ type: 'summary', status: 'ok', plan_done: true });
    expect(git(root, 'show', 'tugplan/demo:src/main.ts')).toContain('loadConfig(');
    const answer = join(root, '.tugtool', 'logs', 'demo', 'step-1-refactors-attempt1.json');
    expect(existsSync(answer)).toBe(true);
    expect(JSON.parse(readFileSync(answer, 'utf8'))).toMatchObject({ status: 'ok', step_anchor: 'step-1' });
  });

  it('a refactor that fails fails the attempt RefactorFailed with the kernel error, its log named', () => {
    const root = runRepo(
      planText([refactorStep('rename-symbol --symbol src/util.ts::nothingHere --to other')]),
      'demo',
      {
        ...TS_FILES,
        ...ONE,
      },
    );
    const impl = implementerScript();
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failed, r.stdout + r.stderr).toEqual([
      expect.objectContaining({ step_anchor: 'step-1', reason_code: 'RefactorFailed' }),
    ]);
    expect(failed[0].reason).toMatch(/^step-1: SymbolNotFound: /);
    // Relative to the main checkout, as every log an event names.
    expect(failed[0].logs).toEqual(['.tugtool/logs/demo/step-1-refactors-attempt1.log']);
    expect(readFileSync(join(root, failed[0].logs[0]), 'utf8')).toContain('SymbolNotFound');
    expect(r.code).toBe(4);
  });
});
