/**
 * Error messages on PostgreSQL name the store they read (its schema, host, port and database), never
 * "state.db" and never the password; the code, exit code, details and hint are the embedded store's.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectError, runJson } from '../helpers/cli.js';
import { git } from '../helpers/repo.js';
import { createTestDatabase } from '../helpers/pg.js';
import { addWorktree, st, stText } from '../state/cli-helpers.js';
import { planRepo } from '../state/helpers.js';

const SQLITE = { TUGCODE_STATE_URL: undefined };

describe('PlanNotInitialized names the PostgreSQL store', () => {
  it('with no schema yet, and with a schema that lacks the plan', async () => {
    const db = await createTestDatabase('msg');
    const root = planRepo();
    const w1 = addWorktree(root, 'one');
    const env = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'hosta', TUGCODE_STATE_PROJECT: 'msgs' };
    const where = `PostgreSQL schema tug_msgs (${db.server.host}:${db.server.port}/${db.name})`;
    const claim = ['claim', 'demo', '--worktree', w1];

    const embedded = st(root, claim, { env: SQLITE });
    expectError(embedded, 'PlanNotInitialized', 3);
    expect(embedded.json.error.message).toBe('.tugtool/tugplan-demo.md is not initialized in state.db');

    const none = st(root, claim, { env });
    expectError(none, 'PlanNotInitialized', 3);
    expect(none.json.error.message).toBe(`.tugtool/tugplan-demo.md is not initialized in ${where}`);
    expect(none.json.error.details).toEqual(embedded.json.error.details);
    expect(none.json.error.hint).toBe(embedded.json.error.hint);
    expect(none.stdout + none.stderr).not.toContain(db.server.password);

    // Another plan initialized: the schema exists, this plan has no row.
    writeFileSync(join(root, '.tugtool', 'tugplan-other.md'), '# Other\n\n#### Step 1: One\n\n**Tasks:**\n- [ ] x\n');
    git(root, 'add', '.');
    git(root, 'commit', '-qm', 'other');
    expect(st(root, ['init', 'other'], { env }).json.status).toBe('ok');
    const missing = st(root, claim, { env });
    expectError(missing, 'PlanNotInitialized', 3);
    expect(missing.json.error.message).toBe(`.tugtool/tugplan-demo.md is not initialized in ${where}`);
    expect(missing.json.error.details).toEqual(embedded.json.error.details);
    expect(missing.stdout + missing.stderr).not.toContain(db.server.password);
  });
});

describe('other commands name the PostgreSQL store too', () => {
  it('tugcode merge of a plan without a row, and state show with no plans', async () => {
    const db = await createTestDatabase('msg2');
    const root = planRepo();
    const env = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'hosta', TUGCODE_STATE_PROJECT: 'msgs2' };
    const where = `PostgreSQL schema tug_msgs2 (${db.server.host}:${db.server.port}/${db.name})`;
    // A schema with another plan: `merge demo` reads the store and finds no row for demo.
    writeFileSync(join(root, '.tugtool', 'tugplan-other.md'), '# Other\n\n#### Step 1: One\n\n**Tasks:**\n- [ ] x\n');
    git(root, 'add', '.');
    git(root, 'commit', '-qm', 'other');
    const empty = stText(root, ['show'], { env });
    expect(empty.stdout).toContain(`No plans in `);
    expect(empty.stdout).toContain('schema tug_msgs2');
    expect(empty.stdout).not.toContain('state.db');
    expect(st(root, ['init', 'other'], { env }).json.status).toBe('ok');
    const merge = runJson('merge', ['merge', 'demo'], { cwd: root, env });
    expectError(merge, 'PlanNotInitialized', 3);
    expect(merge.json.error.message).toBe(`.tugtool/tugplan-demo.md is not initialized in ${where}`);
    expect(merge.stdout + merge.stderr).not.toContain(db.server.password);
    // A database not created yet: the hint says how to create it, not to check that the server runs.
    const url = db.url.replace(new RegExp(`/${db.name}$`), `/${db.name}_nope`);
    const gone = st(root, ['show'], { env: { ...env, TUGCODE_STATE_URL: url } });
    expectError(gone, 'DatabaseUnavailable', 10);
    expect(gone.json.error.details).toMatchObject({ database: `${db.name}_nope`, pg_code: '3D000' });
    expect(gone.json.error.hint).toBe(
      `create it: createdb -h ${db.server.host} -p ${db.server.port} -U ${db.server.user} ${db.name}_nope ` +
        '(or CREATE DATABASE as a user allowed to), or name an existing database in [state] url or TUGCODE_STATE_URL',
    );
    expect(gone.stdout + gone.stderr).not.toContain(db.server.password);
  });
});
