import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TugError } from '../../src/contract/errors.js';
import { isValidSlug, normalizeAnchor } from '../../src/plan/anchors.js';
import { listPlans, resolvePlanArg } from '../../src/plan/resolve.js';
import { resolveRepo, workTreeHolding } from '../../src/git/repo.js';
import { git, tempDir, tempRepo, writeFiles } from '../helpers/repo.js';

const PLAN = '## P\n#### Step 1: a\n';

function repoWithPlans() {
  return tempRepo({
    '.tugtool/tugplan-foo.md': PLAN,
    '.tugtool/tugplan-bar.md': PLAN,
    '.tugtool/tugplan-skeleton.md': PLAN,
    '.tugtool/tugplan-implementation-log.md': PLAN,
    '.tugtool/notes.md': 'x',
    'docs/other-plan.md': PLAN,
  });
}

function caught(f: () => unknown): TugError {
  try {
    f();
  } catch (e) {
    if (e instanceof TugError) return e;
    throw e;
  }
  throw new Error('expected a TugError');
}

describe('listPlans', () => {
  it('lists .tugtool/tugplan-*.md sorted, without reserved names', () => {
    expect(listPlans(repoWithPlans())).toEqual(['.tugtool/tugplan-bar.md', '.tugtool/tugplan-foo.md']);
    expect(listPlans(tempDir())).toEqual([]);
  });
});

describe('resolvePlanArg', () => {
  const root = repoWithPlans();
  const opts = { repoRoot: root, workTree: root, cwd: root };
  const foo = { plan_path: '.tugtool/tugplan-foo.md', abs_path: join(root, '.tugtool/tugplan-foo.md'), exists: true };

  it("reads a path in a removed worktree under .tugtree/ as that tree's, not as the main checkout's .tugtree/…", () => {
    const root = realpathSync(repoWithPlans());
    const gone = join(root, '.tugtree', 'w1');
    const repo = resolveRepo(root);
    const opts = {
      repoRoot: root,
      workTree: gone,
      cwd: gone,
      knownPlanPaths: ['.tugtool/tugplan-foo.md'],
      workTreeHolding: (abs: string) => workTreeHolding(repo, abs),
    };
    expect(resolvePlanArg('.tugtool/tugplan-foo.md', opts).plan_path).toBe('.tugtool/tugplan-foo.md');
    expect(resolvePlanArg(join(gone, '.tugtool/tugplan-foo.md'), opts).plan_path).toBe('.tugtool/tugplan-foo.md');
  });

  it('resolves a slug, a repo-relative path and an absolute path to the same plan', () => {
    expect(resolvePlanArg('foo', opts)).toEqual(foo);
    expect(resolvePlanArg('.tugtool/tugplan-foo.md', opts)).toEqual(foo);
    expect(resolvePlanArg(join(root, '.tugtool/tugplan-foo.md'), opts)).toEqual(foo);
  });

  it('reads ./ and ../ paths from the current directory, other relative paths from it first and then the root', () => {
    const sub = join(root, 'docs');
    expect(resolvePlanArg('../.tugtool/tugplan-foo.md', { ...opts, cwd: sub })).toEqual(foo);
    expect(resolvePlanArg('.tugtool/tugplan-foo.md', { ...opts, cwd: sub })).toEqual(foo);
    expect(resolvePlanArg('./other-plan.md', { ...opts, cwd: sub }).plan_path).toBe('docs/other-plan.md');
    expect(caught(() => resolvePlanArg('./.tugtool/tugplan-foo.md', { ...opts, cwd: sub })).code).toBe('PlanNotFound');
  });

  it('fails with PlanNotFound listing the existing plans, never picking one', () => {
    const e = caught(() => resolvePlanArg('baz', opts));
    expect(e.code).toBe('PlanNotFound');
    expect(e.details).toMatchObject({
      plan: 'baz',
      plan_path: '.tugtool/tugplan-baz.md',
      candidates: ['.tugtool/tugplan-bar.md', '.tugtool/tugplan-foo.md'],
    });
  });

  it('names a plan known to state.db even when its file is gone', () => {
    expect(resolvePlanArg('gone', { ...opts, knownPlanPaths: ['.tugtool/tugplan-gone.md'] })).toEqual({
      plan_path: '.tugtool/tugplan-gone.md',
      abs_path: join(root, '.tugtool/tugplan-gone.md'),
      exists: false,
    });
  });

  it('treats reserved names as plans only when named by path', () => {
    expect(caught(() => resolvePlanArg('skeleton', opts)).code).toBe('PlanNotFound');
    expect(resolvePlanArg('.tugtool/tugplan-skeleton.md', opts).exists).toBe(true);
  });

  it('refuses invalid slugs and paths outside the repository', () => {
    for (const bad of ['Foo', 'foo--bar', 'a'.repeat(65), '-x']) {
      expect(caught(() => resolvePlanArg(bad, opts)).code).toBe('InvalidArgument');
    }
    expect(isValidSlug('a-1')).toBe(true);
    const e = caught(() => resolvePlanArg('../../etc/passwd', opts));
    expect(e.code).toBe('InvalidArgument');
    expect(caught(() => resolvePlanArg('/etc/passwd', opts)).code).toBe('InvalidArgument');
    expect(caught(() => resolvePlanArg('', opts)).code).toBe('InvalidArgument');
    expect(caught(() => resolvePlanArg('fo\0o', opts)).code).toBe('InvalidArgument');
  });

  it('refuses a plan that is a symlink leading out of the repository', () => {
    const outside = tempDir();
    writeFiles(outside, { 'secret.md': PLAN });
    symlinkSync(join(outside, 'secret.md'), join(root, '.tugtool', 'tugplan-evil.md'));
    mkdirSync(join(root, 'linkdir'));
    symlinkSync(outside, join(root, 'linkdir', 'out'));
    expect(caught(() => resolvePlanArg('evil', opts)).code).toBe('InvalidArgument');
    expect(caught(() => resolvePlanArg('linkdir/out/secret.md', opts)).code).toBe('InvalidArgument');
  });

  it('says why a FIFO, a device or a directory under a plan name is no plan', () => {
    execFileSync('mkfifo', [join(root, '.tugtool', 'tugplan-fifo.md')]);
    symlinkSync('/dev/zero', join(root, '.tugtool', 'tugplan-zero.md'));
    mkdirSync(join(root, '.tugtool', 'tugplan-dir.md'));
    const reason = (arg: string) => caught(() => resolvePlanArg(arg, opts)).details.reason;
    expect(reason('fifo')).toBe('tugplan-fifo.md is a FIFO, not a regular file');
    expect(reason('.tugtool/tugplan-zero.md')).toBe('tugplan-zero.md is a device, not a regular file');
    expect(reason('dir')).toBe('tugplan-dir.md is a directory, not a regular file');
  });

  it('keeps the path of a plan that is a symlink to another file inside the repository', () => {
    symlinkSync(join(root, 'docs', 'other-plan.md'), join(root, '.tugtool', 'tugplan-alias.md'));
    expect(resolvePlanArg('alias', opts).plan_path).toBe('.tugtool/tugplan-alias.md');
  });

  it('reads the file from the given work tree and accepts paths inside a linked worktree or the main root', () => {
    const wt = join(tempDir(), 'wt');
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'plans');
    git(root, 'worktree', 'add', '-q', wt);
    writeFiles(wt, { '.tugtool/tugplan-new.md': PLAN });
    const inWt = { repoRoot: root, workTree: wt, cwd: wt };
    expect(resolvePlanArg('new', inWt)).toEqual({
      plan_path: '.tugtool/tugplan-new.md',
      abs_path: join(wt, '.tugtool/tugplan-new.md'),
      exists: true,
    });
    expect(resolvePlanArg(join(root, '.tugtool/tugplan-foo.md'), inWt)).toEqual({
      plan_path: '.tugtool/tugplan-foo.md',
      abs_path: join(wt, '.tugtool/tugplan-foo.md'),
      exists: true,
    });
    expect(caught(() => resolvePlanArg('new', opts)).code).toBe('PlanNotFound');
  });
});

describe('normalizeAnchor', () => {
  it('removes one leading # and surrounding whitespace', () => {
    expect(normalizeAnchor('#step-2')).toBe('step-2');
    expect(normalizeAnchor(' step-2 ')).toBe('step-2');
  });
});
