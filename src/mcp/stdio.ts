/**
 * `tugcode mcp` on stdin/stdout (docs/run.md §5): the SDK's StdioServerTransport, fed one whole request line
 * at a time, with its errors answered or reported instead of swallowed:
 * - a line that is not JSON gets a JSON-RPC -32700 Parse error (`id: null`), and valid JSON that is not a
 *   JSON-RPC 2.0 message a -32600 Invalid Request, with the request's id when it has one (`"jsonrpc":
 *   "1.0"`, `params` an array), else `id: null`: a client waits on its id; the server keeps serving;
 * - a line longer than MAX_REQUEST_LINE_BYTES stops the server with `InvalidArgument` (exit 2, one stderr
 *   line), never a silent exit 0.
 */
import { PassThrough } from 'node:stream';
import { TugError } from '../contract/errors.js';
import type { McpOptions } from './server.js';

/**
 * The longest request line the server reads. It must hold the largest request any tool's input schema
 * accepts: `tug_state_artifact` with `summary` and `content` at their maxLength, 4,194,304 (MAX_CONTENT)
 * each. zod counts UTF-16 code units, and in JSON text one code unit takes at most 6 bytes (`\uXXXX`, which
 * any client may write; raw UTF-8 takes 3 bytes for a BMP character and 4 for a surrogate pair, so a
 * 4,194,304-character CJK content is 12.6 MB raw and 25 MB escaped): 2 × 4,194,304 × 6 = 50,331,648 bytes
 * (48 MiB). Its other arguments (plan 4096, worktree 4096, step 256 and kind 64 code units, a safe-integer
 * attempt) add at most 52 KB, and the JSON-RPC frame (id, method, tool name, keys, `_meta`) a few hundred
 * bytes. 64 MiB holds all of that with 15 MiB to spare (insignificant whitespace, a large `_meta`). Every
 * other tool's strings are at most 4096 code units each; `tug_state_update`'s `items` has no length in the
 * schema, and the state operation takes up to 100,000 entries: that many entries with reasons of up to
 * ~500 bytes fit too (a list of 100,000 maximal 4,000-character reasons would be 2.4 GB, no one line).
 */
export const MAX_REQUEST_LINE_BYTES = 64 * 1024 * 1024;

function tooLong(): TugError {
  return new TugError('InvalidArgument', {
    reason: `an MCP request line is longer than ${MAX_REQUEST_LINE_BYTES} bytes (64 MiB), the most tugcode mcp reads; the server stops`,
    argument: 'stdin',
  });
}

const isBlank = (line: Buffer) => line.every((b) => b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0a);

/**
 * The transport's input: while a line is handed to the transport's 'data' listener (which parses it and
 * reports a bad one to `onerror` synchronously), `current` is that line, so the error can be answered
 * with the line's own id.
 */
class LineStream extends PassThrough {
  current: Buffer | undefined;
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event !== 'data') return super.emit(event, ...args);
    this.current = args[0] as Buffer;
    try {
      return super.emit(event, ...args);
    } finally {
      this.current = undefined;
    }
  }
}

/**
 * Splits `input` into lines and writes each one, newline included, as one chunk to the returned stream
 * (object mode keeps the chunks apart). The SDK's ReadBuffer concatenates every chunk it gets onto the
 * pending line and searches all of it for a newline, which is quadratic in the line's length (a 48 MiB
 * line read in 64 KiB pipe chunks: 18 s); here each chunk is searched once and a line is joined once.
 * Blank lines are skipped. `onTooLong` runs, once, as soon as the pending line passes `max` bytes.
 */
function lineStream(input: NodeJS.ReadableStream, max: number, onTooLong: () => void) {
  const lines = new LineStream({ objectMode: true });
  let parts: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer | string) => {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (let nl = buf.indexOf(0x0a); nl !== -1; nl = buf.indexOf(0x0a, start)) {
      parts.push(buf.subarray(start, nl + 1));
      size += nl - start;
      start = nl + 1;
      if (size > max) return stop();
      const line = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
      parts = [];
      size = 0;
      if (!isBlank(line)) lines.write(line);
    }
    if (start < buf.length) {
      parts.push(buf.subarray(start));
      size += buf.length - start;
      if (size > max) stop();
    }
  };
  const onEnd = () => lines.end();
  const detach = () => {
    input.off('data', onData);
    input.off('end', onEnd);
  };
  const stop = () => {
    detach();
    parts = [];
    onTooLong();
  };
  input.on('data', onData);
  input.on('end', onEnd);
  return { lines, detach };
}

/**
 * A JSON-RPC error for a line that is no message: the transport's parse errors, by their kind. `line` is
 * the line refused: valid JSON (a -32600) whose `id` is a string or number is answered with that id.
 */
function unreadableLine(e: unknown, line?: Buffer) {
  if (e instanceof SyntaxError)
    return { jsonrpc: '2.0' as const, id: null, error: { code: -32700, message: `Parse error: ${e.message}` } };
  if (e instanceof Error && e.name === 'ZodError') {
    const m = parsedObject(line);
    const id = typeof m?.id === 'string' || (typeof m?.id === 'number' && Number.isFinite(m.id)) ? m.id : null;
    const why =
      m === undefined
        ? 'not a JSON-RPC 2.0 request, notification or response'
        : m.jsonrpc !== '2.0'
          ? `"jsonrpc" must be "2.0", got ${JSON.stringify(m.jsonrpc) ?? 'nothing'}`
          : 'params' in m && (m.params === null || typeof m.params !== 'object' || Array.isArray(m.params))
            ? '"params" must be an object of named arguments'
            : 'not a JSON-RPC 2.0 request, notification or response';
    return { jsonrpc: '2.0' as const, id, error: { code: -32600, message: `Invalid Request: ${why}` } };
  }
  return undefined;
}

/** The JSON object on `line` (the transport parsed it already, so it is JSON), or undefined. */
function parsedObject(line: Buffer | undefined): Record<string, unknown> | undefined {
  if (!line) return undefined;
  try {
    const v: unknown = JSON.parse(line.toString('utf8'));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Serve `createMcpServer(o)` on `stdin`/`stdout` until the client closes stdin (resolves) or sends a line
 * longer than MAX_REQUEST_LINE_BYTES (rejects with `InvalidArgument`).
 */
export async function serveStdio(
  o: McpOptions,
  stdin: NodeJS.ReadableStream & { destroy?: () => void },
  stdout: NodeJS.WritableStream,
): Promise<void> {
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const { createMcpServer } = await import('./server.js');
  const mcp = await createMcpServer(o);
  let fatal: TugError | undefined;
  let finish!: () => void;
  const closed = new Promise<void>((res) => (finish = res));
  const input = lineStream(stdin, MAX_REQUEST_LINE_BYTES, () => {
    fatal = tooLong();
    stdin.destroy?.();
    finish();
  });
  input.lines.on('end', () => finish());
  // One line plus its newline is one chunk, and the transport's buffer is empty between lines.
  const transport = new StdioServerTransport(input.lines as never, stdout as never, {
    maxBufferSize: MAX_REQUEST_LINE_BYTES + 1,
  });
  transport.onerror = (e: Error) => {
    const reply = unreadableLine(e, input.lines.current);
    if (reply) {
      transport.send(reply as never).catch(() => undefined);
      return;
    }
    if (/ReadBuffer exceeded/.test(e.message)) fatal ??= tooLong();
    else o.log(`tugcode mcp: ${e.message}`);
  };
  transport.onclose = () => finish();
  await mcp.server.connect(transport);
  o.log(`tugcode mcp: serving ${o.cwd} on stdio`);
  for (const note of await mcp.startupNotes()) o.log(`tugcode mcp: ${note}`);
  await closed;
  input.detach();
  // The client closed stdin: the calls it sent before are still answered.
  if (!fatal) await mcp.settled();
  await mcp.close();
  if (fatal) throw fatal;
}
