/**
 * `sslmode` works as in psql (docs/state.md §8 "PG* variables, .pgpass and sslmode work as in psql"): libpq's
 * six modes against a server without SSL, one with SSL (a certificate from a throwaway CA, issued for
 * `localhost`) and one that accepts only SSL; the mode from the URL, else PGSSLMODE, else prefer. Where psql
 * is installed, every outcome is also checked against it. Failures are DatabaseUnavailable with an SSL hint,
 * an invalid mode is ConfigInvalid; no Node SECURITY WARNING, never the password.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { LATEST_SCHEMA_VERSION, migrationsDir } from '../../src/state/migrate.js';
import { pgTarget } from '../../src/state/sql/pg-sql.js';
import { openPg } from '../../src/state/sql/postgres.js';
import { runJson } from '../helpers/cli.js';
import { createTestDatabase, startPrivatePg, type PrivatePg, type TestDatabase } from '../helpers/pg.js';
import { planRepo, T0 } from '../state/helpers.js';
import { enableSsl, makeCerts, psqlOutcome, sslOnly, type TestCerts } from './ssl-server.js';

type Outcome = 'ssl' | 'plain' | 'fail';

/** Connects as tugcode does and says whether the session is encrypted; a failure is returned, not thrown. */
async function connect(url: string, env: Record<string, string> = {}): Promise<{ outcome: Outcome; error?: any }> {
  try {
    const db = await openPg(
      {
        url,
        target: pgTarget(url, env),
        schema: 'tug_sslmode',
        mode: 'create',
        retryMs: 0,
        migrationsDir: `${migrationsDir()}/pg`,
      },
      LATEST_SCHEMA_VERSION,
    );
    try {
      const r = await db!.get<{ ssl: boolean }>('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
      return { outcome: r!.ssl ? 'ssl' : 'plain' };
    } finally {
      await db!.close();
    }
  } catch (error) {
    return { outcome: 'fail', error };
  }
}

function withParams(url: string, params: Record<string, string>): string {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return u.toString();
}

/** tugcode's outcome, psql's when it is installed, and the one libpq documents, all equal. */
async function expectOutcome(url: string, expected: Outcome, env: Record<string, string> = {}) {
  const got = await connect(url, env);
  expect(got.outcome, `${url}: ${got.error?.message ?? ''}`).toBe(expected);
  const psql = psqlOutcome(url, env);
  if (psql !== null) expect(psql, `psql ${url}`).toBe(expected);
  if (expected === 'fail') {
    expect(got.error?.code, got.error?.message).toBe('DatabaseUnavailable');
    return got.error;
  }
  return undefined;
}

describe('sslmode as in psql', () => {
  let plain: TestDatabase;
  let own: PrivatePg;
  let certs: TestCerts;
  let sslUrl: string;
  beforeAll(async () => {
    plain = await createTestDatabase('nossl');
    certs = makeCerts();
    own = await startPrivatePg();
    await enableSsl(own, certs);
    sslUrl = own.url();
  });

  it('a server without SSL: disable, allow and prefer (the default) connect in plain; require and the verify modes fail', async () => {
    for (const mode of ['disable', 'allow', 'prefer'])
      await expectOutcome(withParams(plain.url, { sslmode: mode }), 'plain');
    await expectOutcome(plain.url, 'plain');
    for (const mode of ['require', 'verify-ca', 'verify-full']) {
      const err = await expectOutcome(withParams(plain.url, { sslmode: mode, sslrootcert: certs.ca }), 'fail');
      expect(err.details).toMatchObject({ host: plain.server.host, port: plain.server.port, database: plain.name });
      expect(err.hint).toContain(`sslmode=${mode}`);
      expect(err.hint).toContain('does not accept SSL');
    }
  });

  it('a server with SSL: allow stays plain, prefer and require encrypt without verifying, verify-ca and verify-full check the CA', async () => {
    const at = (params: Record<string, string>) => withParams(sslUrl, params);
    await expectOutcome(at({ sslmode: 'disable' }), 'plain');
    await expectOutcome(at({ sslmode: 'allow' }), 'plain');
    await expectOutcome(at({ sslmode: 'prefer' }), 'ssl');
    await expectOutcome(sslUrl, 'ssl'); // prefer, libpq's default
    // require: the certificate is not checked (its CA is unknown to Node and to libpq)...
    await expectOutcome(at({ sslmode: 'require' }), 'ssl');
    // ...unless a root certificate is given: then it is verify-ca.
    await expectOutcome(at({ sslmode: 'require', sslrootcert: certs.ca }), 'ssl');
    const req = await expectOutcome(at({ sslmode: 'require', sslrootcert: certs.otherCa }), 'fail');
    expect(req.hint).toContain('sslrootcert');
    // verify-ca: the chain only (the certificate names localhost, we connect to 127.0.0.1).
    await expectOutcome(at({ sslmode: 'verify-ca', sslrootcert: certs.ca }), 'ssl');
    for (const ca of [certs.otherCa, undefined]) {
      const err = await expectOutcome(at({ sslmode: 'verify-ca', ...(ca ? { sslrootcert: ca } : {}) }), 'fail');
      expect(err.details).toMatchObject({ host: '127.0.0.1', port: own.info.port });
      expect(err.hint).toMatch(/sslmode=verify-ca.*sslrootcert/);
    }
    // verify-full: the chain and the host name.
    const host = await expectOutcome(at({ sslmode: 'verify-full', sslrootcert: certs.ca }), 'fail');
    expect(host.hint).toContain('sslmode=verify-full');
    const byName = new URL(at({ sslmode: 'verify-full', sslrootcert: certs.ca }));
    byName.hostname = 'localhost';
    await expectOutcome(byName.toString(), 'ssl');
    await expectOutcome(at({ sslmode: 'verify-full' }), 'fail'); // self-signed CA, not in any default store
  });

  it('PGSSLMODE and PGSSLROOTCERT apply when the URL says nothing; the URL wins', async () => {
    await expectOutcome(sslUrl, 'plain', { PGSSLMODE: 'disable' });
    await expectOutcome(sslUrl, 'ssl', { PGSSLMODE: 'require' });
    await expectOutcome(sslUrl, 'ssl', { PGSSLMODE: 'verify-ca', PGSSLROOTCERT: certs.ca });
    await expectOutcome(withParams(sslUrl, { sslmode: 'require' }), 'ssl', { PGSSLMODE: 'disable' });
    const err = await expectOutcome(plain.url, 'fail', { PGSSLMODE: 'require' });
    expect(err.hint).toContain('sslmode=require (PGSSLMODE)');
  });

  it('a server that accepts only SSL: disable fails with a hint, allow and prefer connect over SSL', async () => {
    await sslOnly(own, true);
    try {
      const err = await expectOutcome(withParams(sslUrl, { sslmode: 'disable' }), 'fail');
      expect(err.details).toMatchObject({ host: '127.0.0.1', port: own.info.port });
      expect(err.hint).toContain('accepts only SSL');
      await expectOutcome(withParams(sslUrl, { sslmode: 'allow' }), 'ssl');
      await expectOutcome(withParams(sslUrl, { sslmode: 'prefer' }), 'ssl');
      await expectOutcome(sslUrl, 'ssl');
    } finally {
      await sslOnly(own, false);
    }
  });

  it('through the CLI: no SECURITY WARNING, failures are DatabaseUnavailable (exit 10) with the hint, bad modes ConfigInvalid (exit 2)', async () => {
    const root = planRepo();
    const pw = own.info.password;
    const cli = (url: string, env: Record<string, string> = {}) =>
      runJson('state show', ['state', 'show'], {
        cwd: root,
        env: { TUGCODE_NOW: T0, TUGCODE_STATE_URL: url, TUGCODE_STATE_PROJECT: 'sslcli', ...env },
      });
    for (const mode of ['prefer', 'require', 'verify-ca']) {
      const r = cli(withParams(sslUrl, { sslmode: mode, sslrootcert: certs.ca }));
      expect([r.code, r.json.status], r.stdout + r.stderr).toEqual([0, 'ok']);
      expect(r.stderr).toBe('');
    }
    expect(cli(plain.url).code).toBe(0); // prefer on a server without SSL
    const bad = cli(withParams(sslUrl, { sslmode: 'verify-full' }));
    expect([bad.code, bad.json.error.code]).toEqual([10, 'DatabaseUnavailable']);
    expect(bad.json.error.message).toContain(`127.0.0.1:${own.info.port}`);
    expect(bad.json.error.hint).toMatch(/sslrootcert/);
    expect(bad.json.error.hint).not.toMatch(/aside/);
    expect(bad.stderr).not.toContain('SECURITY WARNING');
    for (const [url, env, source] of [
      [withParams(sslUrl, { sslmode: 'bogus' }), {}, 'TUGCODE_STATE_URL'],
      [withParams(sslUrl, { sslmode: 'no-verify' }), {}, 'TUGCODE_STATE_URL'],
      [sslUrl, { PGSSLMODE: 'bogus' }, 'PGSSLMODE'],
    ] as const) {
      const r = cli(url, env);
      expect([r.code, r.json.error.code], r.stdout).toEqual([2, 'ConfigInvalid']);
      expect(r.json.error.details.source).toBe(source);
      expect(r.json.error.message).toContain('disable, allow, prefer, require, verify-ca, verify-full');
      expect(r.stdout + r.stderr).not.toContain(pw);
    }
    for (const r of [bad]) expect(r.stdout + r.stderr).not.toContain(pw);
  });
});
