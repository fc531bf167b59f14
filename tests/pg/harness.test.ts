/**
 * The test PostgreSQL itself: the shared server of the run, fresh databases, private servers that stop and restart.
 */
import { execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, statSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, pgConnect, pgEnv, pgInfo, pgReady, pgUrl, startPrivatePg } from '../helpers/pg.js';
import {
  createPgServer,
  destroyPgServer,
  ensurePgServer,
  pgServerUrl,
  preparePgServer,
  reapStalePgServers,
} from '../helpers/pg-server.js';
import { tempDir } from '../helpers/repo.js';

async function connectError(url: string): Promise<NodeJS.ErrnoException & { code?: string }> {
  try {
    const c = await pgConnect(url);
    await c.end();
  } catch (e) {
    return e as NodeJS.ErrnoException;
  }
  throw new Error(`connected to ${url.replace(/:[^:@]*@/, ':***@')}`);
}

describe('the shared test PostgreSQL server', () => {
  beforeAll(async () => {
    await pgReady();
  });

  it('listens on a loopback port with a superuser password', async () => {
    const info = await pgReady();
    expect(pgInfo()).toBe(info);
    expect(info.host).toBe('127.0.0.1');
    expect(info.port).toBeGreaterThan(1023);
    expect(info.password).toMatch(/^tugpw-[0-9a-f]{24}$/);
    expect(pgUrl()).toBe(`postgres://${info.user}:${info.password}@127.0.0.1:${info.port}/postgres`);
    const c = await pgConnect(pgUrl());
    try {
      const { rows } = await c.query<{ version: string; addr: string }>(
        'select version() as version, host(inet_server_addr()) as addr',
      );
      expect(rows[0]!.version).toMatch(/^PostgreSQL \d+/);
      expect(rows[0]!.addr).toBe('127.0.0.1');
    } finally {
      await c.end();
    }
  });

  it('refuses a wrong password without echoing any password', async () => {
    const info = pgInfo();
    const err = await connectError(`postgres://${info.user}:wrong-password@127.0.0.1:${info.port}/postgres`);
    expect(err.code).toBe('28P01'); // invalid_password
    expect(String(err.message)).not.toContain('wrong-password');
    expect(String(err.message)).not.toContain(info.password);
  });

  it('gives each caller a fresh, empty database that drop() removes', async () => {
    const a = await createTestDatabase('harness');
    const b = await createTestDatabase('harness');
    expect(a.name).not.toBe(b.name);
    const c = await pgConnect(a.url);
    try {
      await c.query('create table t (x int)');
      await c.query('insert into t values (1)');
      expect((await c.query('select x from t')).rows).toEqual([{ x: 1 }]);
    } finally {
      await c.end();
    }
    const cb = await pgConnect(b.url);
    try {
      expect((await cb.query("select count(*)::int as n from pg_tables where schemaname = 'public'")).rows).toEqual([
        { n: 0 },
      ]);
    } finally {
      await cb.end();
    }
    await a.drop();
    await a.drop(); // idempotent
    expect((await connectError(a.url)).code).toBe('3D000'); // invalid_catalog_name
  });

  it('reaches a child process through PGHOST/PGPORT/PGUSER/PGPASSWORD/PGDATABASE alone', async () => {
    const db = await createTestDatabase('env');
    expect(db.env).toEqual({ ...pgEnv(db.name) });
    const script =
      "const pg=require('pg');const c=new pg.Client();c.connect().then(()=>c.query('select current_database() as d'))" +
      '.then(r=>{console.log(r.rows[0].d);return c.end()}).catch(e=>{console.error(e.message);process.exit(1)})';
    const { PGHOST: _h, PGPORT: _p, PGUSER: _u, PGPASSWORD: _w, PGDATABASE: _d, ...rest } = process.env;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['-e', script], { env: { ...rest, ...db.env } }, (err, stdout, stderr) =>
        err ? reject(new Error(stderr || err.message)) : resolve(stdout.trim()),
      ),
    );
    expect(out).toBe(db.name);
  });
});

describe('a private test PostgreSQL server', () => {
  it('stops, starts and restarts on the same port and keeps its data; destroy removes it', async () => {
    const server = await startPrivatePg();
    expect(server.info.port).not.toBe((await pgReady()).port);
    expect(statSync(server.info.dataDir).mode & 0o777).toBe(0o700);
    const db = await server.createDatabase('restart');
    const c = await pgConnect(db.url);
    await c.query('create table t (x int)');
    await c.query('insert into t values (42)');
    await c.end();

    await server.restart();
    const c2 = await pgConnect(db.url);
    expect((await c2.query('select x from t')).rows).toEqual([{ x: 42 }]);

    // A connection open across a restart breaks (what the driver's retry must cope with).
    const broken = new Promise<Error>((resolve) => c2.on('error', resolve));
    await server.restart('immediate');
    expect((await broken).message).toMatch(/terminat|shut ?down|connection/i);
    await c2.end().catch(() => undefined);

    await server.stop();
    expect((await connectError(db.url)).code).toBe('ECONNREFUSED');
    await server.start();
    const c3 = await pgConnect(db.url);
    expect((await c3.query('select x from t')).rows).toEqual([{ x: 42 }]);
    await c3.end();

    await server.destroy();
    expect(existsSync(server.info.baseDir)).toBe(false);
    expect((await connectError(db.url)).code).toBe('ECONNREFUSED');
  });
});

describe('the server lifecycle', () => {
  it('boots a prepared server once however many processes ask at the same time', async () => {
    const info = await preparePgServer();
    try {
      const got = await Promise.all([
        ensurePgServer(info.baseDir),
        ensurePgServer(info.baseDir),
        ensurePgServer(info.baseDir),
      ]);
      expect(new Set(got.map((g) => g.port)).size).toBe(1);
      const c = await pgConnect(pgServerUrl(got[0]!));
      await c.end();
    } finally {
      await destroyPgServer(info);
    }
  });

  it('reaps the servers of runs that died, and leaves those of live runs alone', async () => {
    const tmpRoot = tempDir('tugcode-reap-test-');
    chmodSync(tmpRoot, 0o755); // the postgres user must reach the server's directory
    const deadPid = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ['-e', '0']);
      child.on('exit', () => resolve(child.pid!));
    });
    const dead = await createPgServer({ tmpRoot, ownerPid: deadPid });
    const live = await createPgServer({ tmpRoot });
    try {
      expect(await reapStalePgServers(tmpRoot)).toBe(1);
      expect(existsSync(dead.baseDir)).toBe(false);
      expect((await connectError(pgServerUrl(dead))).code).toBe('ECONNREFUSED');
      const c = await pgConnect(pgServerUrl(live));
      await c.end();
    } finally {
      await destroyPgServer(dead);
      await destroyPgServer(live);
    }
  });
});
