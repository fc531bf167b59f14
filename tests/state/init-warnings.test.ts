/**
 * `tugcode state init` as a process of the built CLI: the plan's validator warnings never stop it and are
 * reported (docs/state.md §4; docs/output.md §1: stderr in text mode, `warnings` in JSON mode), at the
 * configured validation level.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/cli.js';
import { tempRepo, writeFiles } from '../helpers/repo.js';
import { st, stText } from './cli-helpers.js';

const W001 = readFileSync(join(ROOT, 'tests/fixtures/plans/w001-no-tasks.md'), 'utf8');
const PLAN = '.tugtool/tugplan-w.md';

describe('state init reports the plan validator warnings', () => {
  it('puts them into `warnings` in JSON mode and initializes anyway', () => {
    const root = tempRepo({ [PLAN]: W001 });
    const r = st(root, ['init', 'w']);
    expect(r.json).toMatchObject({ status: 'ok', plan_path: PLAN, steps_created: 2 });
    expect(r.json.warnings).toEqual([
      {
        code: 'W001',
        message: `${PLAN}:44: step-2 has no tasks`,
        details: { plan_path: PLAN, line: 44, anchor: 'step-2' },
      },
    ]);
    expect(r.stderr).toBe('');
  });

  it('says on stderr in text mode how many there are and what lists them (validate, in full)', () => {
    const root = tempRepo({ [PLAN]: W001 });
    const r = stText(root, ['init', 'w']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Initialized .tugtool/tugplan-w.md');
    const line = `tugcode: warning: ${PLAN}: 1 validator warning: tugcode validate ${PLAN} shows them\n`;
    expect(r.stderr).toBe(line);
    // Re-initialized from scratch: the same line again.
    rmSync(join(root, '.tugtool', 'state.db'));
    expect(stText(root, ['init', 'w']).stderr).toBe(line);
    // validate lists it in full.
    expect(runCli(['validate', 'w'], { cwd: root }).stdout).toContain(`${PLAN}:44: warning W001: step-2 has no tasks`);
  });

  it('reports none at the lenient level, which shows no warnings', () => {
    const root = tempRepo({ [PLAN]: W001 });
    writeFiles(root, { '.tugtool/config.toml': '[validate]\nlevel = "lenient"\n' });
    const r = st(root, ['init', 'w']);
    expect(r.json.status).toBe('ok');
    expect(r.json.warnings).toEqual([]);
  });
});
