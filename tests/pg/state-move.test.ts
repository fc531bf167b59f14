/**
 * `state export` / `state import` between the backends (docs/state.md §8), and `doctor` on PostgreSQL
 * (docs/git.md §7): a real PostgreSQL (tests/helpers/pg.ts) and the built CLI.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LATEST_SCHEMA_VERSION } from '../../src/state/migrate.js';
import { expectError, runCli, runJson } from '../helpers/cli.js';
import { createTestDatabase, pgConnect, type TestDatabase } from '../helpers/pg.js';
import { tempDir } from '../helpers/repo.js';
import { addWorktree, st, stText } from '../state/cli-helpers.js';
import { at, dbPathOf, dump, planRepo } from '../state/helpers.js';
import { freePort } from '../helpers/pg-server.js';

const SQLITE = { TUGCODE_STATE_URL: undefined };
const show = (root: string, env: Record<string, string | undefined>) => {
  const r = st(root, ['show', 'demo', '--items', 'all'], { env });
  expect(r.json.status, r.stdout + r.stderr).toBe('ok');
  const { backend: _b, warnings: _w, ...rest } = r.json;
  return rest;
};
const events = (root: string, env: Record<string, string | undefined>) => {
  const r = st(root, ['log', 'demo', '--limit', '1000'], { env });
  expect(r.json.status, r.stdout + r.stderr).toBe('ok');
  return (r.json.events as { id: number }[]).map(({ id: _id, ...e }) => e);
};

/** `state show` or `state log` output as PostgreSQL names this machine's owners: `hosta:<path>`. */
function qualified<T>(v: T): T {
  const walk = (x: unknown, key = ''): unknown => {
    if (Array.isArray(x)) return x.map((y) => walk(y));
    if (x && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, y]) => [k, walk(y, k)]));
    return typeof x === 'string' &&
      ['claimed_by', 'previous_owner', 'actor', 'recorded_by'].includes(key) &&
      x.startsWith('/')
      ? `hosta:${x}`
      : x;
  };
  return walk(v) as T;
}

/** step-0 done on SQLite (items, an artifact, strict completion), step-1 failed once (pending again): nothing held. */
function sqlitePlan(): { root: string; w1: string } {
  const root = planRepo();
  const w1 = addWorktree(root, 'one');
  const ok = (args: string[]) => {
    const r = st(root, args, { env: SQLITE });
    expect(r.json.status, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe('ok');
    return r;
  };
  ok(['init', 'demo']);
  ok(['claim', 'demo', '--worktree', w1]);
  ok(['start', 'demo', 'step-0', '--worktree', w1]);
  ok(['update', 'demo', 'step-0', '--worktree', w1, '--task', '0:completed', '--complete-remaining']);
  ok(['artifact', 'demo', 'step-0', '--worktree', w1, '--kind', 'note', '--summary', 'done with the client']);
  ok(['complete', 'demo', 'step-0', '--worktree', w1]);
  ok(['claim', 'demo', '--worktree', w1]);
  ok(['fail', 'demo', 'step-1', '--worktree', w1, '--reason', 'flaky']);
  return { root, w1 };
}

describe('state export / import between SQLite and PostgreSQL', () => {
  let db: TestDatabase;
  let pgEnv: Record<string, string>;
  let root: string;
  let w1: string;
  let file: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    pgEnv = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'hosta' };
    ({ root, w1 } = sqlitePlan());
    file = join(tempDir('tugcode-export-'), 'demo.json');
  });

  it('exports from SQLite (stdout is the document) and imports into PostgreSQL: show is identical', () => {
    const e = stText(root, ['export', 'demo'], { env: SQLITE });
    expect(e.code, e.stderr).toBe(0);
    const doc = JSON.parse(e.stdout);
    expect(doc).toMatchObject({
      format: 'tugcode-state-export',
      version: 1,
      schema_version: LATEST_SCHEMA_VERSION,
      plan_path: '.tugtool/tugplan-demo.md',
      source: { backend: 'sqlite' },
    });
    expect(Buffer.from(doc.plan.plan_source, 'base64').toString('utf8')).toBe(
      readFileSync(join(root, '.tugtool', 'tugplan-demo.md'), 'utf8'),
    );
    writeFileSync(file, e.stdout);

    const i = st(root, ['import', file], { env: pgEnv });
    expect(i.json, i.stdout + i.stderr).toMatchObject({
      status: 'ok',
      plan_path: '.tugtool/tugplan-demo.md',
      replaced: false,
      imported: { steps: doc.steps.length, events: doc.events.length, step_artifacts: 1 },
      backend: { kind: 'postgres' },
    });
    expect(i.stdout).not.toContain(db.server.password);
    // The same state, with this machine's owners host-qualified.
    expect(show(root, pgEnv)).toEqual(qualified(show(root, SQLITE)));
    // The events, in order, then the import's own.
    const pgEvents = events(root, pgEnv);
    expect(pgEvents.slice(0, -1)).toEqual(qualified(events(root, SQLITE)));
    expect(pgEvents.at(-1)).toMatchObject({ command: 'state import', actor: 'admin' });
  });

  it('the plan continues on PostgreSQL: claim, start, complete with host-qualified owners', () => {
    const c = st(root, ['claim', 'demo', '--worktree', w1], { env: pgEnv });
    expect(c.json, c.stdout + c.stderr).toMatchObject({ claimed: true, step_anchor: 'step-1', attempt: 2 });
    expect(st(root, ['start', 'demo', 'step-1', '--worktree', w1], { env: pgEnv }).json.status).toBe('ok');
    const done = st(root, ['complete', 'demo', 'step-1', '--worktree', w1, '--force', 'moved'], { env: pgEnv });
    expect(done.json.status, done.stdout + done.stderr).toBe('ok');
    const s = show(root, pgEnv);
    const step1 = s.plans[0].steps.find((x: { anchor: string }) => x.anchor === 'step-1');
    expect(step1).toMatchObject({ status: 'completed', claimed_by: `hosta:${w1}` });
    // SQLite is untouched.
    expect(show(root, SQLITE).plans[0].steps.find((x: { anchor: string }) => x.anchor === 'step-1')).toMatchObject({
      status: 'pending',
      failures: 1,
    });
  });

  it("a claim held on SQLite stays its holder's on PostgreSQL: it resumes, heartbeats and completes", () => {
    const r2 = planRepo();
    const w = addWorktree(r2, 'held');
    const env = { ...pgEnv, TUGCODE_STATE_PROJECT: 'heldclaim' };
    expect(st(r2, ['init', 'demo'], { env: SQLITE }).json.status).toBe('ok');
    expect(st(r2, ['claim', 'demo', '--worktree', w], { env: SQLITE }).json).toMatchObject({ step_anchor: 'step-0' });
    const doc = join(tempDir('tugcode-export-'), 'held.json');
    expect(st(r2, ['export', 'demo', '--output', doc], { env: SQLITE }).json.status).toBe('ok');
    expect(st(r2, ['import', doc], { env }).json.status).toBe('ok');
    const again = st(r2, ['claim', 'demo', '--worktree', w], { env });
    expect(again.json, again.stdout + again.stderr).toMatchObject({ step_anchor: 'step-0', resumed: true, attempt: 1 });
    expect(st(r2, ['heartbeat', 'demo', 'step-0', '--worktree', w, '--attempt', '1'], { env }).json.status).toBe('ok');
    const done = st(r2, ['complete', 'demo', 'step-0', '--worktree', w, '--force', 'moved'], { env });
    expect(done.json, done.stdout + done.stderr).toMatchObject({ status: 'ok', completed: true });
  });

  it('refuses a plan that has state already, changing nothing; --replace loads the document', () => {
    const before = { show: show(root, pgEnv), events: events(root, pgEnv) };
    const r = st(root, ['import', file], { env: pgEnv });
    expectError(r, 'PlanExists', 4);
    expect(r.json.error.hint).toContain('--replace');
    expect({ show: show(root, pgEnv), events: events(root, pgEnv) }).toEqual(before);

    const sqliteBefore = dump(dbPathOf(root));
    expectError(st(root, ['import', file], { env: SQLITE }), 'PlanExists', 4);
    expect(dump(dbPathOf(root))).toEqual(sqliteBefore);

    const again = st(root, ['import', file, '--replace'], { env: pgEnv });
    expect(again.json, again.stdout + again.stderr).toMatchObject({ status: 'ok', replaced: true });
    expect(show(root, pgEnv)).toEqual(qualified(show(root, SQLITE)));
    expect(events(root, pgEnv).slice(0, -1)).toEqual(qualified(events(root, SQLITE)));
    // The reloaded artifact has a new id, its event the old one: `show --step` still names who recorded it.
    const step0 = (env: Record<string, string | undefined>) =>
      st(root, ['show', 'demo', '--step', 'step-0'], { env }).json.plans[0].steps[0].artifacts;
    const [moved] = step0(pgEnv);
    expect(moved.id).not.toBe(step0(SQLITE)[0].id);
    expect(moved).toEqual(qualified({ ...step0(SQLITE)[0], id: moved.id }));
    expect(moved).toMatchObject({
      kind: 'note',
      summary: 'done with the client',
      recorded_by: `hosta:${w1}`,
      attempt: 1,
    });
  });

  it('round trip PostgreSQL → SQLite: a fresh repository gets the same state (owners kept as they are)', () => {
    const c = st(root, ['claim', 'demo', '--worktree', w1], { env: pgEnv });
    expect(c.json.claimed, c.stdout).toBe(true);
    const out = join(tempDir('tugcode-export-'), 'pg.json');
    const e = st(root, ['export', 'demo', '--output', out], { env: pgEnv });
    expect(e.json, e.stdout + e.stderr).toMatchObject({
      status: 'ok',
      output: out,
      counts: { steps: 5, step_artifacts: 1 },
    });
    expect(e.json.document).toBeUndefined();
    expect(readFileSync(out, 'utf8')).not.toContain(db.server.password);

    const fresh = planRepo();
    expect(existsSync(dbPathOf(fresh))).toBe(false);
    const i = stText(fresh, ['import', '-'], { env: SQLITE, input: readFileSync(out, 'utf8') });
    expect(i.code, i.stdout + i.stderr).toBe(0);
    expect(i.stdout).toContain('Imported .tugtool/tugplan-demo.md');
    expect(show(fresh, SQLITE)).toEqual(show(root, pgEnv));
    const held = show(fresh, SQLITE).plans[0].steps.find((x: { anchor: string }) => x.anchor === c.json.step_anchor);
    expect(held).toMatchObject({ status: 'claimed', claimed_by: `hosta:${w1}` });
    expect(events(fresh, SQLITE).slice(0, -1)).toEqual(events(root, pgEnv));
  });

  it("renames the owners that event details name too (a takeover's previous owner)", () => {
    const r2 = planRepo();
    const [a, b] = [addWorktree(r2, 'a'), addWorktree(r2, 'b')];
    expect(st(r2, ['init', 'demo'], { env: SQLITE }).json.status).toBe('ok');
    expect(st(r2, ['claim', 'demo', '--worktree', a, '--lease-duration', '60'], { env: SQLITE }).json.claimed).toBe(
      true,
    );
    const taken = st(r2, ['claim', 'demo', '--worktree', b], { env: SQLITE, now: at(7200) });
    expect(taken.json).toMatchObject({ claimed: true, reclaimed_from_expired: true, previous_owner: a });
    const e = stText(r2, ['export', 'demo'], { env: SQLITE });
    const doc = join(tempDir('tugcode-export-'), 'takeover.json');
    writeFileSync(doc, e.stdout);
    expect(st(r2, ['import', doc], { env: pgEnv }).json.status).toBe('ok');
    const takeover = events(r2, pgEnv).find((x) => (x as { command: string }).command === 'takeover');
    expect(takeover).toMatchObject({ actor: `hosta:${b}`, details: { previous_owner: `hosta:${a}` } });
  });

  it('imports the --json envelope of state export too', async () => {
    const env = (await createTestDatabase()).url;
    const e = st(root, ['export', 'demo'], { env: SQLITE });
    expect(e.json.document.format).toBe('tugcode-state-export');
    const f = join(tempDir('tugcode-export-'), 'env.json');
    writeFileSync(f, e.stdout);
    const i = st(root, ['import', f], { env: { TUGCODE_STATE_URL: env, TUGCODE_STATE_HOST: 'hostb' } });
    expect(i.json, i.stdout + i.stderr).toMatchObject({ status: 'ok', replaced: false });
  });
});

describe('state import refuses malformed documents and changes nothing', () => {
  let doc: Record<string, any>;
  let root: string;
  beforeAll(() => {
    ({ root } = sqlitePlan());
    doc = JSON.parse(stText(root, ['export', 'demo'], { env: SQLITE }).stdout);
  });

  const cases: [string, (d: any) => unknown, RegExp][] = [
    ['not JSON', () => '{"format": ', /not JSON/],
    ['another format', (d) => ({ ...d, format: 'something-else' }), /not a tugcode state export/],
    ['a newer format version', (d) => ({ ...d, version: 2 }), /version 2 is not supported/],
    ['a newer schema', (d) => ({ ...d, schema_version: 99 }), /newer tugcode/],
    [
      'a bad step status',
      (d) => ({ ...d, steps: d.steps.map((s: any, i: number) => (i ? s : { ...s, status: 'bogus' })) }),
      /steps\.0\.status/,
    ],
    ['an unknown field', (d) => ({ ...d, extra: 1 }), /extra/],
    [
      'a dependency on no step',
      (d) => ({ ...d, step_deps: [...d.step_deps, { step_anchor: 'step-0', depends_on: 'step-99' }] }),
      /step-99 is not a step/,
    ],
    [
      'plan bytes that do not match their hash',
      (d) => ({ ...d, plan: { ...d.plan, plan_source: Buffer.from('x').toString('base64') } }),
      /SHA-256/,
    ],
    ['a path outside the repository', (d) => ({ ...d, plan_path: '../evil.md' }), /not a repo-relative path/],
  ];

  for (const [name, make, reason] of cases) {
    it(`${name}: InvalidArgument, no state.db and no PostgreSQL schema created`, async () => {
      const made = make(doc);
      const text = typeof made === 'string' ? made : JSON.stringify(made);
      const fresh = planRepo();
      const r = st(fresh, ['import', '-'], { env: SQLITE, input: text });
      expectError(r, 'InvalidArgument', 2);
      expect(r.json.error.message).toMatch(reason);
      expect(existsSync(dbPathOf(fresh))).toBe(false);

      const pgdb = await createTestDatabase();
      const p = st(fresh, ['import', '-'], { env: { TUGCODE_STATE_URL: pgdb.url }, input: text });
      expectError(p, 'InvalidArgument', 2);
      const client = await pgConnect(pgdb.url);
      try {
        const schemas = await client.query("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'tug\\_%'");
        expect(schemas.rows).toEqual([]);
      } finally {
        await client.end();
      }
    });
  }

  it('an empty stdin, a missing file, and a file with --document are InvalidArgument', () => {
    expectError(st(root, ['import', '-'], { env: SQLITE, input: '' }), 'InvalidArgument', 2);
    expectError(st(root, ['import', join(root, 'nope.json')], { env: SQLITE }), 'InvalidArgument', 2);
    expectError(st(root, ['import', 'x.json', '--document', '{}'], { env: SQLITE }), 'InvalidArgument', 2);
  });

  it('the output of state export --output is not the document', () => {
    const out = join(tempDir('tugcode-export-'), 'x.json');
    const e = st(root, ['export', 'demo', '--output', out], { env: SQLITE });
    const r = st(planRepo(), ['import', '-'], { env: SQLITE, input: e.stdout });
    expectError(r, 'InvalidArgument', 2);
    expect(r.json.error.message).toContain('import the file it wrote');
  });
});

describe('doctor on PostgreSQL', () => {
  it('checks the connection, the schema and the clock instead of state.db, and the plans', async () => {
    const db = await createTestDatabase();
    const root = planRepo();
    const env = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'hosta' };
    expect(st(root, ['init', 'demo'], { env }).json.status).toBe('ok');
    const d = runJson('doctor', ['doctor'], { cwd: root, env });
    expect(d.json.status, d.stdout + d.stderr).toBe('ok');
    const names = d.json.checks.map((c: { name: string }) => c.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'state-pg-connection',
        'state-pg-schema',
        'state-pg-clock',
        'orphaned-plans',
        'expired-leases',
        'failed-steps',
        'dead-runs',
      ]),
    );
    expect(names.filter((n: string) => n.startsWith('state-db-'))).toEqual([]);
    const by = Object.fromEntries(d.json.checks.map((c: { name: string }) => [c.name, c]));
    expect(by['state-pg-connection'].status).toBe('pass');
    expect(by['state-pg-schema']).toMatchObject({
      status: 'pass',
      message: `schema version ${LATEST_SCHEMA_VERSION} (current)`,
    });
    expect(by['state-pg-clock'].status).toBe('pass');
    expect(by['orphaned-plans'].message).toContain('1 plan(s)');
    expect(d.stdout).not.toContain(db.server.password);
  });

  it('a server with no schema yet is a warning; nothing is created', async () => {
    const db = await createTestDatabase();
    const d = runJson('doctor', ['doctor'], { cwd: planRepo(), env: { TUGCODE_STATE_URL: db.url } });
    expect(d.json.status, d.stdout + d.stderr).toBe('ok');
    const schema = d.json.checks.find((c: { name: string }) => c.name === 'state-pg-schema');
    expect(schema.status).toBe('warn');
    const client = await pgConnect(db.url);
    try {
      expect((await client.query("SELECT 1 FROM pg_namespace WHERE nspname LIKE 'tug\\_%'")).rows).toEqual([]);
    } finally {
      await client.end();
    }
  });

  it('a closed port fails the connection check naming host, port and database, never the password', async () => {
    const port = await freePort();
    const secret = 'S3cret-pw-doctor';
    const url = `postgres://tug:${secret}@127.0.0.1:${port}/tugdb`;
    const root = planRepo();
    const d = runJson('doctor', ['doctor'], { cwd: root, env: { TUGCODE_STATE_URL: url } });
    expectError(d, 'DoctorFailed', 4);
    const conn = d.json.error.details.checks.find((c: { name: string }) => c.name === 'state-pg-connection');
    expect(conn.status).toBe('fail');
    expect(conn.message).toContain(`127.0.0.1:${port}`);
    expect(conn.message).toContain('tugdb');
    const text = runCli(['doctor'], { cwd: root, env: { TUGCODE_STATE_URL: url } });
    expect(text.code).toBe(4);
    expect(text.stdout).toContain('state-pg-connection');
    for (const out of [d.stdout, d.stderr, text.stdout, text.stderr]) expect(out).not.toContain(secret);
  });
});
