/**
 * SSL for a private test server: a throwaway CA and a server certificate it signed for `localhost` (not for
 * 127.0.0.1, so verify-full against the IP fails on the host name), made with openssl, then `ssl = on`.
 * Also: pg_hba.conf turned to `hostssl` only (a server that refuses plain connections), and psql as the
 * reference for what libpq does (when it is installed).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, copyFileSync, chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { PrivatePg } from '../helpers/pg.js';
import { tempDir } from '../helpers/repo.js';

export interface TestCerts {
  dir: string;
  /** The CA that signed the server's certificate. */
  ca: string;
  /** Another CA, which signed nothing the server has. */
  otherCa: string;
}

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

function makeCa(dir: string, name: string): void {
  openssl(
    dir,
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.crt`,
  );
}

export function makeCerts(): TestCerts {
  const dir = tempDir('tugcode-certs-');
  makeCa(dir, 'testca');
  makeCa(dir, 'otherca');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName = DNS:localhost\n');
  openssl(
    dir,
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
  );
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'testca.crt',
    '-CAkey',
    'testca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'san.ext',
    '-out',
    'server.crt',
  );
  return { dir, ca: join(dir, 'testca.crt'), otherCa: join(dir, 'otherca.crt') };
}

/** Puts the server certificate into the data directory and turns ssl on (a reload, no restart). */
export async function enableSsl(own: PrivatePg, certs: TestCerts): Promise<void> {
  const { dataDir, runAs } = own.info;
  for (const f of ['server.crt', 'server.key']) {
    const to = join(dataDir, f);
    copyFileSync(join(certs.dir, f), to);
    chmodSync(to, 0o600);
    if (runAs) chownSync(to, runAs.uid, runAs.gid);
  }
  await sql(own, false, 'ALTER SYSTEM SET ssl = on', 'SELECT pg_reload_conf()');
}

/** pg_hba.conf: TCP connections only over SSL (`hostssl`), or back to the original; reloaded. */
export async function sslOnly(own: PrivatePg, on: boolean): Promise<void> {
  const hba = join(own.info.dataDir, 'pg_hba.conf');
  const text = readFileSync(hba, 'utf8');
  writeFileSync(hba, on ? text.replace(/^host(\s)/gm, 'hostssl$1') : text.replace(/^hostssl(\s)/gm, 'host$1'));
  await sql(own, true, 'SELECT pg_reload_conf()'); // over SSL: ssl is on, and hostssl may be in force
}

async function sql(own: PrivatePg, tls: boolean, ...statements: string[]): Promise<void> {
  const connect = async () => {
    const c = new pg.Client({ connectionString: own.url(), ssl: tls ? { rejectUnauthorized: false } : false });
    await c.connect();
    return c;
  };
  // A new session reports the postmaster's last load of its files (pg_conf_load_time); the postmaster reloads
  // them asynchronously after pg_reload_conf, so wait until a new session shows a later load.
  const c = await connect();
  let before: string;
  try {
    before = String((await c.query('SELECT pg_conf_load_time()::text AS t')).rows[0].t);
    for (const s of statements) await c.query(s);
  } finally {
    await c.end();
  }
  if (!statements.some((s) => s.includes('pg_reload_conf'))) return;
  const until = Date.now() + 30_000;
  for (;;) {
    const n = await connect();
    try {
      const r = await n.query('SELECT pg_conf_load_time() > $1::timestamptz AS reloaded', [before]);
      if (r.rows[0].reloaded) return;
    } finally {
      await n.end();
    }
    if (Date.now() > until) throw new Error('the PostgreSQL server did not reload its configuration within 30 s');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const hasPsql = spawnSync('psql', ['--version']).status === 0;

/**
 * What psql (libpq) makes of `url`: 'ssl' or 'plain' when it connects, 'fail' when it does not; null when
 * psql is not installed. HOME is an empty directory, so no ~/.postgresql/root.crt or ~/.pgpass interferes.
 */
export function psqlOutcome(url: string, env: Record<string, string> = {}): 'ssl' | 'plain' | 'fail' | null {
  if (!hasPsql) return null;
  const r = spawnSync('psql', [url, '-Atc', 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()'], {
    env: { PATH: process.env.PATH ?? '', HOME: tempDir('tugcode-psql-home-'), ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  if (r.status !== 0) return 'fail';
  return r.stdout.trim() === 't' ? 'ssl' : 'plain';
}
