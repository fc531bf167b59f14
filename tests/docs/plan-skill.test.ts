/**
 * skills/plan/SKILL.md promises a complete plan that validates with no errors and no warnings: the real
 * validator (the built CLI, `--level strict`) checks the example, and the plan initializes in state.db.
 */
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/cli.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('skills/plan example', () => {
  it('validates at --level strict with 0 errors and 0 warnings', () => {
    const skill = readFileSync(join(ROOT, 'skills', 'plan', 'SKILL.md'), 'utf8');
    const m = /```markdown\n([\s\S]*?)\n```\n/.exec(skill);
    expect(m, 'skills/plan/SKILL.md has a ```markdown example plan').not.toBeNull();
    const repo = mkdtempSync(join(tmpdir(), 'tug-plan-skill-'));
    dirs.push(repo);
    spawnSync('git', ['init', '-q'], { cwd: repo });
    mkdirSync(join(repo, '.tugtool'));
    writeFileSync(join(repo, '.tugtool', 'tugplan-hello.md'), m![1] + '\n');
    const r = runCli(['validate', 'hello', '--level', 'strict', '--json'], { cwd: repo });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.valid).toBe(true);
    expect(r.json.plans[0]).toMatchObject({ error_count: 0, warning_count: 0, steps: 3, diagnostics: [] });
    const init = runCli(['state', 'init', 'hello', '--json'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    expect(init.json.refactors_created).toBe(1);
  });
});
