#!/usr/bin/env node
// Deterministic TypeScript project for the kernel benchmark (docs/kernel.md §8):
// src/util.ts (parseConfig, Config, Registry), src/index.ts re-exporting it, and N-1 modules of ~100 lines.
// Usage: node gen-ts-project.mjs --files 300 --seed 1 [--out DIR]  (prints the directory)
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatorMain, prng } from '../lib.mjs';

export function generate({ files = 300, seed = 1, out } = {}) {
  const dir = out ?? mkdtempSync(join(tmpdir(), 'tug-bench-'));
  const rnd = prng(seed);
  mkdirSync(join(dir, 'src', 'm'), { recursive: true });
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: {
          strict: true,
          target: 'ES2022',
          module: 'ESNext',
          moduleResolution: 'Bundler',
          noEmit: true,
          lib: ['ES2022'],
        },
        include: ['src'],
      },
      null,
      2,
    ) + '\n',
  );
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'bench-project', private: true, type: 'module' }, null, 2) + '\n',
  );
  writeFileSync(
    join(dir, 'src', 'util.ts'),
    `export interface Config {\n  name: string;\n  values: Record<string, number>;\n}\n\nexport function parseConfig(text: string): Config {\n  const values: Record<string, number> = {};\n  for (const line of text.split('\\n')) {\n    const [k, v] = line.split('=');\n    if (k && v) values[k.trim()] = Number(v);\n  }\n  return { name: 'cfg', values };\n}\n\nexport class Registry {\n  private items = new Map<string, Config>();\n  register(key: string, c: Config): void {\n    this.items.set(key, c);\n  }\n  lookup(key: string): Config | undefined {\n    return this.items.get(key);\n  }\n}\n`,
  );
  writeFileSync(
    join(dir, 'src', 'index.ts'),
    `export { parseConfig, Registry } from './util';\nexport type { Config } from './util';\n`,
  );
  const n = files - 2;
  const pad = (i) => String(i).padStart(3, '0');
  for (let i = 1; i <= n; i++) {
    const from = i % 2 ? '../util' : '../index';
    const a = ((i + n - 2) % n) + 1;
    const b = (i % n) + 1;
    const lines = [];
    lines.push(`import { parseConfig, Registry } from '${from}';`);
    lines.push(`import type { Config } from '../util';`);
    if (a !== i) lines.push(`import { fn_${pad(a)}_a } from './mod_${pad(a)}';`);
    if (b !== i && b !== a) lines.push(`import { fn_${pad(b)}_b } from './mod_${pad(b)}';`);
    lines.push('');
    for (const suffix of ['a', 'b', 'c']) {
      lines.push(`export function fn_${pad(i)}_${suffix}(input: string): number {`);
      lines.push(`  const c: Config = parseConfig(input);`);
      for (let k = 0; k < 5; k++)
        lines.push(`  const v${k} = parseConfig(input + '${k}=${Math.floor(rnd() * 100)}').values['${k}'] ?? ${k};`);
      lines.push(`  return Object.keys(c.values).length + v0 + v1 + v2 + v3 + v4;`);
      lines.push('}');
      lines.push('');
    }
    lines.push(`export class Service${pad(i)} {`);
    lines.push(`  private reg = new Registry();`);
    for (const m of ['load', 'store', 'query', 'reset']) {
      lines.push(`  ${m}(text: string): number {`);
      lines.push(`    const c = parseConfig(text);`);
      lines.push(`    this.reg.register('${m}', c);`);
      lines.push(`    return Object.keys(parseConfig(text + '\\n${m}=1').values).length;`);
      lines.push('  }');
    }
    lines.push('}');
    lines.push('');
    lines.push(`export function run_${pad(i)}(): number {`);
    lines.push(`  const s = new Service${pad(i)}();`);
    const calls = [];
    if (a !== i) calls.push(`fn_${pad(a)}_a('x=1')`);
    if (b !== i && b !== a) calls.push(`fn_${pad(b)}_b('y=2')`);
    lines.push(
      `  return s.load('a=1') + s.query('b=2') + parseConfig('z=3').name.length${calls.length ? ' + ' + calls.join(' + ') : ''};`,
    );
    lines.push('}');
    while (lines.length < 100) lines.push(`// filler ${lines.length}: ${Math.floor(rnd() * 1e6)}`);
    writeFileSync(join(dir, 'src', 'm', `mod_${pad(i)}.ts`), lines.join('\n') + '\n');
  }
  return dir;
}

generatorMain(import.meta, generate);
