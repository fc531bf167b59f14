/**
 * The demo repository (docs/run.md §4): created with a committed plan that validates, and its steps, run by
 * hand in dependency order with the bundled implementer, the kernel for the refactor step and the plan's
 * own checkpoint commands, all pass; a dependent step's checkpoint fails before its dependency's edit.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDemoRepo, DEMO_IDENTITY, type DemoRepo } from '../../src/demo/project.js';
import { tokenizeShell } from '../../src/kernel/opspec.js';
import { parsePlan } from '../../src/plan/parse.js';
import type { PlanStep } from '../../src/plan/types.js';
import type { StepBrief } from '../../src/run/types.js';
import { ROOT, runCli } from '../helpers/cli.js';
import { git, tempDir } from '../helpers/repo.js';

const NOW = '2026-03-01T10:00:00.000Z';
const TUG = join(ROOT, 'bin', 'tug.js');
/** Dependency order; step-4-1 (the substep) before its parent, as the driver runs them. */
const ORDER = ['step-1', 'step-2', 'step-3', 'step-4-1', 'step-4', 'step-5', 'step-6', 'step-7'];

/** A git environment with no user identity anywhere (no global or system config). */
function bareGitEnv(): NodeJS.ProcessEnv {
  const home = tempDir('tugcode-demo-home-');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: join(home, 'none'),
  };
  for (const k of ['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL', 'EMAIL'])
    delete env[k];
  return env;
}

function steps(root: string): Map<string, PlanStep> {
  const plan = parsePlan(readFileSync(join(root, '.tugtool/tugplan-demo.md')));
  return new Map(plan.steps.map((s) => [s.anchor, s]));
}

function brief(all: Map<string, PlanStep>, anchor: string): StepBrief {
  const s = all.get(anchor)!;
  return {
    plan_path: '.tugtool/tugplan-demo.md',
    step_anchor: anchor,
    title: s.title,
    attempt: 1,
    commit_message: s.commit_message,
    references: s.references,
    depends_on: s.depends_on,
    items: s.items.map((i) => ({ kind: i.kind, ordinal: i.ordinal, text: i.text, status: 'open' })),
    substeps: [...all.values()].filter((c) => c.parent_anchor === anchor).map((c) => brief(all, c.anchor)),
    previous_failures: [],
  };
}

/** Runs the implementer argv string the way the driver does (split shell-style, brief on stdin). */
function implement(repo: DemoRepo, worktree: string, anchor: string, extra: string[] = [], attempt = 1) {
  const argv = tokenizeShell(repo.implementer);
  if (!argv.ok) throw new Error(argv.reason);
  const [cmd, ...args] = argv.tokens;
  const b = { ...brief(steps(repo.root), anchor), attempt };
  return spawnSync(cmd!, [...args, ...extra], {
    cwd: worktree,
    input: JSON.stringify(b),
    encoding: 'utf8',
    env: { ...process.env, TUG_STEP: anchor, TUG_WORKTREE: worktree, TUG_ATTEMPT: String(attempt) },
  });
}

/** The step's checkpoint commands: items that are exactly one code span (docs/run.md §3). */
function checkpoints(root: string, anchor: string): string[] {
  return steps(root)
    .get(anchor)!
    .items.filter((i) => i.kind === 'checkpoint')
    .map((i) => /^`([^`]+)`$/.exec(i.text.trim())?.[1])
    .filter((c): c is string => c !== undefined && !c.startsWith('<'));
}

function check(worktree: string, command: string) {
  return spawnSync('sh', ['-c', command], { cwd: worktree, encoding: 'utf8' });
}

function checkStep(repo: DemoRepo, worktree: string, anchor: string): { ok: boolean; output: string } {
  const cmds = checkpoints(repo.root, anchor);
  expect(cmds.length, `${anchor} has a checkpoint command`).toBeGreaterThan(0);
  let output = '';
  for (const c of cmds) {
    const r = check(worktree, c);
    output += r.stdout + r.stderr;
    if (r.status !== 0) return { ok: false, output };
  }
  return { ok: true, output };
}

function commitAll(root: string, message: string): string[] {
  const changed = git(root, 'status', '--porcelain')
    .trimEnd()
    .split('\n')
    .filter(Boolean)
    .map((l) => l.slice(3));
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', message);
  return changed;
}

describe('createDemoRepo', () => {
  let repo: DemoRepo;
  beforeAll(async () => {
    repo = await createDemoRepo(join(tempDir(), 'my demo'), { env: bareGitEnv(), now: NOW });
  });

  it('commits the project, the tugcode setup and the plan on main', () => {
    expect(repo).toMatchObject({ plan_path: '.tugtool/tugplan-demo.md', slug: 'demo' });
    expect(git(repo.root, 'symbolic-ref', '--short', 'HEAD').trim()).toBe('main');
    expect(git(repo.root, 'rev-list', '--count', 'HEAD').trim()).toBe('1');
    expect(git(repo.root, 'status', '--porcelain')).toBe('');
    const files = git(repo.root, 'ls-files').trim().split('\n');
    for (const f of [
      '.gitignore',
      '.tugtool/config.toml',
      '.tugtool/tugplan-demo.md',
      'package.json',
      'tsconfig.json',
      'scripts/check.mjs',
      'src/currency.ts',
    ])
      expect(files).toContain(f);
    expect(readFileSync(join(repo.root, repo.plan_path), 'utf8')).toContain('| Last updated | 2026-03-01 |');
    expect(git(repo.root, 'log', '-1', '--format=%an <%ae> %aI')).toBe(
      `${DEMO_IDENTITY.name} <${DEMO_IDENTITY.email}> 2026-03-01T10:00:00+00:00\n`,
    );
  });

  it('names the bundled implementer, quoted', () => {
    const argv = tokenizeShell(repo.implementer);
    expect(argv).toEqual({ ok: true, tokens: ['node', join(ROOT, 'demo', 'implementer.mjs')] });
    expect(repo.implementer).toMatch(/^node ".+implementer\.mjs"$/);
  });

  it('has a plan that validates without warnings: 8 steps, a diamond, a substep, a kernel rename', () => {
    const r = runCli(['validate', repo.plan_path, '--json'], { cwd: repo.root });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json.status).toBe('ok');
    expect(JSON.stringify(r.json)).not.toMatch(/"severity":"(error|warning)"/);
    const all = steps(repo.root);
    expect([...all.keys()]).toEqual(['step-1', 'step-2', 'step-3', 'step-4', 'step-4-1', 'step-5', 'step-6', 'step-7']);
    expect(all.get('step-2')!.depends_on).toEqual(['step-1']);
    expect(all.get('step-3')!.depends_on).toEqual(['step-1']);
    expect(all.get('step-4')!.depends_on).toEqual(['step-2', 'step-3']);
    expect(all.get('step-4-1')!.parent_anchor).toBe('step-4');
    expect(all.get('step-5')!.refactors.map((x) => x.command)).toEqual([
      'rename-symbol --symbol src/format.ts::formatCents --to formatPrice',
    ]);
    for (const s of all.values()) {
      expect(s.commit_message, s.anchor).toBeTruthy();
      expect(checkpoints(repo.root, s.anchor), s.anchor).toEqual([`node scripts/check.mjs ${s.anchor}`]);
    }
  });

  it('runs step by step in dependency order: every checkpoint passes, parallel steps touch different files', () => {
    const all = steps(repo.root);
    const touched = new Map<string, string[]>();
    for (const anchor of ORDER) {
      const op = all.get(anchor)!.refactors[0]?.command;
      if (op) {
        expect(checkStep(repo, repo.root, anchor).ok, `${anchor} fails before the kernel's rename`).toBe(false);
        const args = tokenizeShell(op);
        if (!args.ok) throw new Error(args.reason);
        const k = spawnSync(process.execPath, [TUG, 'run', '--apply', ...args.tokens], {
          cwd: repo.root,
          encoding: 'utf8',
        });
        expect(k.status, k.stdout + k.stderr).toBe(0);
      }
      const r = implement(repo, repo.root, anchor);
      expect(r.status, r.stdout + r.stderr).toBe(0);
      const c = checkStep(repo, repo.root, anchor);
      expect(c.ok, `${anchor}: ${c.output}`).toBe(true);
      touched.set(anchor, commitAll(repo.root, all.get(anchor)!.commit_message!));
    }
    expect(touched.get('step-2')).toEqual(['src/cart.ts']);
    expect(touched.get('step-3')).toEqual(['src/format.ts']);
    expect(touched.get('step-4-1')).toEqual(['src/header.ts']);
    expect(touched.get('step-4')).toEqual(['src/receipt.ts']);
    expect(touched.get('step-5')!.sort()).toEqual(['src/format.ts', 'src/receipt.ts']);
    expect(touched.get('step-6')).toEqual(['src/main.ts']);
    expect(touched.get('step-7')).toEqual(['README.md']);
    expect(readFileSync(join(repo.root, 'src/receipt.ts'), 'utf8')).toContain(
      "import { formatPrice } from './format';",
    );

    // The finished project is real TypeScript: it type-checks.
    const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], {
      cwd: repo.root,
      encoding: 'utf8',
    });
    expect(tsc.status, tsc.stdout + tsc.stderr).toBe(0);
    // Running the last steps again changes nothing (whole-file writes; the rename step writes nothing).
    for (const anchor of ['step-5', 'step-6', 'step-7']) expect(implement(repo, repo.root, anchor).status).toBe(0);
    expect(git(repo.root, 'status', '--porcelain')).toBe('');
  });
});

describe('the demo steps keep their order', () => {
  let repo: DemoRepo;
  let wt: string;
  beforeAll(async () => {
    repo = await createDemoRepo(tempDir(), { env: bareGitEnv(), now: NOW });
    wt = join(tempDir(), 'w 1');
    git(repo.root, 'worktree', 'add', '-q', wt, '-b', 'w1');
  });

  it('a dependent step fails its checkpoint before its dependency, and passes after', () => {
    expect(implement(repo, wt, 'step-2').status).toBe(0);
    const early = checkStep(repo, wt, 'step-2');
    expect(early.ok).toBe(false);
    expect(early.output).toContain("src/cart.ts imports './price', which does not exist");
    expect(implement(repo, wt, 'step-1').status).toBe(0);
    expect(checkStep(repo, wt, 'step-2').ok).toBe(true);

    // The receipt needs the formatting (step-3) and its own header (the substep).
    expect(implement(repo, wt, 'step-4').status).toBe(0); // the parent brings its substep's edit along
    expect(existsSync(join(wt, 'src/header.ts'))).toBe(true);
    expect(checkStep(repo, wt, 'step-4').output).toContain("src/receipt.ts imports './format', which does not exist");
    expect(implement(repo, wt, 'step-3').status).toBe(0);
    expect(checkStep(repo, wt, 'step-4-1').ok).toBe(true);
    expect(checkStep(repo, wt, 'step-4').ok).toBe(true);

    // The entry point and the docs name formatPrice, which exists only after the kernel's rename.
    for (const anchor of ['step-6', 'step-7']) {
      expect(implement(repo, wt, anchor).status).toBe(0);
      expect(checkStep(repo, wt, anchor).output).toContain('formatPrice');
      expect(checkStep(repo, wt, anchor).ok).toBe(false);
    }
    // The rename step's checkpoint fails until the kernel renamed.
    expect(implement(repo, wt, 'step-5').stdout).toContain('the kernel did the work');
    expect(checkStep(repo, wt, 'step-5').output).toContain('src/format.ts does not export formatPrice');
  });

  it('the implementer fails on request, records what it saw, and refuses an unknown step', () => {
    const record = join(tempDir(), 'seen.jsonl');
    const r = implement(repo, repo.root, 'step-3', ['--fail', 'step-3@1', '--record', record]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('failing as asked');
    expect(existsSync(join(repo.root, 'src/format.ts'))).toBe(false);
    expect(implement(repo, repo.root, 'step-3', ['--fail', 'step-3@1'], 2).status).toBe(0);
    expect(JSON.parse(readFileSync(record, 'utf8'))).toMatchObject({
      step: 'step-3',
      attempt: 1,
      saw: ['src/currency.ts'],
    });
    git(repo.root, 'checkout', '-q', '--', '.');
    git(repo.root, 'clean', '-fdq');
    const u = spawnSync('node', [join(ROOT, 'demo', 'implementer.mjs')], {
      input: '{}',
      encoding: 'utf8',
      env: { ...process.env, TUG_STEP: 'step-99', TUG_WORKTREE: repo.root },
    });
    expect(u.status).toBe(2);
    expect(u.stderr).toContain('unknown step step-99');
  });
});

describe('createDemoRepo refuses', () => {
  it('a non-empty directory or a file (InvalidArgument), and keeps the user identity when there is one', async () => {
    const full = tempDir();
    writeFileSync(join(full, 'x'), 'x');
    await expect(createDemoRepo(full, { env: bareGitEnv() })).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(createDemoRepo(join(full, 'x'), { env: bareGitEnv() })).rejects.toMatchObject({
      code: 'InvalidArgument',
    });
    expect(existsSync(join(full, '.git'))).toBe(false);

    const env = bareGitEnv();
    mkdirSync(join(env.HOME!), { recursive: true });
    writeFileSync(env.GIT_CONFIG_GLOBAL!, '[user]\n\tname = Ada\n\temail = ada@example.com\n');
    const repo = await createDemoRepo(join(tempDir(), 'new', 'deeper'), { env });
    expect(spawnSync('git', ['config', '--local', '--get', 'user.name'], { cwd: repo.root }).status).toBe(1);
    expect(spawnSync('git', ['log', '-1', '--format=%an'], { cwd: repo.root, env, encoding: 'utf8' }).stdout).toBe(
      'Ada\n',
    );
  });
});
