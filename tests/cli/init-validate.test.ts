import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectError, runCli, runJson } from '../helpers/cli.js';
import { git, tempDir, tempRepo, writeFiles } from '../helpers/repo.js';

const snapshot = (root: string) =>
  ['.gitignore', '.tugtool/config.toml', '.tugtool/tugplan-skeleton.md'].map((f) =>
    existsSync(join(root, f)) ? readFileSync(join(root, f), 'utf8') : null,
  );

describe('tugcode init', () => {
  it('creates the skeleton, log index, config and ignore lines, and is idempotent', () => {
    const root = tempRepo();
    const first = runJson('init', ['init'], { cwd: root });
    expect(first.json).toMatchObject({
      initialized: true,
      created: ['.tugtool/tugplan-skeleton.md', '.tugtool/tugplan-implementation-log.md', '.tugtool/config.toml'],
      skipped: [],
    });
    expect(first.json.gitignore_added).toContain('.tugtool/state.db');
    expect(first.json.exclude_added).toContain('.tugtree/');
    expect(readFileSync(join(root, '.git', 'info', 'exclude'), 'utf8')).toContain('.tugtool/state.db-wal');
    const before = snapshot(root);
    const second = runJson('init', ['init'], { cwd: root });
    expect(second.json).toMatchObject({ initialized: false, created: [], gitignore_added: [], exclude_added: [] });
    expect(second.json.skipped).toHaveLength(3);
    expect(snapshot(root)).toEqual(before);
  });

  it('writes a skeleton plan that validates with no warnings even at the strict level', () => {
    const root = tempRepo();
    runJson('init', ['init'], { cwd: root });
    const r = runJson('validate', ['validate', '.tugtool/tugplan-skeleton.md', '--level', 'strict'], { cwd: root });
    expect(r.json.valid).toBe(true);
    expect(r.json.plans[0]).toMatchObject({ steps: 2, substeps: 1, error_count: 0, warning_count: 0, diagnostics: [] });
  });

  it('puts config.toml in the main root when run inside a linked worktree', () => {
    const root = tempRepo();
    const wt = join(tempDir(), 'wt');
    git(root, 'worktree', 'add', '-q', '-b', 'feature', wt);
    runJson('init', ['init'], { cwd: wt });
    expect(existsSync(join(root, '.tugtool', 'config.toml'))).toBe(true);
    expect(existsSync(join(wt, '.tugtool', 'config.toml'))).toBe(false);
    expect(existsSync(join(wt, '.tugtool', 'tugplan-skeleton.md'))).toBe(true);
  });

  it('refuses outside a git repository with NotAGitRepository (exit 3) and writes nothing', () => {
    const dir = tempDir();
    const r = runJson('init', ['init'], { cwd: dir, env: { GIT_CEILING_DIRECTORIES: dir } });
    expectError(r, 'NotAGitRepository', 3);
    expect(existsSync(join(dir, '.tugtool'))).toBe(false);
  });
});

describe('tugcode validate', () => {
  const bad = `# Bad plan\n\n### Execution Steps\n\n#### Step 1: One {#step-1}\n\n**Depends on:** #step-9\n\n**Tasks:**\n- [ ] a\n`;

  it('validates every plan under .tugtool/ with an ok envelope after init', () => {
    const root = tempRepo();
    runJson('init', ['init'], { cwd: root });
    const r = runJson('validate', ['validate'], { cwd: root });
    expect(r.json).toMatchObject({ valid: true, level: 'normal', plans: [] });
  });

  it('lists every error with its line and refuses with PlanInvalid (exit 4)', () => {
    const root = tempRepo({ '.tugtool/tugplan-bad.md': bad });
    const r = runJson('validate', ['validate', 'bad'], { cwd: root });
    expectError(r, 'PlanInvalid', 4);
    const e010 = r.json.error.details.diagnostics.find((d: { code: string }) => d.code === 'E010');
    expect(e010).toMatchObject({ severity: 'error', line: 7 });
    const text = runCli(['validate', 'bad'], { cwd: root });
    expect(text.code).toBe(4);
    expect(text.stdout).toContain('.tugtool/tugplan-bad.md:7: error E010');
    expect(text.stderr).toMatch(/^tugcode: PlanInvalid: /);
  });

  it('reports a plan argument that matches nothing as PlanNotFound (exit 3), never picking another plan', () => {
    const root = tempRepo({ '.tugtool/tugplan-only.md': bad });
    expectError(runJson('validate', ['validate', 'other'], { cwd: root }), 'PlanNotFound', 3);
  });

  it('refuses a relative path naming different plans from the subdirectory and the root with AmbiguousPlan (exit 3)', () => {
    const root = tempRepo({ '.tugtool/tugplan-a.md': bad, 'sub/.tugtool/tugplan-a.md': bad });
    const r = runJson('validate', ['validate', '.tugtool/tugplan-a.md'], { cwd: join(root, 'sub') });
    expectError(r, 'AmbiguousPlan', 3);
    expect(r.json.error.details.candidates).toEqual(['sub/.tugtool/tugplan-a.md', '.tugtool/tugplan-a.md']);
  });

  it('refuses an empty plan argument (an unset $PLAN), as every command does, instead of validating every plan', () => {
    const root = tempRepo();
    runJson('init', ['init'], { cwd: root });
    expectError(runJson('validate', ['validate', ''], { cwd: root }), 'InvalidArgument', 2);
  });

  it('refuses an invalid --level with InvalidArgument (exit 2)', () => {
    const root = tempRepo();
    expectError(runJson('validate', ['validate', '--level', 'pedantic'], { cwd: root }), 'InvalidArgument', 2);
  });

  it('refuses a malformed config.toml with ConfigInvalid (exit 2)', () => {
    const root = tempRepo();
    writeFiles(root, { '.tugtool/config.toml': '[validate]\nlevel = 3\n' });
    const r = runJson('validate', ['validate'], { cwd: root });
    expectError(r, 'ConfigInvalid', 2);
    expect(r.json.error.details.key).toBe('validate.level');
  });

  it('takes its default level from config.toml', () => {
    const root = tempRepo({ '.tugtool/config.toml': '[validate]\nlevel = "lenient"\n' });
    expect(runJson('validate', ['validate'], { cwd: root }).json.level).toBe('lenient');
  });

  it('rejects an invalid TUGCODE_NOW with ConfigInvalid', () => {
    const root = tempRepo();
    expectError(runJson('init', ['init'], { cwd: root, env: { TUGCODE_NOW: 'yesterday' } }), 'ConfigInvalid', 2);
  });
});
