/**
 * `tugcode mcp`: an MCP server over stdio (docs/run.md §5). A protocol wrapper only: each tool is an
 * operation of src/ops (the state tools) or a `tug` command served by a warm kernel (the kernel tools), with
 * the CLI's input tables and output schemas; `structuredContent` is the CLI's JSON document, and errors are
 * tool results with `isError: true` whose text is the CLI's error envelope. One OpsContext (and one open
 * state store) and one set of warm kernels serve every call. Nothing but protocol reaches stdout; logs go
 * to stderr.
 */
import { z } from 'zod';
import { ok } from '../contract/envelope.js';
import { TugError, toTugError } from '../contract/errors.js';
import { respell, toolError, validateInput } from '../contract/inputs/fields.js';
import { inputSchema } from '../contract/inputs/zod.js';
import { schemaFor } from '../contract/schemas/index.js';
import { tokenizeShell } from '../kernel/light.js';
import { kernelEnv, TUGCODE_REFACTOR } from '../config/kernel-env.js';
import { OpsContext, newCall } from '../ops/context.js';
import { confinedWorkspace } from '../ops/refactor.js';
import { type KernelToolName, mcpTool } from '../contract/mcp-tools.js';
import { KERNEL_TOOL_INPUTS } from '../contract/mcp-kernel-inputs.js';
import { type Annotations, STATE_TOOLS } from './tools.js';
import { type McpTool, type ToolResult, errorResult, installCallHandler, parseArguments, text } from './call.js';

export interface McpOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  version: string;
  /** Log lines (stderr). */
  log: (line: string) => void;
}

/** The kernel's `tug` envelope: its fields are the kernel's (docs/kernel.md §5); checked by the kernel's own tests. */
const kernelEnvelope = z.object({ status: z.enum(['ok', 'error']), schema_version: z.string() }).passthrough();

/**
 * MCP wants an object schema for a tool's output. A command whose document has alternative shapes (`state
 * claim`: claimed or not) is published as the envelope's common fields, open to the rest; the document
 * itself is still the exact one the CLI prints (and the tests parse it with the full schema).
 */
function outputObject(schema: z.ZodTypeAny): z.AnyZodObject {
  if (schema instanceof z.ZodObject) return schema;
  const options = schema instanceof z.ZodUnion ? (schema.options as z.ZodTypeAny[]) : [];
  const shapes = options
    .filter((o): o is z.AnyZodObject => o instanceof z.ZodObject)
    .map((o) => o.shape as Record<string, z.ZodTypeAny>);
  const common = shapes.length
    ? Object.keys(shapes[0]!).filter((k) =>
        shapes.every((sh) => k in sh && JSON.stringify(sh[k]!._def) === JSON.stringify(shapes[0]![k]!._def)),
      )
    : [];
  return z.object(Object.fromEntries(common.map((k) => [k, shapes[0]![k]!]))).passthrough();
}

/** A kernel error envelope with its message and argument in a tool's field names (`names`: flag → field). */
function kernelToolError(envelope: Record<string, unknown>, names: ReadonlyMap<string, string>) {
  const error = envelope.error as { message?: unknown; details?: Record<string, unknown> } | undefined;
  if (!error) return envelope;
  const spell = (v: unknown) => (typeof v === 'string' ? respell(names, v) : v);
  const details = error.details && { ...error.details, argument: spell(error.details.argument) };
  return { ...envelope, error: { ...error, message: spell(error.message), ...(details ? { details } : {}) } };
}

export async function createMcpServer(o: McpOptions) {
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const server = new McpServer({ name: 'tugcode', version: o.version }, { capabilities: { tools: {} } });
  // It lives as long as the agent's session: an edit of config.toml applies to its next call (docs/run.md §5).
  const ctx = new OpsContext({ cwd: o.cwd, env: o.env, longLived: true, followConfig: true });
  const { KernelThreads } = await import('../kernel/index.js');
  // Each workspace's kernels in a worker thread: a rename's seconds of CPU never hold up the other tools.
  // This module sits one directory below dist/ in the build and the bundle alike (scripts/bundle.mjs).
  const kernels = new KernelThreads(
    { ...TUGCODE_REFACTOR, env: kernelEnv(o.env), cwd: o.cwd, logSink: o.log },
    new URL('../kernel/cli/warm-thread.js', import.meta.url),
  );

  const tools = new Map<string, McpTool>();
  // Registered with the SDK for `tools/list`; `tools/call` is installCallHandler's, which runs `run`.
  const register = (
    tool: McpTool,
    config: {
      title: string;
      description: string;
      inputSchema: Record<string, z.ZodTypeAny>;
      outputSchema: z.AnyZodObject;
      annotations: Annotations;
    },
  ) => {
    tools.set(tool.name, tool);
    server.registerTool(tool.name, config, (args: Record<string, unknown>) => tool.run(args));
  };

  for (const tool of STATE_TOOLS) {
    const command = tool.table.command;
    const input = inputSchema(tool.table, { tool: true });
    const output = outputObject(schemaFor(command));
    const run = async (args: Record<string, unknown>): Promise<ToolResult> => {
      const call = newCall(command, 'tool');
      try {
        const valid = validateInput<never>(tool.table, args, 'tool');
        // What the table does not say (an integer given as a string, the shape of each item, a null):
        // the advertised schema, strict, as the SDK checked it before.
        parseArguments(input, command, args);
        const op = await tool.op();
        const doc = ok(command, await op(ctx, valid, call), call.warnings.items);
        return { content: text(doc), structuredContent: doc as Record<string, unknown> };
      } catch (e) {
        // The operations word their errors for the command line: a tool caller reads its field names.
        return errorResult(command, toolError(tool.table, toTugError(e)), call.warnings.items);
      }
    };
    register(
      { name: tool.name, command, output, run },
      {
        title: `tugcode ${command}`,
        description: `${input.description ?? tool.table.description} (the JSON of \`tugcode ${command} --json\`)`,
        inputSchema: input.shape,
        outputSchema: output,
        annotations: tool.annotations,
      },
    );
  }

  const kernelTool = (
    name: KernelToolName,
    description: string,
    shape: Record<string, z.ZodTypeAny>,
    argv: (a: Record<string, unknown>) => string[],
  ) => {
    const input = z.object(shape).strict();
    // The kernel words its errors for `tug`'s flags; a tool caller reads its field names (`op` holds flags).
    const fields = new Map(
      Object.keys(shape)
        .filter((k) => k !== 'op')
        .map((k) => [`--${k.replace(/_/g, '-')}`, k]),
    );
    const run = async (args: Record<string, unknown>): Promise<ToolResult> => {
      let r: { envelope: Record<string, unknown>; exitCode: number; text?: string };
      try {
        const a = parseArguments(input, name, args);
        // The default (the server's directory) is confined as a named workspace is: outside a repository it
        // would be an agent session's home directory, copied whole into a sandbox.
        const ws = ['--workspace', await confinedWorkspace(ctx, String(a.workspace ?? '.'))];
        r = await kernels.call([...argv(a), ...ws]);
      } catch (e) {
        return errorResult(name, toTugError(e));
      }
      return r.exitCode === 0
        ? {
            // The kernel thread wrote the text already (a rename's patch can be megabytes).
            content: r.text !== undefined ? [{ type: 'text' as const, text: r.text }] : text(r.envelope),
            structuredContent: r.envelope,
          }
        : { content: text(kernelToolError(r.envelope, fields)), isError: true };
    };
    register(
      { name, command: name, output: kernelEnvelope, run },
      {
        title: name,
        description,
        inputSchema: shape,
        outputSchema: kernelEnvelope,
        annotations: mcpTool(name).annotations,
      },
    );
  };

  // Only the operation and its own flags: the kernel's global flags (--workspace, --session-dir, --apply, …)
  // are not the caller's to smuggle in through `op` (a read-only tool must stay read-only).
  const OP_FLAGS = new Set(['--at', '--symbol', '--expect', '--to', '--allow-large', '--safety', '--file', '--mode']);
  const opArgv = (text: string): string[] => {
    const t = tokenizeShell(text);
    if (!t.ok) throw new TugError('InvalidArgument', { reason: `op: ${t.reason}`, argument: 'op' });
    const [name, ...rest] = t.tokens;
    if (name !== 'rename-symbol' && name !== 'organize-imports')
      throw new TugError('InvalidArgument', {
        reason: 'op must start with rename-symbol or organize-imports',
        argument: 'op',
      });
    for (const tok of rest) {
      const flag = tok.startsWith('--') ? tok.split('=')[0]! : null;
      if (flag && !OP_FLAGS.has(flag))
        throw new TugError('InvalidArgument', { reason: `op: ${flag} is not a flag of the operation`, argument: 'op' });
    }
    return t.tokens;
  };
  kernelTool(
    'tug_analyze_impact',
    'resolve a refactor target and compute its edit set without writing (`tug analyze-impact`)',
    KERNEL_TOOL_INPUTS.tug_analyze_impact,
    (a) => ['analyze-impact', ...opArgv(String(a.op))],
  );
  kernelTool(
    'tug_rename_symbol',
    'rename a symbol semantically (TypeScript/JavaScript, Python, Rust); a dry run unless apply (`tug run rename-symbol`)',
    KERNEL_TOOL_INPUTS.tug_rename_symbol,
    (a) => [
      'run',
      ...(a.apply ? ['--apply'] : []),
      ...(a.verify ? ['--verify', String(a.verify)] : []),
      ...(a.snapshot_id !== undefined ? ['--snapshot-id', String(a.snapshot_id)] : []),
      'rename-symbol',
      ...(a.at !== undefined ? ['--at', String(a.at)] : []),
      ...(a.symbol !== undefined ? ['--symbol', String(a.symbol)] : []),
      ...(a.expect !== undefined ? ['--expect', String(a.expect)] : []),
      '--to',
      String(a.to),
    ],
  );
  kernelTool(
    'tug_verify',
    'verify the current content in a sandbox (`tug verify syntax|tests|typecheck`)',
    KERNEL_TOOL_INPUTS.tug_verify,
    (a) => ['verify', String(a.mode)],
  );

  const settled = await installCallHandler(server.server, tools);

  return {
    server,
    /** Resolves once no tool call is running. */
    settled,
    /**
     * What start-up says on stderr of where it serves: why the state tools cannot serve here (not in a git
     * repository, a configuration that does not load), as the CLI words it, or the configuration's warnings.
     * A client that started the server in the wrong directory learns it before its first call.
     */
    async startupNotes(): Promise<string[]> {
      const call = newCall('mcp', 'tool');
      try {
        await ctx.load(call);
      } catch (e) {
        const err = toTugError(e);
        return [`warning: the state tools will refuse every call here (${err.code}: ${err.message})`];
      }
      return call.warnings.items.map((w) => `warning: ${w.code}: ${w.message}`);
    },
    async close() {
      await server.close().catch(() => undefined);
      await kernels.close();
      await ctx.close();
    },
  };
}
