/**
 * Inputs are read up to their cap and no further (issue 11, "also fix" 4): an endless file or stdin
 * ends in InvalidArgument with one JSON document, never a hang or an out-of-memory abort, and nothing
 * changes.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { cliRepo, st } from '../state/cli-helpers.js';
import { dbPathOf, dump } from '../state/helpers.js';

function shell(cwd: string, cmd: string) {
  const r = spawnSync('sh', ['-c', cmd], {
    cwd,
    env: { ...process.env, NODE_ENV: 'test', NO_COLOR: '1', TUGCODE_NOW: '2026-03-01T10:00:00.000Z' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, json: JSON.parse(r.stdout) };
}

describe('bounded inputs', () => {
  it('reads a slow writer to its end: a late first byte and a pause are not the end of stdin', () => {
    const { root } = cliRepo();
    const claim = st(root, ['claim', 'demo', '--worktree', '.']).json;
    expect(claim.claimed).toBe(true);
    const tug = `"${process.execPath}" "${CLI}"`;
    const owner = `demo ${claim.step_anchor} --worktree . --json`;
    const slow = `(sleep 3; echo part1; sleep 3; echo part2)`;
    const r = shell(root, `${slow} | ${tug} state artifact ${owner} --kind note --summary s --content-file -`);
    expect(r.code, JSON.stringify(r.json)).toBe(0);
    const batch = `(sleep 3; printf '[{"kind":"task",'; sleep 3; echo '"ordinal":0,"status":"completed"}]')`;
    const u = shell(root, `${batch} | ${tug} state update ${owner} --batch`);
    expect(u.code, JSON.stringify(u.json)).toBe(0);
    expect(u.json.updated).toBe(1);
    // The whole content was recorded, not the part before the pause.
    const doc = shell(root, `${tug} state export demo`).json;
    expect(doc.step_artifacts.map((a: { content: string }) => a.content)).toContain('part1\npart2\n');
  });

  it('refuses endless files and stdin with InvalidArgument, changing nothing', () => {
    const { root } = cliRepo();
    expect(st(root, ['claim', 'demo', '--worktree', '.']).json.claimed).toBe(true);
    const before = dump(dbPathOf(root));
    const tug = `"${process.execPath}" "${CLI}"`;
    const owner = 'demo step-1 --worktree . --json';
    for (const cmd of [
      `${tug} state artifact ${owner} --kind note --summary-file /dev/zero`,
      `${tug} state artifact ${owner} --kind note --summary s --content-file /dev/urandom`,
      `${tug} state update ${owner} --batch < /dev/zero`,
      `${tug} commit --plan demo --step step-1 --allow-main --message-file - --json < /dev/zero`,
    ]) {
      const r = shell(root, cmd);
      expect(r.code, cmd).toBe(2);
      expect(r.json.error.code).toBe('InvalidArgument');
      expect(r.json.error.message).toMatch(/is larger than \d+ bytes/);
    }
    expect(dump(dbPathOf(root))).toEqual(before);
  });
});

describe('TUGCODE_NOW', () => {
  it.each([
    ['not-a-time', /"not-a-time" is not an ISO 8601 instant/],
    ['9999-12-31T23:59:59.999Z', /is outside 1970-01-01 to 8999-12-31/],
  ])('%s is ConfigInvalid saying why', (now, why) => {
    const { root } = cliRepo();
    const r = st(root, ['show'], { now });
    expect(r.code).toBe(2);
    expect(r.json.error).toMatchObject({ code: 'ConfigInvalid' });
    expect(r.json.error.message).toMatch(why);
  });
});
