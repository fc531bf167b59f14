/**
 * Every kernel fixture must be valid source in its language (the seed plan's 26.0.8: `compileall` / `cargo check`).
 * Python files are byte-compiled with `python3 -m py_compile` (bytecode goes to a temp PYTHONPYCACHEPREFIX,
 * so no `__pycache__` lands in the fixtures); without python3 the check is skipped loudly, and
 * TUG_REQUIRE_PYTHON=1 makes it fail. `cargo check` is too slow for the suite: here each Rust workspace is
 * only required to be a Cargo package, and `cargo check --offline` is run by hand when fixtures change.
 */
import { describe, it, expect } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { missingTool } from '../fixture-runner.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

function walk(dir: string, keep: (path: string) => boolean, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, keep, out);
    else if (keep(p)) out.push(p);
  }
  return out;
}

function dirsNamed(dir: string, name: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const p = join(dir, entry.name);
    if (entry.name === name) out.push(p);
    else dirsNamed(p, name, out);
  }
  return out;
}

describe('python fixtures', () => {
  const root = join(FIXTURES, 'python');
  const files = walk(root, (p) => p.endsWith('.py'));
  const why = missingTool('python3');

  it('has fixture files to check', () => {
    expect(files.length).toBeGreaterThan(20);
  });

  if (why !== null && process.env.TUG_REQUIRE_PYTHON !== '1') {
    process.stderr.write(`SKIP python fixtures compile: ${why}\n`);
    it.skip(`every .py file compiles with py_compile — SKIPPED: python3 unavailable (${why})`, () => undefined);
  } else {
    it('every .py file compiles with py_compile', () => {
      if (why !== null) throw new Error(`python3 is required (TUG_REQUIRE_PYTHON=1) but unavailable: ${why}`);
      const cache = mkdtempSync(join(tmpdir(), 'tug-pycache-'));
      try {
        const r = spawnSync('python3', ['-m', 'py_compile', ...files.map((f) => relative(root, f))], {
          cwd: root,
          encoding: 'utf8',
          env: { ...process.env, PYTHONPYCACHEPREFIX: cache },
        });
        expect(r.stderr).toBe('');
        expect(r.status).toBe(0);
      } finally {
        rmSync(cache, { recursive: true, force: true });
      }
    });
  }

  it('holds no __pycache__ directories (they would be copied into every workspace)', () => {
    expect(dirsNamed(root, '__pycache__').map((d) => relative(root, d))).toEqual([]);
  });
});

describe('rust fixtures', () => {
  const root = join(FIXTURES, 'rust');
  const manifest: { name: string; workspace: string }[] = JSON.parse(readFileSync(join(root, 'manifest.json'), 'utf8'));

  it('every manifest workspace is a Cargo package with a crate root', () => {
    const bad = manifest
      .map((e) => join(root, e.workspace))
      .filter(
        (ws) =>
          !existsSync(join(ws, 'Cargo.toml')) ||
          !(existsSync(join(ws, 'src', 'lib.rs')) || existsSync(join(ws, 'src', 'main.rs'))),
      )
      .map((ws) => relative(root, ws));
    expect(bad).toEqual([]);
  });

  it('every directory holding Rust sources belongs to a Cargo package', () => {
    const orphans = walk(root, (p) => p.endsWith('.rs'))
      .filter((f) => {
        for (let d = dirname(f); d.startsWith(root) && d !== root; d = dirname(d))
          if (existsSync(join(d, 'Cargo.toml'))) return false;
        return true;
      })
      .map((f) => relative(root, f));
    expect(orphans).toEqual([]);
  });

  it('holds no build output or lock files', () => {
    const junk = [...dirsNamed(root, 'target'), ...walk(root, (p) => p.endsWith('Cargo.lock'))];
    expect(junk.map((p) => relative(root, p))).toEqual([]);
  });
});
