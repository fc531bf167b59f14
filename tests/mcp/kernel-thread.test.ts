/**
 * A kernel tool's work runs off the MCP server's event loop (docs/run.md §5): a TypeScript rename is
 * seconds of synchronous CPU in the LanguageService, and while it runs the server still answers the other
 * tools. The state call below is sent once the kernel logged the rename's snapshot, i.e. while the rename
 * computes; a server running the kernel on its own thread answered it only after the rename.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { closeMcpClients, connectMcp, mcpStderr } from './client.js';
import { runJson } from '../helpers/cli.js';
import { git, writeFiles } from '../helpers/repo.js';
import { planRepo, T0 } from '../gitflow/helpers.js';

afterEach(async () => {
  await closeMcpClients();
});

/** src/util.ts's parseConfig, used five times in each of `n` modules. */
function project(n: number): Record<string, string> {
  const files: Record<string, string> = {
    'tsconfig.json': '{ "compilerOptions": { "strict": true, "module": "nodenext", "target": "es2022" } }\n',
    'src/util.ts': 'export function parseConfig(text: string): number {\n  return text.length;\n}\n',
  };
  for (let i = 0; i < n; i++) {
    const uses = [0, 1, 2, 3, 4].map((k) => `export const v${i}_${k} = parseConfig('${i}=${k}');\n`).join('');
    files[`src/m/mod_${i}.ts`] = `import { parseConfig } from '../util.js';\n${uses}`;
  }
  return files;
}

/** The kernel's log lines `info: <message> {…}` on the server's stderr. */
const logged = (client: Client, message: string) =>
  mcpStderr(client)
    .split('\n')
    .filter((l) => l.includes(`info: ${message} {`)).length;

describe('tugcode mcp kernel tools on their own thread', () => {
  it('answers a state call while a rename runs, before the rename', async () => {
    const root = planRepo();
    writeFiles(root, project(200));
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'code');
    runJson('state init', ['state', 'init', 'demo'], { cwd: root, env: { TUGCODE_NOW: T0 } });
    const client = await connectMcp(root, { TUG_LOG_LEVEL: 'info' });
    const rename = { name: 'tug_rename_symbol', arguments: { symbol: 'src/util.ts::parseConfig', to: 'readConfig' } };
    const opts = { timeout: 120_000 };
    // Cold, then warm: the second call's time is the LanguageService's.
    const cold: any = await client.callTool(rename, undefined, opts);
    expect(cold.isError, JSON.stringify(cold).slice(0, 500)).toBeFalsy();
    const snapshots = logged(client, 'snapshot');
    const prepared = logged(client, 'prepare rename-symbol');
    expect(prepared).toBeGreaterThan(0);

    const order: string[] = [];
    const warm = client.callTool(rename, undefined, opts).then((r: any) => (order.push('rename'), r));
    // The kernel took the rename's snapshot: it computes the rename now.
    while (logged(client, 'snapshot') === snapshots) await new Promise((res) => setTimeout(res, 1));
    const state: any = await client.callTool({ name: 'tug_state_ready', arguments: { plan: 'demo' } });
    order.push(logged(client, 'prepare rename-symbol') === prepared ? 'state' : 'state, after the rename computed');
    expect(state.isError, JSON.stringify(state)).toBeFalsy();
    const renamed: any = await warm;
    expect(order).toEqual(['state', 'rename']);
    expect(renamed.structuredContent).toMatchObject({ status: 'ok', applied: false });
  }, 120_000);
});
