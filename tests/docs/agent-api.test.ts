/**
 * docs/AGENT_API.md is generated from the contract (src/contract/agent-api.ts); the committed file must be
 * exactly the generated text, and the generated text must cover every command, error code and MCP tool.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REFACTOR_USAGE, renderAgentApi } from '../../src/contract/agent-api.js';
import { MCP_TOOLS } from '../../src/contract/mcp-tools.js';
import { ERROR_CODES } from '../../src/contract/errors.js';
import { INPUT_TABLES } from '../../src/contract/inputs/index.js';
import { flagOf } from '../../src/contract/inputs/fields.js';
import { ROOT, runCli } from '../helpers/cli.js';
import { closeMcpClients, connectMcp } from '../mcp/client.js';
import { planRepo } from '../gitflow/helpers.js';

describe('docs/AGENT_API.md', () => {
  const text = renderAgentApi();
  afterEach(closeMcpClients);

  it('is the generated text (regenerate with: npm run docs)', () => {
    const committed = readFileSync(join(ROOT, 'docs', 'AGENT_API.md'), 'utf8');
    // One assertion message that says how to fix it, not a 1000-line diff first.
    expect(committed === text, 'docs/AGENT_API.md is stale: run `npm run docs` and commit the result').toBe(true);
  });

  it('documents every command with every flag, every error code with its exit, every MCP tool', () => {
    for (const t of Object.values(INPUT_TABLES)) {
      expect(text).toContain(`### \`tugcode ${t.command}\``);
      const section = text.slice(text.indexOf(`### \`tugcode ${t.command}\``)).split('\n### ')[0]!;
      for (const [name, f] of Object.entries(t.fields)) {
        if (f.arg !== undefined) expect(section).toContain(`\`<${name}>\``);
        else if (f.type === 'string' && f.fileOnly) expect(section).toContain(`\`${f.fileFlag} `);
        else expect(section).toContain(`\`${flagOf(name, f)}\``);
      }
    }
    for (const c of ERROR_CODES) expect(text).toMatch(new RegExp(`^\\| \`${c}\` \\| \\d+ \\|`, 'm'));
    for (const m of MCP_TOOLS) expect(text).toContain(`| \`${m.tool}\` |`);
    for (const exit of ['0', '2', '3', '4', '5', '10', '130 / 143 / 129'])
      expect(text).toMatch(new RegExp(`^\\| ${exit} \\|`, 'm'));
  });

  it('lists the JSON output fields from the zod schemas', () => {
    const claim = text.slice(text.indexOf('### `tugcode state claim`')).split('\n### ')[0]!;
    for (const f of ['step_anchor', 'attempt', 'integration_tip', 'lease_expires_at', 'reason', 'claimed_steps'])
      expect(claim).toContain(`| \`${f}\``);
    const commit = text.slice(text.indexOf('### `tugcode commit`')).split('\n### ')[0]!;
    expect(commit).toContain('| `state_failure_reason` |');
    expect(commit).toContain('| `state_error.error.code` | string |');
  });

  it("lists each MCP tool's arguments as the server advertises them, the kernel tools' too", async () => {
    const client = await connectMcp(planRepo());
    const { tools } = await client.listTools();
    for (const t of tools) {
      const row = text.split('\n').find((l) => l.startsWith(`| \`${t.name}\` |`));
      expect(row, t.name).toBeDefined();
      const required = new Set(t.inputSchema.required ?? []);
      const args = Object.keys(t.inputSchema.properties ?? {}).map((n) => (required.has(n) ? `\`${n}\`` : `\`${n}\`?`));
      expect(row!.split(' | ')[2], t.name).toBe(args.join(', '));
    }
  });

  it('documents refactor run-step and skip with the usage lines of their real --help', () => {
    const help = runCli(['refactor', 'run-step', '--help'], { cwd: ROOT });
    expect(help.code).toBe(0);
    const usage = help.stdout
      .split('\n')
      .filter((l) => /^(usage: | {7})tugcode refactor /.test(l))
      .map((l) => l.replace(/^(usage: | {7})/, ''));
    expect(usage).toEqual(REFACTOR_USAGE);
    expect(text).toContain('### `tugcode refactor` (and `tug`)');
    for (const u of usage) expect(text).toContain(`    ${u}\n`);
  });
});
