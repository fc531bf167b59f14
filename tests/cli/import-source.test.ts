/**
 * `state import` names where its document came from: a problem with a document read from stdin or a file
 * names stdin or the file, not the --document flag the user never typed (the built CLI, SQLite).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectError, runCli } from '../helpers/cli.js';
import { st } from '../state/cli-helpers.js';
import { planRepo } from '../state/helpers.js';

const SQLITE = { TUGCODE_STATE_URL: undefined };
const NOT_JSON = '{"format": ';
const OTHER_FORMAT = JSON.stringify({ format: 'something-else', version: 1 });

describe('state import errors name the document source', () => {
  const root = planRepo();

  for (const [name, args] of [
    ['stdin (-)', ['import', '-']],
    ['stdin (no file)', ['import']],
  ] as const) {
    it(`${name}: stdin, not --document`, () => {
      for (const [input, reason] of [
        [NOT_JSON, /^stdin: the export document is not JSON/],
        [OTHER_FORMAT, /^stdin: not a tugcode state export/],
      ] as const) {
        const r = st(root, [...args], { env: SQLITE, input });
        expectError(r, 'InvalidArgument', 2);
        expect(r.json.error.message).toMatch(reason);
        expect(r.json.error.message).not.toContain('--document');
        expect(r.json.error.details.argument).toBe('file');
        expect(r.json.error.details.reason).toBe(r.json.error.message);
      }
    });
  }

  it('a file: its path as given, not --document (text mode too)', () => {
    writeFileSync(join(root, 'bad.json'), NOT_JSON);
    const r = st(root, ['import', 'bad.json'], { env: SQLITE });
    expectError(r, 'InvalidArgument', 2);
    expect(r.json.error.message).toMatch(/^bad\.json: the export document is not JSON/);
    expect(r.json.error.details.argument).toBe('file');
    const t = runCli(['state', 'import', 'bad.json'], { cwd: root, env: SQLITE });
    expect(t.code).toBe(2);
    expect(t.stderr).toContain('bad.json: the export document is not JSON');
    expect(t.stderr).not.toContain('--document');
  });

  it('--document: still named as the flag', () => {
    const r = st(root, ['import', '--document', NOT_JSON], { env: SQLITE });
    expectError(r, 'InvalidArgument', 2);
    expect(r.json.error.message).toMatch(/^the export --document is not JSON/);
    expect(r.json.error.details.argument).toBe('--document');
  });
});
