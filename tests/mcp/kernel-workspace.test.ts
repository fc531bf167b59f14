/**
 * A kernel tool works inside the server's repository, its main checkout or one of its worktrees (docs/run.md
 * §5), the default workspace (the server's directory) as much as a named one: a server started outside any
 * repository (an agent session opened in a home directory) must not copy that directory into a sandbox or
 * refactor in it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { closeMcpClients, connectMcp } from './client.js';
import { tempDir, writeFiles } from '../helpers/repo.js';

afterEach(async () => {
  await closeMcpClients();
});

const textOf = (r: any) => JSON.parse(r.content[0].text);

describe('tugcode mcp kernel tools outside a repository', () => {
  it('refuses the default workspace as it refuses a named one: NotAGitRepository, nothing run', async () => {
    const dir = tempDir('tug-not-a-repo-');
    writeFiles(dir, { 'src/a.ts': 'export function oldName(): number {\n  return 1;\n}\n' });
    const client = await connectMcp(dir);
    const named: any = await client.callTool({ name: 'tug_verify', arguments: { mode: 'syntax', workspace: dir } });
    expect(named.isError).toBe(true);
    const code = textOf(named).error.code;
    expect(code).toBe('NotAGitRepository');
    for (const [name, args] of [
      ['tug_verify', { mode: 'syntax' }],
      ['tug_analyze_impact', { op: 'rename-symbol --symbol src/a.ts::oldName --to newName' }],
      ['tug_rename_symbol', { symbol: 'src/a.ts::oldName', to: 'newName', apply: true }],
    ] as const) {
      const r: any = await client.callTool({ name, arguments: args });
      expect(r.isError, `${name}: ${JSON.stringify(r)}`).toBe(true);
      expect(textOf(r).error.code, name).toBe(code);
    }
  });
});
