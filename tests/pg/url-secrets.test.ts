/**
 * A state URL that cannot work is ConfigInvalid as the configuration loads (docs/state.md §8): a raw `%`
 * in the password (once an InternalError), a raw `@` or `#` in it (once parsed into a host that printed part
 * of the password), a bad scheme or sslmode. The error names where the URL came from (TUGCODE_STATE_URL or
 * the config file), `doctor`'s config check fails on it, the MCP server warns at start-up, and no output —
 * text, --json, -v, doctor, MCP — carries any part of the user name or password. A password with those
 * characters percent-encoded still connects.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, runJson, type CliResult } from '../helpers/cli.js';
import { createTestDatabase, pgConnect, pgInfo, pgReady } from '../helpers/pg.js';
import { planRepo, T0 } from '../state/helpers.js';
import { closeMcpClients, connectMcp, mcpStderr } from '../mcp/client.js';

afterEach(closeMcpClients);

const SHAPES = (port: number) =>
  [
    // [url, the secret parts no output may carry, what the reason says]
    [`postgres://tugQQuser:sekQQ%ZZretWW@127.0.0.1:${port}/tugcode`, ['tugQQuser', 'sekQQ', 'ZZretWW'], /%25/],
    [
      `postgres://tugQQuser:Sup3rXX@MyS3cretPart#99YY@127.0.0.1:${port}/tugcode`,
      ['tugQQuser', 'Sup3rXX', 'MyS3cretPart', '99YY'],
      /%23/,
    ],
    [
      `postgres://tugQQuser:Sup3rXX@MyS3cretPart?99YY@127.0.0.1:${port}/tugcode`,
      ['tugQQuser', 'Sup3rXX', 'MyS3cretPart', '99YY'],
      /%40/,
    ],
    [`postgres://tugQQuser:Sup3rXX@MyS3cretPart@127.0.0.1:${port}/tugcode`, ['Sup3rXX', 'MyS3cretPart'], /%40/],
    [`postgres://tugQQuser:12/MyS3cretPart@127.0.0.1:${port}/tugcode`, ['tugQQuser', 'MyS3cretPart'], /%40/],
    [`postgres://tugQQuser:12?MyS3cretPart@127.0.0.1:${port}/tugcode`, ['tugQQuser', 'MyS3cretPart'], /%40/],
    [`mysql://tugQQuser:sekQQ@127.0.0.1:${port}/z`, ['tugQQuser', 'sekQQ'], /scheme/],
    [`postgres://tugQQuser:sekQQ@127.0.0.1:${port}/z?sslmode=bogus`, ['tugQQuser', 'sekQQ'], /sslmode/],
  ] as const;

function noSecret(r: { stdout: string; stderr: string }, parts: readonly string[], label: string): void {
  for (const s of parts) {
    expect(r.stdout, `${label} stdout`).not.toContain(s);
    expect(r.stderr, `${label} stderr`).not.toContain(s);
  }
}

describe('a state URL that cannot work is ConfigInvalid and echoes nothing of its user name or password', () => {
  it('through the CLI: --json, text and -v, naming TUGCODE_STATE_URL', async () => {
    const port = (await pgReady()).port;
    const root = planRepo();
    for (const [url, parts, why] of SHAPES(port)) {
      const env = { TUGCODE_NOW: T0, TUGCODE_STATE_URL: url };
      const json = runJson('state show', ['state', 'show', 'demo'], { cwd: root, env });
      expect([json.json.error.code, json.code], url + json.stdout + json.stderr).toEqual(['ConfigInvalid', 2]);
      expect(json.json.error.details.source).toBe('TUGCODE_STATE_URL');
      expect(json.json.error.message).toMatch(/^TUGCODE_STATE_URL: /);
      expect(json.json.error.message + json.json.error.hint).toMatch(why);
      expect(json.json.error.hint).toContain('TUGCODE_STATE_URL');
      expect(json.json.error.hint).not.toContain('delete the key');
      noSecret(json, parts, url);
      for (const flags of [[], ['-v']]) {
        const text: CliResult = runCli(['state', 'show', 'demo', ...flags], { cwd: root, env });
        expect(text.code, url + text.stderr).toBe(2);
        expect(text.stderr).toContain('ConfigInvalid');
        expect(text.stderr).not.toContain('InternalError');
        noSecret(text, parts, `${url} ${flags.join(' ')}`);
      }
    }
  });

  it("doctor's config check fails on it (and no connection is tried)", async () => {
    const port = (await pgReady()).port;
    const root = planRepo();
    for (const [url, parts] of SHAPES(port)) {
      const r = runJson('doctor', ['doctor'], { cwd: root, env: { TUGCODE_NOW: T0, TUGCODE_STATE_URL: url } });
      const checks = r.json.error.details.checks as { name: string; status: string; message: string }[];
      const config = checks.find((c) => c.name === 'config')!;
      expect(config.status, url).toBe('fail');
      expect(config.message).toMatch(/^TUGCODE_STATE_URL: /);
      expect(checks.some((c) => c.name === 'state-pg-connection')).toBe(false);
      noSecret(r, parts, url);
    }
  });

  it('from .tugtool/config.toml: blamed on the file and its key', async () => {
    const port = (await pgReady()).port;
    const root = planRepo();
    writeFileSync(
      join(root, '.tugtool', 'config.toml'),
      `[state]\nurl = "postgres://tugQQuser:Sup3rXX@MyS3cretPart#99YY@127.0.0.1:${port}/tugcode"\n`,
    );
    const r = runJson('state show', ['state', 'show'], { cwd: root, env: { TUGCODE_NOW: T0 } });
    expect([r.json.error.code, r.code]).toEqual(['ConfigInvalid', 2]);
    expect(r.json.error.details).toMatchObject({ source: '.tugtool/config.toml', key: 'state.url' });
    expect(r.json.error.message).toMatch(/^\.tugtool\/config\.toml: state\.url has a #/);
    expect(r.json.error.hint).toContain('[state] url in .tugtool/config.toml');
    noSecret(r, ['tugQQuser', 'Sup3rXX', 'MyS3cretPart', '99YY'], 'file');
    // The environment's URL wins over the file's, which then is not read.
    const env = runJson('state show', ['state', 'show'], {
      cwd: root,
      env: { TUGCODE_NOW: T0, TUGCODE_STATE_URL: 'mysql://x@y/z' },
    });
    expect(env.json.error.details.source).toBe('TUGCODE_STATE_URL');
  });

  it('the MCP server warns at start-up, and its state tools refuse with ConfigInvalid', async () => {
    const port = (await pgReady()).port;
    const root = planRepo();
    for (const [url, parts] of SHAPES(port)) {
      const client = await connectMcp(root, { TUGCODE_STATE_URL: url });
      const r: any = await client.callTool({ name: 'tug_state_show', arguments: { plan: 'demo' } });
      expect(r.isError).toBe(true);
      const envelope = JSON.parse(r.content[0].text);
      expect(envelope.error.code).toBe('ConfigInvalid');
      expect(envelope.error.details.source).toBe('TUGCODE_STATE_URL');
      // The start-up note: stderr is its own pipe, so it is polled for rather than assumed there by now.
      const note =
        /tugcode mcp: warning: the state tools will refuse every call here \(ConfigInvalid: TUGCODE_STATE_URL: /;
      await expect.poll(() => mcpStderr(client), { timeout: 10_000, interval: 20 }).toMatch(note);
      const err = mcpStderr(client);
      noSecret({ stdout: JSON.stringify(r), stderr: err }, parts, url);
      await closeMcpClients();
    }
  });
});

describe('a password with %, @, #, ? and / percent-encoded connects', () => {
  it('state show runs on PostgreSQL as that user', async () => {
    const db = await createTestDatabase('urlpw');
    const info = pgInfo();
    const user = `u_${db.name}`;
    const password = 'p%w@x#y?z/q:r';
    const admin = await pgConnect(db.url);
    try {
      await admin.query(`CREATE ROLE ${user} LOGIN PASSWORD '${password}'`);
      await admin.query(`GRANT ALL ON DATABASE ${db.name} TO ${user}`);
    } finally {
      await admin.end();
    }
    const root = planRepo();
    mkdirSync(join(root, '.tugtool'), { recursive: true });
    const url = `postgres://${user}:${encodeURIComponent(password)}@${info.host}:${info.port}/${db.name}`;
    const env = { TUGCODE_NOW: T0, TUGCODE_STATE_URL: url, TUGCODE_STATE_PROJECT: 'urlpw' };
    const r = runJson('state init', ['state', 'init', 'demo'], { cwd: root, env });
    expect(r.json.status, r.stdout + r.stderr).toBe('ok');
    const show = runJson('state show', ['state', 'show', 'demo'], { cwd: root, env });
    expect(show.json.status, show.stdout + show.stderr).toBe('ok');
    noSecret(show, [password, encodeURIComponent(password)], 'ok');
    // -v names the server and database it used, never the user name or password (docs/output.md §1).
    for (const flags of [['--json'], []]) {
      const v = runCli(['state', 'show', 'demo', '-v', ...flags], { cwd: root, env });
      expect(v.code, v.stderr).toBe(0);
      expect(v.stderr).toContain(`tugcode: debug: state store: postgres PostgreSQL schema `);
      expect(v.stderr).toContain(`:${info.port}/${db.name})`);
      expect(v.stderr).toContain('TUGCODE_STATE_URL');
      noSecret(v, [password, encodeURIComponent(password)], `-v ${flags.join(' ')}`);
      expect(v.stderr).not.toContain(user);
    }
  });
});
