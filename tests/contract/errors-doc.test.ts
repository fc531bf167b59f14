import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATALOGUE, ERROR_CODES, TugError } from '../../src/contract/errors.js';
import { WARNINGS } from '../../src/contract/warnings.js';
import { ROOT } from '../helpers/cli.js';

describe('error catalogue', () => {
  it('documents every code with its exit code in docs/errors.md, and nothing else', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');
    const documented = new Map<string, number>();
    for (const m of doc.matchAll(/^\| `([A-Za-z]+)` \| (\d+) \|/gm)) documented.set(m[1]!, Number(m[2]));
    const inSource = new Map(ERROR_CODES.map((c) => [c as string, CATALOGUE[c].exit as number]));
    expect(Object.fromEntries(documented), 'run: node scripts/gen-errors-doc.mjs').toEqual(
      Object.fromEntries(inSource),
    );
  });

  it('gives every code a PascalCase name, an exit code of the contract and a message naming its subject', () => {
    for (const code of ERROR_CODES) {
      expect(code).toMatch(/^[A-Z][A-Za-z]+$/);
      // 130: Interrupted (docs/output.md §3: interrupted by SIGINT / SIGTERM; the CLI gives 143 for SIGTERM).
      expect([2, 3, 4, 10, 130]).toContain(CATALOGUE[code].exit);
      const e = new TugError(code, { plan_path: '.tugtool/tugplan-x.md', step_anchor: 'step-1', worktree: '/w' });
      expect(e.message.length).toBeGreaterThan(5);
      expect(e.exitCode).toBe(CATALOGUE[code].exit);
    }
  });

  it('serializes to the error object of the envelope', () => {
    const e = new TugError('StepNotFound', { plan_path: '.tugtool/tugplan-x.md', step_anchor: 'step-9' });
    expect(e.toJSON()).toEqual({
      code: 'StepNotFound',
      message: 'step-9 is not a step of .tugtool/tugplan-x.md',
      details: { plan_path: '.tugtool/tugplan-x.md', step_anchor: 'step-9' },
      hint: 'tugcode state show .tugtool/tugplan-x.md',
    });
  });

  it('documents every warning code in docs/errors.md, each raised somewhere in src/', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');
    const warnings = doc.slice(doc.indexOf('## Warnings'));
    const documented = [...warnings.matchAll(/^\| `([A-Za-z]+)` \| /gm)].map((m) => m[1]);
    expect(documented, 'run: node scripts/gen-errors-doc.mjs').toEqual(Object.keys(WARNINGS));
    const src = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && f !== join('contract', 'warnings.ts'))
      .map((f) => readFileSync(join(ROOT, 'src', f), 'utf8'))
      .join('\n');
    for (const code of Object.keys(WARNINGS)) expect(src, `${code} is raised nowhere`).toContain(`'${code}'`);
  });
});
