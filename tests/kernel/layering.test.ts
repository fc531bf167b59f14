/**
 * 05-kernel.md §2.1: dependencies point one way. tugcode imports the kernel; `src/kernel/**` imports only
 * `src/kernel/**`, node built-ins and npm packages, and never SQLite or the CLI framework, so `tug` loads no
 * tugcode module. Checked on the sources (static and dynamic imports) with TypeScript's own pre-processor.
 */
import { describe, it, expect } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const KERNEL = join(ROOT, 'src', 'kernel');
const FORBIDDEN_PACKAGES = ['better-sqlite3', 'commander', 'markdown-it', 'simple-git'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.c?ts$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles.map((f) => f.fileName);
}

describe('kernel layering', () => {
  it('imports nothing of tugcode, SQLite or the CLI framework from src/kernel', () => {
    const files = sources(KERNEL);
    expect(files.length).toBeGreaterThan(50);
    const violations: string[] = [];
    for (const file of files) {
      for (const spec of importsOf(file)) {
        const where = relative(ROOT, file);
        if (spec.startsWith('.')) {
          const target = resolve(dirname(file), spec);
          if (!(target + sep).startsWith(KERNEL + sep)) violations.push(`${where} → ${spec}`);
        } else if (FORBIDDEN_PACKAGES.some((p) => spec === p || spec.startsWith(p + '/'))) {
          violations.push(`${where} → ${spec}`);
        }
      }
    }
    expect(violations).toEqual([]);
  });

  it('sees dynamic imports too (the check would catch a lazy import of tugcode)', () => {
    const probe = join(KERNEL, 'config.ts');
    expect(importsOf(probe)).toEqual(expect.arrayContaining(['./config-keys.js', './repo-layout.js']));
    const lazy = ts.preProcessFile("async function f() { await import('../state/index.js'); }", true, true);
    expect(lazy.importedFiles.map((f) => f.fileName)).toEqual(['../state/index.js']);
  });
});
