/**
 * `tugcode mcp` as a real client reaches it: the built CLI over stdio through the SDK's client. Each test file
 * closes what it opened with `closeMcpClients` (afterEach).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI } from '../helpers/cli.js';
import { T0 } from '../gitflow/helpers.js';

const open: Client[] = [];
const stderrs = new WeakMap<Client, string[]>();

/** A client of a server started in `cwd` (clock fixed at T0, `env` added). */
export async function connectMcp(cwd: string, env: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp'],
    cwd,
    env: { ...(process.env as Record<string, string>), NODE_ENV: 'test', TUGCODE_NOW: T0, ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'tugcode-test', version: '1.0.0' });
  const err: string[] = [];
  transport.stderr?.on('data', (d: Buffer) => err.push(d.toString()));
  await client.connect(transport);
  open.push(client);
  stderrs.set(client, err);
  return client;
}

/** What the client's server wrote on stderr so far. */
export const mcpStderr = (client: Client): string => (stderrs.get(client) ?? []).join('');

export async function closeMcpClients(): Promise<void> {
  for (const c of open.splice(0)) await c.close();
}
