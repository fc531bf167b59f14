// A worker's fetch of the remote integration branch (src/gitflow/remote.ts) rides out a remote that is briefly
// away, and still reports a remote that stays away, with git's message.
import { describe, expect, it } from 'vitest';
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { gitRunner } from '../../src/git/exec.js';
import { FETCH_TRIES, fetchBranch } from '../../src/gitflow/remote.js';
import { git, tempDir, tempRepo } from '../helpers/repo.js';

function cloneWithRemote() {
  const origin = tempRepo({ 'a.txt': 'a\n' });
  const bare = join(tempDir(), 'remote.git');
  git(origin, 'clone', '-q', '--bare', origin, bare);
  const clone = join(tempDir(), 'clone');
  git(origin, 'clone', '-q', bare, clone);
  return { bare, clone, tip: git(origin, 'rev-parse', 'HEAD').trim() };
}

describe('fetchBranch', () => {
  it('tries again while the remote is briefly unreachable, then fetches', async () => {
    const { bare, clone, tip } = cloneWithRemote();
    renameSync(bare, `${bare}.away`);
    // The remote comes back once a fetch has failed: the next try must get it.
    const g = gitRunner({ ...process.env });
    let failures = 0;
    const watched = {
      ...g,
      async tryRun(...a: Parameters<typeof g.tryRun>) {
        const r = await g.tryRun(...a);
        if (a[0][0] === 'fetch' && r.status !== 0 && failures++ === 0) renameSync(`${bare}.away`, bare);
        return r;
      },
    };
    const got = await fetchBranch(watched, clone, 'origin', 'main', 50);
    expect(failures).toBe(1);
    expect(got).toBe(tip);
  });

  it('reports a remote that stays away as GitError after its tries, naming them', async () => {
    const { bare, clone } = cloneWithRemote();
    renameSync(bare, `${bare}.gone`);
    await expect(fetchBranch(gitRunner({ ...process.env }), clone, 'origin', 'main', 5)).rejects.toMatchObject({
      code: 'GitError',
      details: { tries: FETCH_TRIES },
    });
  });

  it('answers null for a branch the remote does not have, at once', async () => {
    const { clone } = cloneWithRemote();
    expect(await fetchBranch(gitRunner({ ...process.env }), clone, 'origin', 'nope', 10_000)).toBeNull();
  });
});
