/**
 * Identity on a shared PostgreSQL (docs/state.md §8): projects never see each other, the default project id
 * is the repository's root commit (every clone agrees), owners are host-qualified; and two processes
 * opening a fresh project at once apply its migrations once.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { systemClock } from '../../src/clock.js';
import { PgStateStore, projectSchema } from '../../src/state/pg-store.js';
import { LATEST_SCHEMA_VERSION } from '../../src/state/migrate.js';
import { git, tempDir } from '../helpers/repo.js';
import { addWorktree } from '../state/cli-helpers.js';
import { chainPlan, DEMO_PATH, planRepo } from '../state/helpers.js';
import { implementerScript, planText, runRepo, startRun, step } from '../run/helpers.js';
import { backend, cliAsync, fileDatabase } from './backend.js';

/**
 * The sessions' calls run the built CLI's argv path in-process (tests/helpers/cli-in-process.ts): these are rules
 * of the state on PostgreSQL. The tests that name the project from the repository or race fresh projects run
 * the real CLI, as tests/pg/contract.test.ts's first scenario does for every command.
 */
const IN_PROCESS = { inProcess: true };

async function query<T = Record<string, unknown>>(url: string, text: string, vals: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text, vals)).rows as T[];
  } finally {
    await c.end();
  }
}

describe('identity on a shared PostgreSQL', () => {
  it('keeps two projects in one database apart', async () => {
    const a = await backend('postgres');
    const b = await backend('postgres');
    const root = planRepo();
    const w1 = addWorktree(root, 'one');
    const ta = a.session(root, { w1 }, IN_PROCESS);
    const tb = b.session(root, { w1 }, IN_PROCESS);
    ta.ok(['init', 'demo']);
    ta.ok(['claim', 'demo', '--worktree', w1]);
    expect(tb.ok(['show']).plans).toEqual([]);
    expect(tb.ok(['log']).events).toEqual([]);
    await tb.refused(['claim', 'demo', '--worktree', w1], 'PlanNotInitialized', 3);
    tb.ok(['init', 'demo']);
    expect(tb.ok(['claim', 'demo', '--worktree', w1])).toMatchObject({ step_anchor: 'step-0', resumed: false });
    tb.ok(['complete', 'demo', 'step-0', '--worktree', w1, '--force', 'b only']);
    expect(ta.ok(['show', 'demo']).plans[0].steps[0]).toMatchObject({ status: 'claimed' });
    expect(tb.ok(['show', 'demo']).plans[0].steps[0]).toMatchObject({ status: 'completed' });
    expect(ta.ok(['log']).events).toHaveLength(2);
  });

  it('names the project after the root commit, so two clones share one plan', async () => {
    const db = await fileDatabase();
    const root = planRepo();
    const rootCommit = git(root, 'rev-list', '--max-parents=0', 'HEAD').trim();
    const clone = join(tempDir(), 'clone');
    git(root, 'commit', '-q', '--allow-empty', '-m', 'later work');
    git(tempDir(), 'clone', '-q', root, clone);
    const env = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'h', TUGCODE_STATE_PROJECT: '' };
    const one = await cliAsync(root, ['state', 'init', 'demo'], env);
    expect(one.json?.status, one.stderr).toBe('ok');
    expect((await cliAsync(root, ['state', 'claim', 'demo', '--worktree', root], env)).json.claimed).toBe(true);
    const schema = `tug_${rootCommit.slice(0, 20)}`;
    expect(await query(db.url, 'SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).toHaveLength(1);
    // The clone sees the same rows (and its own init is a no-op).
    const shown = await cliAsync(clone, ['state', 'show', 'demo'], env);
    expect(shown.json.plans[0].steps[0]).toMatchObject({ status: 'claimed', claimed_by: `h:${root}` });
    expect(shown.json.backend.location).toContain(schema);
    expect((await cliAsync(clone, ['state', 'init', 'demo'], env)).json).toMatchObject({ already_initialized: true });
    expect((await cliAsync(clone, ['state', 'claim', 'demo', '--worktree', clone], env)).json).toMatchObject({
      claimed: false,
      claimed_steps: ['step-0'],
    });
  });

  it('gives long project ids that differ only past 40 characters schemas of their own', async () => {
    // Ids that fit keep exactly the schema they always had (existing data).
    expect(projectSchema('Acme-Platform')).toBe('tug_acme_platform');
    expect(projectSchema('0123456789abcdef0123')).toBe('tug_0123456789abcdef0123');
    const forty = 'x'.repeat(40);
    expect(projectSchema(forty)).toBe(`tug_${forty}`);
    // Longer ids: a readable prefix and a hash of the whole id, within PostgreSQL's 63-byte identifiers.
    const base = 'acme-platform-monorepo-backend-services-';
    const [payments, ledger] = [projectSchema(`${base}payments`), projectSchema(`${base}ledger`)];
    expect(payments).not.toBe(ledger);
    expect(payments).toMatch(/^tug_acme_platform_monorepo_back_[0-9a-f]{12}$/);
    expect(projectSchema(`${base}payments`)).toBe(payments); // stable
    expect(projectSchema(`${forty}a`)).not.toBe(projectSchema(`${forty}b`));
    for (const id of [`${forty}a`, 'y'.repeat(500)])
      expect(Buffer.byteLength(projectSchema(id))).toBeLessThanOrEqual(63);
    // Through the CLI: the second project sees nothing of the first.
    const db = await fileDatabase();
    const root = planRepo();
    const env = (project: string) => ({
      TUGCODE_STATE_URL: db.url,
      TUGCODE_STATE_HOST: 'h',
      TUGCODE_STATE_PROJECT: project,
    });
    const long = 'x'.repeat(70);
    expect((await cliAsync(root, ['state', 'init', 'demo'], env(`${long}a`))).json.status).toBe('ok');
    const other = await cliAsync(root, ['state', 'show'], env(`${long}b`));
    expect(other.json.plans).toEqual([]);
    expect(other.json.backend.location).toContain(projectSchema(`${long}b`));
    const shown = await cliAsync(root, ['state', 'show'], env(`${long}a`));
    expect(shown.json.plans).toHaveLength(1);
  });

  it('treats the same worktree path on two hosts as two owners', async () => {
    const a = await backend('postgres', { host: 'a' });
    const root = planRepo({ [DEMO_PATH]: chainPlan(2, 2) });
    const w = addWorktree(root, 'same');
    const envB = { ...a.env, TUGCODE_STATE_HOST: 'b' };
    const t = a.session(root, { w }, IN_PROCESS);
    t.ok(['init', 'demo']);
    expect(t.ok(['claim', 'demo', '--worktree', w])).toMatchObject({ step_anchor: 'step-1', resumed: false });
    const other = t.ok(['claim', 'demo', '--worktree', w], { env: envB });
    expect(other).toMatchObject({ claimed: true, step_anchor: 'step-2', resumed: false });
    const notOwner = await t.refused(['heartbeat', 'demo', 'step-1', '--worktree', w], 'NotOwner', 4, {
      env: envB,
    });
    expect(notOwner.json.error.details.claimed_by ?? notOwner.json.error.message).toContain(`a:${w}`);
    const steps = t.ok(['show', 'demo']).plans[0].steps;
    expect(steps.map((s: { claimed_by: string }) => s.claimed_by)).toEqual([`a:${w}`, `b:${w}`]);
    // Each host resumes only its own claim.
    expect(t.ok(['claim', 'demo', '--worktree', w], { env: envB })).toMatchObject({
      step_anchor: 'step-2',
      resumed: true,
    });
  });

  it('a run without --remote is refused while another machine runs the plan as the same owners (docs/state.md §8.4)', async () => {
    // Two machines given one host name, their clones at one path: both pass for the plan's recorded clone.
    // The other machine is a store of this process holding the run identity under another machine id.
    const db = await fileDatabase();
    const root = runRepo(planText([step(1, 'Only')]));
    const env = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'dup', TUGCODE_STATE_PROJECT: 'sameid' };
    const other = new PgStateStore({
      url: db.url,
      project: 'sameid',
      host: 'dup',
      machine: 'other-machine',
      repoRoot: root,
      clock: systemClock(),
      config: { state: { lease_seconds: 60, max_attempts: 3 } },
      env: {},
      longLived: false,
    });
    try {
      await other.holdRunIdentity(DEMO_PATH);
      const r = await startRun(root, ['demo', '--implementer', implementerScript().argv], env).done;
      expect(r.code, r.stdout + r.stderr).toBe(4);
      expect(r.events.at(-1).error).toMatchObject({
        code: 'RunInProgress',
        details: { holder_machine: 'other-machine', owner: `dup:${root}` },
      });
      // Refused before its first claim: the plan's rows were never made.
      expect(r.events.some((e: any) => e.type === 'claimed')).toBe(false);
      expect((await cliAsync(root, ['state', 'show'], env)).json.plans).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('applies the migrations of a fresh project once when processes open it at once', async () => {
    for (let round = 0; round < 3; round++) {
      const b = await backend('postgres');
      const root = planRepo();
      const results = await Promise.all(
        Array.from({ length: 6 }, () => cliAsync(root, ['state', 'init', 'demo'], b.env)),
      );
      for (const r of results) expect(r.code, r.stderr).toBe(0);
      expect(results.filter((r) => r.json.already_initialized === false)).toHaveLength(1);
      expect(await query(b.db!.url, `SELECT version FROM "${b.schema}".schema_version`)).toEqual([
        { version: LATEST_SCHEMA_VERSION },
      ]);
      expect(await query(b.db!.url, `SELECT plan_path FROM "${b.schema}".plans`)).toHaveLength(1);
      const events = await query(b.db!.url, `SELECT command FROM "${b.schema}".events`);
      expect(events).toEqual([{ command: 'state init' }]);
    }
  });
});

describe('owner names that need quoting', () => {
  it('claims, resumes and completes from a worktree whose path holds a quote and a backslash', async () => {
    const b = await backend('postgres');
    const root = planRepo();
    const w = join(tempDir('tugcode-lw-'), "it's a\\path");
    git(root, 'worktree', 'add', '-q', w, '-b', 'odd-path');
    const t = b.session(root, { w }, IN_PROCESS);
    t.ok(['init', 'demo']);
    expect(t.ok(['claim', 'demo', '--worktree', w])).toMatchObject({ claimed: true, step_anchor: 'step-0' });
    // The owner lock's key is a literal in the transaction's first statement: resuming proves it parsed.
    expect(t.ok(['claim', 'demo', '--worktree', w])).toMatchObject({ step_anchor: 'step-0', resumed: true });
    t.ok(['complete', 'demo', 'step-0', '--worktree', w, '--force', 'odd path']);
    const show = t.ok(['show', 'demo']).plans[0].steps[0];
    expect(show).toMatchObject({ status: 'completed' });
  });
});
