/**
 * `run --dry-run` on a state.db written by a newer tugcode refuses as the real run does: SchemaTooNew
 * (docs/run.md §1.10), where it used to exit 0 with a schedule the real run would never start.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSchema, runCli } from '../helpers/cli.js';
import { errorEnvelope } from '../../src/contract/schemas/common.js';
import { LATEST_SCHEMA_VERSION } from '../../src/state/migrate.js';
import { gitSnapshot, implementerScript, planText, runRepo, step, tugJson } from './helpers.js';

const PLAN = planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]);

describe('tugcode run --dry-run on a newer schema', () => {
  it('refuses SchemaTooNew as the real run does, changing nothing', () => {
    const root = runRepo(PLAN, 'newer');
    expect(runCli(['state', 'init', '.tugtool/tugplan-newer.md'], { cwd: root }).code).toBe(0);
    const newer = LATEST_SCHEMA_VERSION + 1;
    const db = new Database(join(root, '.tugtool', 'state.db'));
    db.prepare('UPDATE schema_version SET version = ?').run(newer);
    db.close();
    const before = gitSnapshot(root);

    const text = runCli(['run', 'newer', '--dry-run'], { cwd: root });
    expect(text.code).toBe(4);
    expect(text.stdout).toBe('');
    expect(text.stderr).toContain(
      `tugcode: SchemaTooNew: ${join(root, '.tugtool', 'state.db')} has schema version ${newer}`,
    );
    expect(text.stderr).toContain('upgrade tugcode');

    const dry = tugJson(root, ['run', 'newer', '--dry-run']);
    expect(dry.code).toBe(4);
    checkSchema(errorEnvelope, dry.json);
    const refusal = dry.json.error;
    expect(refusal).toMatchObject({
      code: 'SchemaTooNew',
      details: { found: newer, supported: LATEST_SCHEMA_VERSION },
    });

    // The real run refuses the same way.
    const impl = implementerScript();
    const real = runCli(['run', 'newer', '--implementer', impl.argv, '--json'], { cwd: root });
    expect(real.code).toBe(4);
    const summary = JSON.parse(real.stdout.trim().split('\n').at(-1)!);
    expect(summary.error).toMatchObject({ code: refusal.code, message: refusal.message, details: refusal.details });
    expect(gitSnapshot(root)).toEqual(before);
  });
});
