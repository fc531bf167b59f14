/**
 * The repository of `tugcode demo` (docs/run.md §4): a fresh git repository holding a small TypeScript
 * project, tugcode's `.tugtool/` setup and a plan of eight steps (a dependency diamond, a substep, a step
 * whose work is a `rename-symbol` refactor done by the kernel, checkpoint commands), committed on `main`.
 *
 * The bundled files live in the package's `demo/` directory: `demo/project/` is copied as the initial
 * tree, `demo/tugplan-demo.md` is the plan (`{{today}}` filled in), `demo/steps/<step>/` holds what each
 * step writes and `demo/implementer.mjs` is the deterministic implementer that writes it. Everything the
 * demo repository needs to run its checkpoints is Node and git (`node scripts/check.mjs <step>` reads the
 * sources; nothing is compiled or installed).
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clockFromEnv, fixedClock, parseInstant, type Clock } from '../clock.js';
import { TugError } from '../contract/errors.js';
import { planPathForSlug } from '../contract/layout.js';
import { gitRunner, type GitResult, type GitRunner } from '../git/exec.js';
import { resolveRepo } from '../git/repo.js';
import { initProject } from '../project/init.js';

export const DEMO_SLUG = 'demo';
export const DEMO_PLAN_PATH = planPathForSlug(DEMO_SLUG);
/** The identity the demo repository commits with when the user has none. */
export const DEMO_IDENTITY = { name: 'tugcode demo', email: 'demo@tugcode.invalid' } as const;

export interface DemoRepo {
  /** Canonical root of the new repository. */
  root: string;
  /** Repo-relative path of the plan (`.tugtool/tugplan-demo.md`). */
  plan_path: string;
  slug: string;
  /** The implementer argv string for `tugcode run --implementer` (`node "<package>/demo/implementer.mjs"`). */
  implementer: string;
}

export interface DemoOptions {
  /** The caller's environment: git runs with it (identity, config), and TUGCODE_NOW is honoured. */
  env: NodeJS.ProcessEnv;
  /** Fixes "now" (ISO 8601): the plan's "Last updated" and the commit dates. */
  now?: string;
  /** The Node executable the implementer argv names (default `node`, found on PATH). */
  node?: string;
}

/** The package's `demo/` directory: `dist/<module>/`, `dist/bundle/` and `src/demo/` all sit two levels down. */
function demoAssetsDir(): string {
  return fileURLToPath(new URL('../../demo', import.meta.url));
}

/** Quotes one word for the argv strings of docs/kernel.md §7.1 (double quotes, `" \ $ \`` escaped). */
function quoteArg(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `"${word.replace(/["\\$`]/g, '\\$&')}"`;
}

/** `node "<abs>/demo/implementer.mjs"`: always quoted, as the path may hold spaces. */
function demoImplementer(node = 'node'): string {
  const script = join(demoAssetsDir(), 'implementer.mjs');
  return `${quoteArg(node)} "${script.replace(/["\\$`]/g, '\\$&')}"`;
}

/** `dir` must not exist, or be an empty directory; it is created (with its parents) when missing. */
function prepareDir(dir: string): string {
  let st;
  try {
    st = statSync(dir);
  } catch {
    st = null;
  }
  if (st && !st.isDirectory())
    throw new TugError('InvalidArgument', { reason: `${dir} exists and is not a directory`, path: dir });
  if (st && readdirSync(dir).length > 0)
    throw new TugError(
      'InvalidArgument',
      { reason: `${dir} is not empty; the demo needs a new or empty directory`, path: dir },
      { hint: 'name a new directory, or leave DIR out to use a temporary one' },
    );
  mkdirSync(dir, { recursive: true });
  return realpathSync.native(dir);
}

function copyTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const e of readdirSync(from, { withFileTypes: true })) {
    if (e.isDirectory()) copyTree(join(from, e.name), join(to, e.name));
    else if (e.isFile()) copyFileSync(join(from, e.name), join(to, e.name));
  }
}

function demoClock(o: DemoOptions): Clock {
  if (o.now === undefined) return clockFromEnv(o.env);
  const ms = parseInstant(o.now);
  if (ms === null)
    throw new TugError('InvalidArgument', { reason: `now: ${JSON.stringify(o.now)} is not an ISO 8601 instant` });
  return fixedClock(ms);
}

/** Sets the demo's own identity in the repository when git finds none for the user (docs/run.md §4). */
async function ensureIdentity(g: GitRunner, root: string): Promise<void> {
  const name = await g.tryRun(['config', '--get', 'user.name'], root);
  const email = await g.tryRun(['config', '--get', 'user.email'], root);
  const has = (r: GitResult) => r.status === 0 && r.stdout.trim() !== '';
  if (has(name) && has(email)) return;
  await g.run(['config', 'user.name', DEMO_IDENTITY.name], root);
  await g.run(['config', 'user.email', DEMO_IDENTITY.email], root);
}

/**
 * Creates the demo repository in `dir` (new or empty): `main` with one commit holding the project, the
 * `.tugtool/` setup of `tugcode init` and the plan. Returns what `tugcode run` needs.
 */
export async function createDemoRepo(dir: string, o: DemoOptions): Promise<DemoRepo> {
  const clock = demoClock(o);
  const assets = demoAssetsDir();
  const planText = readFileSync(join(assets, 'tugplan-demo.md'), 'utf8').replaceAll(
    '{{today}}',
    clock.now().slice(0, 10),
  );
  const root = prepareDir(dir);
  const g = gitRunner(o.env);
  await g.run(['init', '-q'], root);
  // `git init -b` needs git 2.28; this works with every version.
  await g.run(['symbolic-ref', 'HEAD', 'refs/heads/main'], root);
  await ensureIdentity(g, root);
  // The demo's commits are its own: a user's signing setup must not stop them.
  await g.run(['config', 'commit.gpgsign', 'false'], root);

  copyTree(join(assets, 'project'), root);
  initProject(resolveRepo(root, o.env), clock);
  mkdirSync(dirname(join(root, DEMO_PLAN_PATH)), { recursive: true });
  writeFileSync(join(root, DEMO_PLAN_PATH), planText);

  await g.run(['add', '-A'], root);
  const date = clock.now();
  await g.run(['commit', '-q', '--no-verify', '-m', 'chore: the demo project and its plan'], root, {
    env: { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
  });
  return { root, plan_path: DEMO_PLAN_PATH, slug: DEMO_SLUG, implementer: demoImplementer(o.node) };
}
