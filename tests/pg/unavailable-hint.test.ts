/**
 * DatabaseUnavailable's hint names the server's real host and port (docs/state.md §8): the command it gives,
 * `pg_isready -h <host> -p <port>`, runs as it is; the password of the URL is in neither hint nor details.
 */
import { describe, expect, it } from 'vitest';
import { runJson } from '../helpers/cli.js';
import { planRepo, T0 } from '../state/helpers.js';
import { freePort } from '../helpers/pg-server.js';

describe('DatabaseUnavailable hint', () => {
  it('names the literal host and port of an unreachable server, never the password', async () => {
    const root = planRepo();
    const secret = 'hint-secret-pw';
    const port = await freePort();
    const url = `postgres://tug:${secret}@127.0.0.1:${port}/hint_db`;
    const r = runJson('state show', ['state', 'show'], { cwd: root, env: { TUGCODE_NOW: T0, TUGCODE_STATE_URL: url } });
    expect([r.json.error.code, r.code], r.stdout).toEqual(['DatabaseUnavailable', 10]);
    expect(r.json.error.details).toMatchObject({ host: '127.0.0.1', port, database: 'hint_db' });
    expect(r.json.error.hint).toContain(`pg_isready -h 127.0.0.1 -p ${port}`);
    expect(r.json.error.hint).not.toMatch(/<host>|<port>/);
    expect(r.stderr).toContain(
      `hint: check that the server runs and accepts connections (pg_isready -h 127.0.0.1 -p ${port})`,
    );
    expect(JSON.stringify(r.json)).not.toContain(secret);
    expect(r.stderr).not.toContain(secret);
  });
});
