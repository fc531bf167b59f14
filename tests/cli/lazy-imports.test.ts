import { describe, expect, it } from 'vitest';
import { packagesLoaded } from '../helpers/imports.js';
import { runCli } from '../helpers/cli.js';
import { tempDir, tempRepo } from '../helpers/repo.js';

describe('startup', () => {
  it('loads nothing heavy for --help', () => {
    const loaded = packagesLoaded(['--help'], tempDir());
    // commander is bundled into dist/bundle (scripts/bundle.mjs); nothing else may load.
    expect([...loaded].filter((p) => p !== 'commander')).toEqual([]);
  });

  it('validates plans without loading SQLite, the kernel or MCP', () => {
    const root = tempRepo({ '.tugtool/tugplan-a.md': '# A\n\n#### Step 1: One\n\n**Tasks:**\n- [ ] x\n' });
    const loaded = packagesLoaded(['validate', 'a'], root);
    expect(loaded.has('markdown-it')).toBe(true);
    for (const heavy of ['better-sqlite3', 'typescript', '@modelcontextprotocol/sdk', 'zod'])
      expect(loaded.has(heavy), heavy).toBe(false);
  });

  it('heartbeats without the parser, zod or the TOML parser when config.toml is the init template', () => {
    const root = tempRepo({ '.tugtool/tugplan-a.md': '# A\n\n#### Step 1: One\n\n**Tasks:**\n- [ ] x\n' });
    expect(runCli(['init'], { cwd: root }).code).toBe(0);
    expect(runCli(['state', 'init', 'a'], { cwd: root }).code).toBe(0);
    expect(runCli(['state', 'claim', 'a', '--worktree', '.'], { cwd: root }).code).toBe(0);
    const loaded = packagesLoaded(['state', 'heartbeat', 'a', 'step-1', '--worktree', '.'], root);
    expect(loaded.has('better-sqlite3')).toBe(true);
    for (const heavy of ['markdown-it', 'zod', 'smol-toml', 'typescript']) expect(loaded.has(heavy), heavy).toBe(false);
  });
});
