/**
 * The manifest-driven fixture runner (docs/kernel.md §13.1), shared by the per-language entry files so that
 * vitest runs the languages in parallel. Per entry: copy the workspace, run the kernel in-process, check exit
 * code and counts, compare normalized JSON and the patch with their goldens, re-run for determinism,
 * `git apply` the patch to a pristine copy and compare with what `--apply` writes, and (when flagged) run
 * the real binary once and compare it with the in-process envelope. Entries whose `requires` tool is missing
 * are skipped loudly (`SKIP <name>: <reason>` on stderr and a skipped test naming the reason);
 * TUG_REQUIRE_PYTHON=1 / TUG_REQUIRE_RUST=1 make them fail.
 *
 * The three in-process calls of an entry share one warm kernel (the MCP server's `KernelHost`,
 * docs/kernel.md §2.3): a backend's cold start (pyright, rust-analyzer) is most of an
 * entry's time, and starting it three times per entry made the Python fixtures the slowest file of the
 * suite. The first call is still cold (its output is the golden); the second checks that the warm kernel
 * answers the same (normalized); the third applies in that same workspace.
 */
import { describe, it, expect } from 'vitest';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { KernelHost } from '../../src/kernel/cli/warm.js';
import { copyTree, gitInit, kernelEnv, readTree } from './helpers.js';
import { normalizedText } from './normalize.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const UPDATE = process.env.TUG_UPDATE_GOLDEN === '1';

export interface Entry {
  name: string;
  workspace: string;
  argv: string[];
  expect: { exit_code: number; edits?: number; files?: number; warnings: string[]; error_code?: string };
  golden_json: string;
  golden_patch?: string;
  requires: string[];
  git?: boolean;
  subprocess?: boolean;
}

function golden(rel: string, actual: string): void {
  const p = join(HERE, 'golden', rel);
  if (UPDATE || !existsSync(p)) {
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, actual);
    if (!UPDATE) throw new Error(`golden ${rel} was missing and has been written; review it`);
    return;
  }
  expect(actual).toBe(readFileSync(p, 'utf8'));
}

/** A warm kernel host for one workspace; `run` answers like `tug --json` (stdout and exit code). */
function host(cwd: string) {
  const h = new KernelHost({
    env: kernelEnv({ NODE_ENV: 'test', TUG_RA_PATH: process.env.TUG_RA_PATH }),
    cwd,
  });
  return {
    async run(argv: string[]) {
      const r = await h.call(argv);
      return { exitCode: r.exitCode, stdout: JSON.stringify(r.envelope) + '\n' };
    },
    close: () => h.close(),
  };
}

const probes = new Map<string, string | null>();

/** Why a required tool is unavailable, or null when it runs. */
export function missingTool(tool: string): string | null {
  if (probes.has(tool)) return probes.get(tool)!;
  let why: string | null = null;
  if (tool === 'python3') {
    const r = spawnSync('python3', ['-c', 'import sys;print(sys.version.split()[0])'], { encoding: 'utf8' });
    why = r.status === 0 ? null : `python3: ${r.error ? (r.error as NodeJS.ErrnoException).code : `exit ${r.status}`}`;
  } else if (tool === 'rust-analyzer') {
    // The kernel's probe is asynchronous (discovery.ts); manifests are built synchronously, so probe here.
    const ra = process.env.TUG_RA_PATH || 'rust-analyzer';
    const r = spawnSync(ra, ['--version'], { encoding: 'utf8', timeout: 10_000 });
    why = r.status === 0 ? null : `${ra}: ${r.error ? (r.error as NodeJS.ErrnoException).code : `exit ${r.status}`}`;
  } else why = `unknown required tool ${tool}`;
  probes.set(tool, why);
  return why;
}

function required(tool: string): boolean {
  if (tool === 'rust-analyzer') return process.env.TUG_REQUIRE_RUST === '1';
  if (tool === 'python3') return process.env.TUG_REQUIRE_PYTHON === '1';
  return false;
}

/**
 * Registers the entries of a language's manifest. `shard` (k of n, from 1) takes every n-th entry from the
 * k-th: a language whose backend is slow (pyright: a cold start per entry) is split over n test files, so
 * that vitest's workers share it instead of one worker running it alone.
 */
export function runManifest(lang: string, shard: { k: number; n: number } = { k: 1, n: 1 }): void {
  const manifest: Entry[] = JSON.parse(readFileSync(join(HERE, 'fixtures', lang, 'manifest.json'), 'utf8'));
  const mine = manifest.filter((_, i) => i % shard.n === shard.k - 1);
  describe(shard.n > 1 ? `${lang} fixtures (${shard.k} of ${shard.n})` : `${lang} fixtures`, () => {
    for (const e of mine) {
      const missing = e.requires.map((t) => ({ t, why: missingTool(t) })).find((x) => x.why !== null);
      const title = `${e.name}: matches its golden JSON and patch, and the patch equals what --apply writes`;
      if (missing && !required(missing.t)) {
        process.stderr.write(`SKIP ${e.name}: ${missing.why}\n`);
        it.skip(`${e.name} — SKIPPED: ${missing.t} unavailable (${missing.why})`, () => undefined);
        continue;
      }
      it(title, async () => {
        if (missing) throw new Error(`${e.name} requires ${missing.t}, which is unavailable: ${missing.why}`);
        await runEntry(lang, e);
      });
    }
  });
}

async function runEntry(lang: string, e: Entry): Promise<void> {
  const src = join(HERE, 'fixtures', lang, e.workspace);
  const ws = realpathSync(copyTree(src));
  if (e.git) gitInit(ws);
  const kernel = host(ws);
  try {
    await checkEntry(e, src, ws, kernel.run);
  } finally {
    await kernel.close();
  }
}

async function checkEntry(
  e: Entry,
  src: string,
  ws: string,
  run: (argv: string[]) => Promise<{ exitCode: number; stdout: string }>,
): Promise<void> {
  const r = await run(e.argv);
  expect(r.exitCode, r.stdout).toBe(e.expect.exit_code);
  const env = JSON.parse(r.stdout);
  expect(Object.keys(env).slice(0, 3)).toEqual(['status', 'schema_version', 'snapshot_id']);
  expect([...new Set(env.warnings.map((w: { code: string }) => w.code))].sort()).toEqual(e.expect.warnings);
  golden(e.golden_json, normalizedText(r.stdout, [ws]));
  if (e.expect.exit_code !== 0) {
    expect(env.error.code).toBe(e.expect.error_code);
    return;
  }
  expect(env.summary.edits_count).toBe(e.expect.edits);
  expect(env.summary.files_changed).toBe(e.expect.files);
  golden(e.golden_patch!, env.patch.unified_diff);

  // Determinism: the same command again (now on the warm kernel) gives the same normalized stdout.
  const again = await run(e.argv);
  expect(normalizedText(again.stdout, [ws])).toBe(normalizedText(r.stdout, [ws]));

  if (e.subprocess) {
    // The real binary (cold, in its own process) prints what the in-process kernel did.
    const p = spawnSync(process.execPath, [join(ROOT, 'bin', 'tug.js'), ...e.argv], {
      cwd: ws,
      encoding: 'utf8',
      env: { ...process.env, NODE_ENV: 'test' },
    });
    expect(p.status).toBe(e.expect.exit_code);
    expect(normalizedText(p.stdout, [ws])).toBe(normalizedText(r.stdout, [ws]));
  }

  // git apply on a pristine copy gives exactly what --apply writes (into the analysed workspace). One
  // `git apply` checks the whole patch before it writes anything, so it needs no `--check` first.
  const pristine = copyTree(src);
  const ap = spawnSync('git', ['apply', '-'], { cwd: pristine, input: env.patch.unified_diff, encoding: 'utf8' });
  expect(ap.status, ap.stderr).toBe(0);
  const ra = await run([...e.argv, '--apply']);
  expect(ra.exitCode, ra.stdout).toBe(0);
  const ja = JSON.parse(ra.stdout);
  expect(ja.applied).toBe(true);
  expect(ja.snapshot_after).toBe(env.snapshot_after);
  expect(readTree(ws)).toEqual(readTree(pristine));
}
