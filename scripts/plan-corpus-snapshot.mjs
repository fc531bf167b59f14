#!/usr/bin/env node
// Writes tests/fixtures/corpus-snapshot.json: per corpus plan (tests/fixtures/corpus/*.md and the seed plan
// *.txt), the step, substep, item, refactor and error counts of the parser. tests/plan/corpus.test.ts checks
// that the parser still produces exactly these numbers, so parser changes are visible in review.
// Usage: npm run build && node scripts/plan-corpus-snapshot.mjs
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { parsePlan } = await import(join(root, 'dist/plan/parse.js'));
const { summarizePlan } = await import(join(root, 'dist/plan/summary.js'));
const dir = join(root, 'tests/fixtures/corpus');
const snapshot = {};
for (const f of readdirSync(dir)
  .filter((n) => /\.(md|txt)$/.test(n) && !n.startsWith('LICENSE'))
  .sort()) {
  snapshot[f] = summarizePlan(parsePlan(readFileSync(join(dir, f))));
}
writeFileSync(join(root, 'tests/fixtures/corpus-snapshot.json'), JSON.stringify(snapshot, null, 2) + '\n');
process.stdout.write(`wrote ${Object.keys(snapshot).length} plans to tests/fixtures/corpus-snapshot.json\n`);
