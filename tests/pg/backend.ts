/**
 * The backend fixture of the state contract suite (docs/state.md §8): the same CLI calls against the embedded
 * SQLite state.db or a PostgreSQL database, a table dump of either (to prove a refused command changed
 * nothing), and a transcript of normalized outputs so the two backends' results can be compared as a whole.
 *
 *   const b = await backend('postgres');            // a fresh project on the file's test database
 *   const t = b.session(root, { w1, w2 });           // runs `tugcode state …` with the backend's env
 *   b.session(root, paths, { inProcess: true });     // the same calls in-process (no stdin)
 *   t.st(['claim', 'demo', '--worktree', w1]);
 *   await t.refused([...], 'NotOwner', 4);           // error code, exit code, and no table changed
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { expect } from 'vitest';
import type { CliResult } from '../helpers/cli.js';
import { needsRealCli, runCliInProcess } from '../helpers/cli-in-process.js';
import { afterEachFile } from '../helpers/file-hooks.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';
import { st, type RunOptions } from '../state/cli-helpers.js';
import { dbPathOf, dump as sqliteDump, TABLES } from '../state/helpers.js';

export type BackendKind = 'sqlite' | 'postgres';
export const BACKENDS: BackendKind[] = ['sqlite', 'postgres'];
export const HOST = 'hosta';

export type Dump = Record<string, unknown[]> | null;

export interface SessionOptions {
  inProcess?: boolean;
}

export interface Backend {
  kind: BackendKind;
  /** Environment of every call (TUGCODE_STATE_URL, …_PROJECT, …_HOST on PostgreSQL; nothing on SQLite). */
  env: Record<string, string>;
  /** The project id (PostgreSQL). */
  project: string;
  /** `tug_<project>` (PostgreSQL). */
  schema: string;
  db: TestDatabase | null;
  /** How this backend names the owner `path` in claimed_by, actor, previous_owner. */
  owner(path: string): string;
  /** Every row of every table of this project (null when no state exists yet). */
  dump(root: string): Promise<Dump>;
  /**
   * A session on a repo: every call recorded (normalized) in `transcript`. `inProcess`: calls without stdin run
   * the built CLI's argv path in-process (tests/helpers/cli-in-process.ts), not as a child process.
   */
  session(root: string, paths?: Record<string, string>, o?: SessionOptions): Session;
}

let fileDb: Promise<TestDatabase> | null = null;
// createTestDatabase drops it after the file: the next file of this process makes its own.
afterEachFile(() => {
  fileDb = null;
});
/** One database per test file; each backend() call is a fresh project (schema) in it. */
export function fileDatabase(): Promise<TestDatabase> {
  fileDb ??= createTestDatabase('contract');
  return fileDb;
}

export async function backend(kind: BackendKind, o: { host?: string; project?: string } = {}): Promise<Backend> {
  if (kind === 'sqlite') {
    const b: Backend = {
      kind,
      env: {},
      project: '',
      schema: '',
      db: null,
      owner: (p) => p,
      dump: async (root) => sqliteDump(dbPathOf(root)),
      session: (root, paths, so) => new Session(b, root, paths, so),
    };
    return b;
  }
  const db = await fileDatabase();
  const project = o.project ?? `p${randomBytes(6).toString('hex')}`;
  const schema = `tug_${project}`;
  const host = o.host ?? HOST;
  const b: Backend = {
    kind,
    env: { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_PROJECT: project, TUGCODE_STATE_HOST: host },
    project,
    schema,
    db,
    owner: (p) => `${host}:${p}`,
    dump: () => pgDump(db.url, schema),
    session: (root, paths, so) => new Session(b, root, paths, so),
  };
  return b;
}

/** Every table of a project's schema, rows sorted; plus the identity sequences (a rollback must not move them). */
export async function pgDump(url: string, schema: string): Promise<Dump> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const has = await c.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (has.rowCount === 0) return null;
    const tables = (
      await c.query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY 1",
        [schema],
      )
    ).rows.map((r: { table_name: string }) => r.table_name);
    const out: Record<string, unknown[]> = {};
    for (const t of tables) {
      const rows = (await c.query(`SELECT * FROM "${schema}"."${t}"`)).rows;
      out[t] = rows.map((r) => JSON.stringify(r)).sort();
    }
    const seqs = (
      await c.query('SELECT sequencename, last_value FROM pg_sequences WHERE schemaname = $1 ORDER BY 1', [schema])
    ).rows;
    out['(sequences)'] = seqs;
    return out;
  } finally {
    await c.end();
  }
}

/** The tables every backend has (the SQLite dump's list). */
export { TABLES };

export interface Entry {
  args: string[];
  code: number;
  json: unknown;
}

/**
 * Calls on one repo through one backend. Outputs are normalized for the cross-backend comparison: the repo's
 * paths become `<name>`, the PostgreSQL host prefix of owners disappears, commit hashes become `<commit:N>`,
 * and `state show`'s `backend` field is dropped.
 */
export class Session {
  readonly transcript: Entry[] = [];
  private readonly hashes = new Map<string, string>();
  constructor(
    readonly b: Backend,
    readonly root: string,
    private readonly paths: Record<string, string> = {},
    private readonly so: SessionOptions = {},
  ) {}

  /** Names one more path for the normalized transcript. */
  name(name: string, path: string): string {
    this.paths[name] = path;
    return path;
  }

  private opts(o: RunOptions = {}): RunOptions {
    return { ...o, env: { ...this.b.env, ...o.env } };
  }

  /** `tugcode state …args --json` (schema-checked), recorded. */
  st(args: string[], o: RunOptions = {}): CliResult {
    const inProcess = this.so.inProcess && !needsRealCli(['state', ...args], o.input);
    const r = st(this.root, args, { ...this.opts(o), ...(inProcess ? { run: runCliInProcess } : {}) });
    this.record(args, r);
    return r;
  }

  /** Like st, expecting success. */
  ok(args: string[], o: RunOptions = {}): any {
    const r = this.st(args, o);
    expect(r.json?.status, `${args.join(' ')}\n${r.stdout}${r.stderr}`).toBe('ok');
    return r.json;
  }

  /** A call that must fail with `code` / `exit` and leave every table as it was. */
  async refused(args: string[], code: string, exit: number, o: RunOptions = {}): Promise<CliResult> {
    const before = await this.b.dump(this.root);
    const r = this.st(args, o);
    expect(r.json?.status, `${args.join(' ')}\n${r.stdout}${r.stderr}`).toBe('error');
    expect(r.json.error.code, JSON.stringify(r.json.error)).toBe(code);
    expect(r.code).toBe(exit);
    expect(await this.b.dump(this.root), `${args.join(' ')} changed the state`).toEqual(before);
    return r;
  }

  private record(args: string[], r: CliResult): void {
    this.transcript.push({
      args: args.map((a) => this.normalize(a) as string),
      code: r.code,
      json: this.normalize(r.json),
    });
  }

  normalize(v: unknown): unknown {
    if (typeof v === 'string') {
      let s = v;
      if (this.b.kind === 'postgres') s = s.split(`${this.prefix()}`).join('');
      // Where the state lives (errors name it): the state.db path, or the URL without its password.
      s = s.split(join(this.root, '.tugtool', 'state.db')).join('<state>');
      s = s.replace(/postgres:\/\/[^\s"]*/g, '<state>');
      // Messages that say "state.db" on SQLite name the PostgreSQL schema and server instead.
      const db = this.b.db;
      if (db)
        s = s
          .split(`PostgreSQL schema ${this.b.schema} (${db.server.host}:${db.server.port}/${db.name})`)
          .join('state.db');
      const named = Object.entries({ root: this.root, ...this.paths }).sort((a, b) => b[1].length - a[1].length);
      for (const [name, p] of named) s = s.split(p).join(`<${name}>`);
      s = s.replace(/\b[0-9a-f]{40}\b/g, (h) => {
        if (!this.hashes.has(h)) this.hashes.set(h, `<commit:${this.hashes.size}>`);
        return this.hashes.get(h)!;
      });
      return s;
    }
    if (Array.isArray(v)) return v.map((x) => this.normalize(x));
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        if (k === 'backend' || k === 'stack') continue;
        out[k] = this.normalize(x);
      }
      return out;
    }
    return v;
  }

  private prefix(): string {
    return this.b.owner('');
  }
}

export { cliAsync } from '../helpers/cli.js';
