/** `tugcode mcp` (docs/run.md §5): the MCP server over stdio; it ignores --json (stdout is the protocol). */
import type { Command } from 'commander';
import type { CliApp } from '../define.js';

export function registerMcp(program: Command, app: CliApp): void {
  app.register(program, {
    table: {
      command: 'mcp',
      description: 'serve the state and kernel tools over MCP (stdio) in this repository',
      fields: {},
    },
    loop: async (_input, cli) => {
      const { serveStdio } = await import('../../mcp/stdio.js');
      const { TugError } = await import('../../contract/errors.js');
      const { VERSION } = await import('../../contract/version.js');
      const log = (line: string) => process.stderr.write(line.endsWith('\n') ? line : line + '\n');
      try {
        await serveStdio({ cwd: cli.ctx.cwd, env: cli.env, version: VERSION, log }, process.stdin, process.stdout);
        return 0;
      } catch (e) {
        // Not the error envelope on stdout, even with --json: stdout is the protocol.
        if (!(e instanceof TugError)) throw e;
        log(`tugcode: ${e.code}: ${e.message}`);
        return e.exitCode;
      }
    },
  });
}
