/**
 * The repository is a Claude Code plugin (README "Install the Claude Code plugin", docs/run.md §5): the real
 * `claude` CLI, loading it with `--plugin-dir`, lists its three skills and three agents and connects its
 * MCP server (`tugcode mcp` from PATH) with every tool. The session's `init` event says what was loaded; the
 * scripted model server only answers the one turn.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MCP_TOOLS } from '../../src/contract/mcp-tools.js';
import { ensureAgentClis } from '../helpers/agent-clis.js';
import { agentEnv } from '../helpers/agent-env.js';
import { ROOT } from '../helpers/cli.js';
import { startModelServer, type ModelServer } from '../helpers/model-server.js';
import { planRepo } from '../gitflow/helpers.js';
import { tempDir } from '../helpers/repo.js';

const clis = ensureAgentClis();
let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe.skipIf(!clis.ok)('the Claude Code plugin in the real claude', () => {
  it('loads the skills, the agents and the MCP server with every tool', { timeout: 120_000 }, async () => {
    server = await startModelServer(() => ({ text: 'done' }));
    const { env } = agentEnv('claude', clis.ok ? clis.bin : '', server.url);
    // The manifest starts `tugcode mcp` from PATH, as an installed CLI would be (README: npm link).
    const bin = tempDir('tugcode-plugin-bin-');
    mkdirSync(bin, { recursive: true });
    symlinkSync(join(ROOT, 'bin', 'tugcode.cjs'), join(bin, 'tugcode'));
    // Not spawnSync: the model server answers from this process's event loop.
    const child = spawn('claude', ['-p', '--output-format', 'stream-json', '--verbose', '--plugin-dir', ROOT, 'hi'], {
      cwd: planRepo(),
      env: { ...process.env, ...env, PATH: `${bin}:${env.PATH}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const r = { stdout: '', stderr: '', status: null as number | null };
    child.stdout.on('data', (d: Buffer) => (r.stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (r.stderr += d.toString()));
    r.status = await new Promise<number | null>((res) => child.on('close', (code) => res(code)));
    const events = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, any>);
    const init = events.find((e) => e.type === 'system' && e.subtype === 'init');
    expect(init, `${r.stdout}\n${r.stderr}`).toBeDefined();
    expect(init!.skills).toEqual(expect.arrayContaining(['tugcode:implement', 'tugcode:plan', 'tugcode:rename']));
    expect(init!.agents).toEqual(expect.arrayContaining(['tugcode:coder', 'tugcode:reviewer', 'tugcode:committer']));
    expect(init!.mcp_servers).toContainEqual({ name: 'plugin:tugcode:tugcode', status: 'connected' });
    const tools = (init!.tools as string[]).filter((t) => t.startsWith('mcp__plugin_tugcode_tugcode__'));
    expect(tools.map((t) => t.slice('mcp__plugin_tugcode_tugcode__'.length)).sort()).toEqual(
      MCP_TOOLS.map((m) => m.tool).sort(),
    );
    expect(r.status, r.stderr).toBe(0);
  });
});
