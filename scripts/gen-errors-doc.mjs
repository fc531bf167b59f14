#!/usr/bin/env node
// Regenerates docs/errors.md from the error and warning catalogues (src/contract/errors.ts, warnings.ts, built
// to dist/).
// A test (tests/contract/errors-doc.test.ts) fails when the two disagree.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { CATALOGUE } = await import(join(root, 'dist', 'contract', 'errors.js'));
const { WARNINGS } = await import(join(root, 'dist', 'contract', 'warnings.js'));
const EXITS = {
  0: 'success (including "nothing to claim": `claimed: false`)',
  2: 'invalid arguments or input',
  3: 'resolution: the thing named does not exist or is ambiguous',
  4: 'refused: the state does not allow it (nothing was changed)',
  5: 'verification failed (`tugcode refactor`)',
  10: 'internal error (a bug), or an environment failure',
};
const lines = [
  '# tugcode error and warning codes',
  '',
  'Generated from `src/contract/errors.ts` and `src/contract/warnings.ts` by `node scripts/gen-errors-doc.mjs`;',
  'a test keeps them in sync.',
  'Every error is reported as the JSON error envelope under `--json` and as one stderr line',
  '`tugcode: <Code>: <message>` (plus an optional `hint:` line). Exit code 1 is never used on purpose;',
  '130/143 mean interrupted by SIGINT/SIGTERM. The envelope, the exit codes and the input rules are',
  'docs/output.md; the refactor kernel (`tug`, `tugcode refactor`) has its own codes (docs/kernel.md §5.2).',
  '',
  '## Exit codes',
  '',
  '| exit | meaning |',
  '|---|---|',
  ...Object.entries(EXITS).map(([k, v]) => `| ${k} | ${v} |`),
  '',
  '## Codes',
  '',
  '| code | exit | when |',
  '|---|---|---|',
  ...Object.entries(CATALOGUE).map(([code, e]) => `| \`${code}\` | ${e.exit} | ${e.when.replace(/\|/g, '\\|')} |`),
  '',
  '## Warnings',
  '',
  'A warning never fails a command nor changes its exit code. It is one stderr line',
  '`tugcode: warning: <Code>: <message>` in text mode, an entry `{code, message, details?}` of `warnings` under',
  '`--json`; the warnings a run raises while it runs also stream as `warning` events (docs/run.md §1.3). Besides the codes below, `warnings` may carry',
  'an error code of the table above (an error reported without failing the command, such as a run lock that',
  "could not be released) and a plan validator's codes (`W…`, `P…`, docs/plan-format.md §3).",
  '',
  '| code | when |',
  '|---|---|',
  ...Object.entries(WARNINGS).map(([code, w]) => `| \`${code}\` | ${w.when.replace(/\|/g, '\\|')} |`),
  '',
];
writeFileSync(join(root, 'docs', 'errors.md'), lines.join('\n'));
console.log(
  `docs/errors.md: ${Object.keys(CATALOGUE).length} error codes, ${Object.keys(WARNINGS).length} warning codes`,
);
