/**
 * PostgreSQL faults and secrets through the CLI (docs/state.md §8): the password never appears in any output,
 * error, event or log; an unreachable server is DatabaseUnavailable (exit 10) naming host, port and database,
 * fast, with nothing on stdout but the JSON envelope; a malformed URL is ConfigInvalid.
 */
import { describe, expect, it } from 'vitest';
import { runCli, runJson, type CliResult } from '../helpers/cli.js';
import { startPrivatePg } from '../helpers/pg.js';
import { tempDir } from '../helpers/repo.js';
import { addWorktree } from '../state/cli-helpers.js';
import { planRepo, T0 } from '../state/helpers.js';
import { backend, pgDump } from './backend.js';
import { freePort } from '../helpers/pg-server.js';

function noSecret(r: CliResult, ...secrets: string[]): void {
  for (const s of secrets) {
    expect(r.stdout, 'stdout').not.toContain(s);
    expect(r.stderr, 'stderr').not.toContain(s);
    expect(r.stdout).not.toContain(encodeURIComponent(s));
    expect(r.stderr).not.toContain(encodeURIComponent(s));
  }
}

function state(root: string, args: string[], env: Record<string, string>, json = true): CliResult {
  const o = { cwd: root, env: { TUGCODE_NOW: T0, ...env } };
  return json ? runJson(`state ${args[0]}`, ['state', ...args], o) : runCli(['state', ...args], o);
}

describe('PostgreSQL secrets and faults', () => {
  it('never shows the password: outputs, errors, -v, events', async () => {
    const b = await backend('postgres');
    const pw = b.db!.server.password;
    expect(pw.length).toBeGreaterThan(3);
    const root = planRepo();
    const [w1, w2] = [addWorktree(root, 'one'), addWorktree(root, 'two')];
    const runs: CliResult[] = [];
    const run = (args: string[], json = true) => {
      const r = state(root, args, b.env, json);
      runs.push(r);
      return r;
    };
    const runV = (args: string[]) => {
      const r = runCli(['-v', 'state', ...args, '--json'], { cwd: root, env: { TUGCODE_NOW: T0, ...b.env } });
      runs.push(r);
      return r;
    };
    expect(run(['init', 'demo']).json.status).toBe('ok');
    run(['claim', 'demo', '--worktree', w1]);
    run(['update', 'demo', 'step-0', '--worktree', w1, '--task', '0', 'completed']);
    expect(run(['start', 'demo', 'step-0', '--worktree', w2]).json.error.code).toBe('NotOwner');
    run(['show', 'demo', '--items', 'all']);
    run(['show', 'demo'], false);
    run(['log']);
    run(['list'], false);
    runV(['ready', 'demo']);
    runV(['heartbeat', 'demo', 'step-0', '--worktree', w2]);
    const show = run(['show']).json;
    expect(show.backend.location).toContain('***');
    for (const r of runs) noSecret(r, pw);
    const dump = JSON.stringify(await pgDump(b.db!.url, b.schema));
    expect(dump).not.toContain(pw);
  });

  it('reports a wrong password as DatabaseUnavailable without echoing either password', async () => {
    const b = await backend('postgres');
    const real = b.db!.server.password;
    const wrong = 'Wr0ng-p@ss/word';
    const url = b.db!.url.replace(`:${encodeURIComponent(real)}@`, `:${encodeURIComponent(wrong)}@`);
    expect(url).not.toBe(b.db!.url);
    const root = planRepo();
    for (const args of [['init', 'demo'], ['show'], ['claim', 'demo', '--worktree', root]]) {
      const r = state(root, args, { ...b.env, TUGCODE_STATE_URL: url });
      expect([r.json.error.code, r.code], r.stdout).toEqual(['DatabaseUnavailable', 10]);
      noSecret(r, real, wrong);
    }
    // The password from PGPASSWORD (not in the URL) is not echoed either.
    const bare = b.db!.url.replace(`:${encodeURIComponent(real)}@`, '@');
    const r = state(root, ['show'], { ...b.env, TUGCODE_STATE_URL: bare, PGPASSWORD: wrong });
    expect([r.json.error.code, r.code]).toEqual(['DatabaseUnavailable', 10]);
    noSecret(r, real, wrong);
  });

  it('reports a login without any password (URL, PGPASSWORD, ~/.pgpass) as DatabaseUnavailable with a hint', async () => {
    const b = await backend('postgres');
    const real = b.db!.server.password;
    const bare = b.db!.url.replace(`:${encodeURIComponent(real)}@`, '@');
    expect(bare).not.toBe(b.db!.url);
    const root = planRepo();
    const none = { PGPASSWORD: undefined, PGPASSFILE: undefined, HOME: tempDir('tugcode-nohome-') };
    for (const args of [['show'], ['init', 'demo']]) {
      const t0 = Date.now();
      const r = state(root, args, { ...b.env, ...none, TUGCODE_STATE_URL: bare } as unknown as Record<string, string>);
      // At once: not after the server's authentication_timeout (pg left the half-open login's socket open).
      expect(Date.now() - t0).toBeLessThan(5000);
      expect([r.json.error.code, r.code], r.stdout).toEqual(['DatabaseUnavailable', 10]);
      expect(r.json.error.details).toMatchObject({
        host: b.db!.server.host,
        port: b.db!.server.port,
        database: b.db!.name,
      });
      expect(r.json.error.message).toContain('password');
      expect(r.json.error.hint).toMatch(/PGPASSWORD.*~\/\.pgpass/);
      expect(r.json.error.hint).not.toMatch(/aside/);
      noSecret(r, real);
    }
  });

  it('refuses a malformed URL with ConfigInvalid without echoing its password', async () => {
    const root = planRepo();
    const secret = 'hunter2-secret';
    for (const url of [
      `http://u:${secret}@127.0.0.1:5432/db`,
      `postgres://u:${secret}@[::1:5432/db`,
      `postgres//u:${secret}@host/db`,
    ]) {
      for (const args of [['show'], ['init', 'demo']]) {
        const r = state(root, args, { TUGCODE_STATE_URL: url });
        expect([r.json?.error?.code, r.code], url + r.stdout + r.stderr).toEqual(['ConfigInvalid', 2]);
        noSecret(r, secret);
      }
    }
  });

  it('reports an unreachable server fast as DatabaseUnavailable naming host, port and database', async () => {
    const root = planRepo();
    const secret = 'closed-port-secret';
    const port = await freePort();
    const url = `postgres://tug:${secret}@127.0.0.1:${port}/nowhere_db`;
    for (const args of [['init', 'demo'], ['show'], ['claim', 'demo', '--worktree', root], ['log']]) {
      const t0 = Date.now();
      const r = state(root, args, { TUGCODE_STATE_URL: url });
      const ms = Date.now() - t0;
      expect([r.json.error.code, r.code], r.stdout).toEqual(['DatabaseUnavailable', 10]);
      expect(r.json.error.details).toMatchObject({ host: '127.0.0.1', port, database: 'nowhere_db' });
      expect(r.json.error.message).toContain(`127.0.0.1:${port}`);
      expect(r.json.error.message).toContain('nowhere_db');
      // stdout is the envelope alone (runJson parsed all of it); stderr the one diagnostic line and a hint.
      expect(r.stderr).toMatch(/^tugcode: DatabaseUnavailable: [^\n]*\n(hint: [^\n]*\n)?$/);
      expect(ms).toBeLessThan(5000);
      noSecret(r, secret);
    }
  });

  it('reports a Unix socket directory where no server listens as DatabaseUnavailable', () => {
    const root = planRepo();
    const secret = 'socket-secret';
    const dir = tempDir('tugcode-nosock-');
    const url = `postgres://tug:${secret}@localhost:5432/nowhere_db?host=${encodeURIComponent(dir)}`;
    const r = state(root, ['show'], { TUGCODE_STATE_URL: url });
    expect([r.json.error.code, r.code], r.stdout + r.stderr).toEqual(['DatabaseUnavailable', 10]);
    expect(r.json.error.details).toMatchObject({ host: dir, port: 5432, database: 'nowhere_db' });
    expect(r.json.error.message).toContain(`${dir}:5432`);
    expect(r.json.error.message).toContain('nowhere_db');
    noSecret(r, secret);
  });

  it('reads host, port, user, database and password from query parameters as pg does, and masks the password', async () => {
    const root = planRepo();
    const secret = 'query-param-secret';
    const port = await freePort();
    const url = `postgres://someone@ignored.invalid:1/ignored?host=127.0.0.1&port=${port}&dbname=param_db&user=tug&password=${secret}`;
    for (const json of [true, false]) {
      const r = state(root, ['show'], { TUGCODE_STATE_URL: url }, json);
      expect(r.code, r.stdout + r.stderr).toBe(10);
      if (json) expect(r.json.error.details).toMatchObject({ host: '127.0.0.1', port, database: 'param_db' });
      expect(r.stdout + r.stderr).toContain(`127.0.0.1:${port}`);
      noSecret(r, secret);
    }
    // An IPv6 literal is named once in brackets; a missing CA file is not an unreachable server.
    const v6 = state(root, ['show'], { TUGCODE_STATE_URL: `postgres://tug@[::1]:${port}/db` });
    expect(v6.json.error.message).toContain(`[::1]:${port}`);
    expect(v6.json.error.message).not.toContain('[[');
    const ca = state(root, ['show'], {
      TUGCODE_STATE_URL: `postgres://tug@127.0.0.1:${port}/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem`,
    });
    expect(ca.json.error.code, ca.stdout).not.toBe('DatabaseUnavailable');
  });

  it('reports a server that went down as DatabaseUnavailable, and works again once it is back', async () => {
    const own = await startPrivatePg();
    const db = await own.createDatabase('down');
    const env = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_PROJECT: 'down', TUGCODE_STATE_HOST: 'h' };
    const root = planRepo();
    const w1 = addWorktree(root, 'one');
    expect(state(root, ['init', 'demo'], env).json.status).toBe('ok');
    // 'fast': the test servers run with synchronous_commit=off, so an immediate stop may lose the last commits.
    await own.stop('fast');
    for (const args of [
      ['claim', 'demo', '--worktree', w1],
      ['show', 'demo'],
    ]) {
      const t0 = Date.now();
      const r = state(root, args, env);
      expect([r.json.error.code, r.code]).toEqual(['DatabaseUnavailable', 10]);
      expect(r.json.error.details).toMatchObject({ host: own.info.host, port: own.info.port, database: db.name });
      expect(Date.now() - t0).toBeLessThan(5000);
      noSecret(r, own.info.password);
      const text = state(root, args, env, false);
      expect(text.stdout).toBe('');
      expect(text.stderr).toMatch(/^tugcode: DatabaseUnavailable: /);
      noSecret(text, own.info.password);
    }
    await own.start();
    expect(state(root, ['claim', 'demo', '--worktree', w1], env).json).toMatchObject({ claimed: true });
  });
});
