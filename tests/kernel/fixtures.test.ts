/**
 * The manifest-driven fixture runner (05-kernel.md §13.1) for the TypeScript cases.
 */
import { describe, it, expect } from 'vitest';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runKernelCli } from '../../src/kernel/cli/tug.js';
import { copyTree, gitInit, readTree } from './helpers.js';
import { normalizedText } from './normalize.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const UPDATE = process.env.TUG_UPDATE_GOLDEN === '1';

interface Entry {
  name: string;
  workspace: string;
  argv: string[];
  expect: { exit_code: number; edits: number; files: number; warnings: string[] };
  golden_json: string;
  golden_patch: string;
  requires: string[];
  git?: boolean;
  subprocess?: boolean;
}

const lang = 'typescript';
const manifest: Entry[] = JSON.parse(readFileSync(join(HERE, 'fixtures', lang, 'manifest.json'), 'utf8'));

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

async function run(argv: string[], cwd: string) {
  return runKernelCli(argv, { prog: 'tug', env: { NODE_ENV: 'test' }, cwd });
}

describe(`${lang} fixtures`, () => {
  for (const e of manifest) {
    it(`${e.name}: matches its golden JSON and patch, and the patch equals what --apply writes`, async () => {
      const src = join(HERE, 'fixtures', lang, e.workspace);
      const ws = realpathSync(copyTree(src));
      if (e.git) gitInit(ws);
      const r = await run(e.argv, ws);
      expect(r.exitCode, r.stdout).toBe(e.expect.exit_code);
      const env = JSON.parse(r.stdout);
      expect(Object.keys(env).slice(0, 3)).toEqual(['status', 'schema_version', 'snapshot_id']);
      expect(env.summary.edits_count).toBe(e.expect.edits);
      expect(env.summary.files_changed).toBe(e.expect.files);
      expect([...new Set(env.warnings.map((w: { code: string }) => w.code))].sort()).toEqual(e.expect.warnings);
      golden(e.golden_json, normalizedText(r.stdout, [ws]));
      golden(e.golden_patch, env.patch.unified_diff);

      // git apply on a pristine copy gives exactly what --apply writes.
      const pristine = copyTree(src);
      const chk = spawnSync('git', ['apply', '--check', '-'], { cwd: pristine, input: env.patch.unified_diff, encoding: 'utf8' });
      expect(chk.status, chk.stderr).toBe(0);
      spawnSync('git', ['apply', '-'], { cwd: pristine, input: env.patch.unified_diff });
      const applied = realpathSync(copyTree(src));
      const ra = await run([...e.argv, '--apply'], applied);
      expect(ra.exitCode, ra.stdout).toBe(0);
      const ja = JSON.parse(ra.stdout);
      expect(ja.applied).toBe(true);
      expect(ja.snapshot_after).toBe(env.snapshot_after);
      expect(readTree(applied)).toEqual(readTree(pristine));

      // Determinism: the same command again gives the same normalized stdout.
      const again = await run(e.argv, ws);
      expect(normalizedText(again.stdout, [ws])).toBe(normalizedText(r.stdout, [ws]));

      if (e.subprocess) {
        const p = spawnSync(process.execPath, [join(ROOT, 'bin', 'tug.js'), ...e.argv], { cwd: ws, encoding: 'utf8', env: { ...process.env, NODE_ENV: 'test' } });
        expect(p.status).toBe(e.expect.exit_code);
        expect(normalizedText(p.stdout, [ws])).toBe(normalizedText(r.stdout, [ws]));
      }
    });
  }
});
