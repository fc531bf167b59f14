/**
 * `tools/call` of `tugcode mcp` (docs/run.md §5): every argument error of every tool is a tool result with
 * `isError: true` whose text is the CLI's error envelope (`InvalidArgument`, naming the argument).
 *
 * The SDK's own handler validates arguments with the non-strict zod object of each tool before the tool
 * runs: it strips unknown arguments (a misspelled `lease_secs` was dropped and the call succeeded with the
 * default), and its errors are plain text (`MCP error -32602: …`), or a JSON-RPC -32603 with a zod dump when
 * `arguments` is not an object. So the server replaces that handler with this one, which dispatches to the
 * tools' own validate-and-run functions; `tools/list` stays the SDK's (the advertised schemas are unchanged).
 */
import { z } from 'zod';
import { fail, type Warning } from '../contract/envelope.js';
import { TugError } from '../contract/errors.js';

export type ToolResult = {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

export interface McpTool {
  name: string;
  /** The `command` of its envelopes (`state claim`, or the tool's name for a kernel tool). */
  command: string;
  /** The published output schema: a success's `structuredContent` is checked against it, as the SDK did. */
  output: z.AnyZodObject;
  /** Validates the arguments (any object) and runs; every error is an `isError` envelope. */
  run: (args: Record<string, unknown>) => Promise<ToolResult>;
}

export const text = (doc: object) => [{ type: 'text' as const, text: JSON.stringify(doc, null, 2) }];

export const errorResult = (command: string, err: TugError, warnings: Warning[] = []): ToolResult => ({
  content: text(fail(command, err, warnings)),
  isError: true,
});

function invalid(reason: string, argument: string): TugError {
  return new TugError('InvalidArgument', { reason, argument });
}

/** `items[2].status`: where an issue is, as the caller wrote it. */
function pathText(path: (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** A value in a message: its JSON, cut short (a wrong-typed argument may be megabytes long). */
function preview(v: unknown): string {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 80)}…` : s;
}

function valueAt(root: unknown, path: (string | number)[]): unknown {
  let v = root;
  for (const p of path) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
  return v;
}

/** A zod issue of a tool's arguments → `InvalidArgument` naming the (top-level) argument. */
function argumentError(command: string, args: Record<string, unknown>, issue: z.ZodIssue): TugError {
  const where = pathText(issue.path);
  const argument = issue.path.length > 0 ? String(issue.path[0]) : 'arguments';
  switch (issue.code) {
    case 'unrecognized_keys': {
      const key = issue.keys[0] ?? '';
      return issue.path.length === 0
        ? invalid(`${command} has no argument ${JSON.stringify(key)}`, key)
        : invalid(`${where} has no field ${JSON.stringify(key)}`, argument);
    }
    case 'invalid_type': {
      if (issue.received === 'undefined') {
        const parent = pathText(issue.path.slice(0, -1));
        const last = pathText(issue.path.slice(-1));
        return invalid(`${parent || command} needs ${last}`, argument);
      }
      const a = /^[aeiou]/.test(issue.expected) ? 'an' : 'a';
      return invalid(`${where} must be ${a} ${issue.expected}, got ${preview(valueAt(args, issue.path))}`, argument);
    }
    // Worded as the input tables word them (src/contract/inputs/fields.ts), so a kernel tool's argument
    // error reads like a state tool's, not like zod's ("String must contain at most 1024 character(s)").
    case 'invalid_enum_value':
      return invalid(
        `${where} must be one of ${issue.options.join(', ')}, got ${preview(valueAt(args, issue.path))}`,
        argument,
      );
    case 'too_big':
      if (issue.type === 'string') return invalid(`${where} is longer than ${issue.maximum} characters`, argument);
      if (issue.type === 'number')
        return invalid(
          `${where} must be ${issue.inclusive ? 'at most' : 'less than'} ${issue.maximum}, got ${preview(valueAt(args, issue.path))}`,
          argument,
        );
      return invalid(`${where || command}: ${issue.message}`, argument);
    case 'too_small':
      if (issue.type === 'number')
        return invalid(
          `${where} must be ${issue.inclusive ? 'at least' : 'greater than'} ${issue.minimum}, got ${preview(valueAt(args, issue.path))}`,
          argument,
        );
      return invalid(`${where || command}: ${issue.message}`, argument);
    default:
      return invalid(`${where || command}: ${issue.message}`, argument);
  }
}

/** Checks `args` against a tool's strict input schema; the parsed arguments, or `InvalidArgument`. */
export function parseArguments<T extends z.ZodTypeAny>(
  schema: T,
  command: string,
  args: Record<string, unknown>,
): z.output<T> {
  const r = schema.safeParse(args);
  if (!r.success) throw argumentError(command, args, r.error.issues[0]!);
  return r.data;
}

/** `tools/call` with the raw request: nothing of `params` is validated before the handler sees it. */
const CallRequest = z.object({ method: z.literal('tools/call') }).passthrough();

/**
 * Replaces the SDK's `tools/call` handler of `server` (a `McpServer`'s `server`) with one over `tools`.
 * Returns `settled`, which resolves once no call is running (and their answers are sent), so the server can
 * close its state store after the client closed stdin without failing the calls still under way.
 */
export async function installCallHandler(server: object, tools: Map<string, McpTool>): Promise<() => Promise<void>> {
  const { Protocol } = await import('@modelcontextprotocol/sdk/shared/protocol.js');
  const { McpError, ErrorCode } = await import('@modelcontextprotocol/sdk/types.js');
  const handle = async (request: { params?: unknown }): Promise<ToolResult> => {
    const params = request.params as { name?: unknown; arguments?: unknown } | undefined;
    if (params === null || typeof params !== 'object' || typeof params.name !== 'string')
      throw new McpError(ErrorCode.InvalidParams, 'tools/call needs params.name, the name of a tool');
    const tool = tools.get(params.name);
    // An error like any other (docs/run.md §5), named by the name asked for, with the names there are.
    if (!tool)
      return errorResult(
        params.name.slice(0, 100),
        invalid(`no tool ${preview(params.name)}; the tools are ${[...tools.keys()].join(', ')}`, 'name'),
      );
    const args = params.arguments === undefined ? {} : params.arguments;
    if (args === null || typeof args !== 'object' || Array.isArray(args))
      return errorResult(
        tool.command,
        invalid(`${tool.command} takes its arguments as a JSON object, got ${preview(args)}`, 'arguments'),
      );
    let result: ToolResult;
    try {
      result = await tool.run(args as Record<string, unknown>);
    } catch (e) {
      // A tool catches its own errors; this is a bug in it.
      return errorResult(tool.command, new TugError('InternalError', { reason: String(e) }));
    }
    if (!result.isError && result.structuredContent) {
      const checked = tool.output.safeParse(result.structuredContent);
      if (!checked.success) {
        const issue = checked.error.issues[0]!;
        const reason = `${tool.name}: the result does not match the output schema at ${pathText(issue.path)}: ${issue.message}`;
        return errorResult(tool.command, new TugError('InternalError', { reason }));
      }
    }
    return result;
  };
  // Protocol's own setRequestHandler: the SDK's Server wraps a `tools/call` handler in a check of the whole
  // request against CallToolRequestSchema, which answers `arguments: null` with a JSON-RPC error.
  const setRequestHandler = Protocol.prototype.setRequestHandler as unknown as (
    this: object,
    schema: typeof CallRequest,
    handler: (request: { params?: unknown }) => Promise<ToolResult>,
  ) => void;
  const running = new Set<Promise<ToolResult>>();
  setRequestHandler.call(server, CallRequest, (request) => {
    const p = handle(request);
    running.add(p);
    const done = () => running.delete(p);
    p.then(done, done);
    return p;
  });
  return async () => {
    while (running.size > 0) await Promise.allSettled([...running]);
    // The SDK sends an answer a few promise steps after its handler resolves.
    await new Promise((res) => setImmediate(res));
  };
}
