/** Hot state commands load only what they need (docs/quality.md §2): never markdown-it, zod, execa or simple-git. */
import { describe, expect, it } from 'vitest';
import { packagesLoaded } from '../helpers/imports.js';
import { DEMO_PATH } from './helpers.js';
import { cliRepo, st } from './cli-helpers.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

describe('state command startup', () => {
  it('loads neither the parser nor zod, execa or simple-git for the hot commands when the plan bytes are unchanged', () => {
    const { root, w1 } = cliRepo();
    st(root, ['claim', 'demo', '--worktree', w1]);
    const hot = [
      ['state', 'heartbeat', 'demo', 'step-0', '--worktree', w1],
      ['state', 'start', 'demo', 'step-0', '--worktree', w1],
      ['state', 'update', 'demo', 'step-0', '--worktree', w1, '--task', '0', 'completed'],
      ['state', 'claim', 'demo', '--worktree', w1],
      ['state', 'show', 'demo'],
      ['state', 'ready', 'demo'],
      ['state', 'complete', 'demo', 'step-0', '--worktree', w1, '--force', 'x'],
    ];
    for (const args of hot) {
      const loaded = packagesLoaded([...args, '--json'], root);
      expect(loaded.has('better-sqlite3'), args.join(' ')).toBe(true);
      for (const heavy of ['markdown-it', 'zod', 'execa', 'simple-git', 'smol-toml', 'typescript'])
        expect(loaded.has(heavy), `${args.join(' ')} loads ${heavy}`).toBe(false);
    }
  });

  it('loads the parser only when the plan bytes changed', () => {
    const { root, w1 } = cliRepo();
    writeFileSync(join(w1, DEMO_PATH), readFileSync(join(w1, DEMO_PATH), 'utf8') + '\nA prose edit.\n');
    expect(packagesLoaded(['state', 'claim', 'demo', '--worktree', w1, '--json'], root)).toContain('markdown-it');
  });
});
