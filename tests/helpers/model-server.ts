/**
 * A scripted model server on 127.0.0.1 for the real agent CLIs (tests/agents-real): the Anthropic Messages
 * API (`POST /v1/messages`, server-sent events; claude also sends `HEAD /`) and the OpenAI Responses API
 * (`POST /v1/responses`, server-sent events) for codex. Stateless: each request carries the whole
 * conversation, so the script is a function of the prompt and of how many tool results came back — several
 * agents may talk to one server at once.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Agent = 'claude' | 'codex';

/** What the model does next. */
export type Action =
  | { bash: string } // claude: the Bash tool; codex: exec_command
  | { write: string; content: string } // claude: the Write tool; codex: exec_command writing the file
  | { read: string } // claude: the Read tool (its Write refuses a file not read first); codex: exec_command cat
  | { text: string } // the final message
  | { http: number; message?: string } // an HTTP error (500, …)
  | { overloaded: true }
  | { hang: true }; // headers never come: the CLI waits until it is killed

export interface Turn {
  agent: Agent;
  /** The user's text (the prompt the CLI was given, with what the CLI adds around it). */
  prompt: string;
  /** The tool results so far, oldest first (their text). */
  results: string[];
}

export type Script = (t: Turn) => Action;

export interface ModelServer {
  url: string;
  /** Every request the CLIs sent that advanced a conversation, in order. */
  turns: Turn[];
  /**
   * The tokens the server reported in the replies of the agents' conversations (not side requests), in
   * tugcode's ledger terms (docs/run.md §7.1): input not read from a cache, output, cache reads, cache writes.
   */
  reported: ReportedUsage;
  close(): Promise<void>;
}

export interface ReportedUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
}

/** What every conversation reply reports (different numbers per kind, so a mix-up shows). */
const DEFAULT_USAGE = {
  claude: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 4, cache_creation_input_tokens: 3 },
  // OpenAI's convention: input_tokens includes the cached ones.
  codex: { input_tokens: 10, cached_tokens: 4, cache_write_tokens: 2, output_tokens: 5 },
};

type ReplyUsage = typeof DEFAULT_USAGE;

/** What the server's replies report: `input_tokens` per reply instead of the default (an absurd count). */
export interface ModelServerOptions {
  input_tokens?: number;
}

function replyUsage(o: ModelServerOptions): ReplyUsage {
  if (o.input_tokens === undefined) return DEFAULT_USAGE;
  return {
    claude: { ...DEFAULT_USAGE.claude, input_tokens: o.input_tokens },
    codex: { ...DEFAULT_USAGE.codex, input_tokens: o.input_tokens },
  };
}

function report(r: ReportedUsage, agent: Agent, REPLY_USAGE: ReplyUsage): void {
  if (agent === 'claude') {
    const u = REPLY_USAGE.claude;
    r.input_tokens += u.input_tokens;
    r.output_tokens += u.output_tokens;
    r.cache_read_tokens += u.cache_read_input_tokens;
    r.cache_write_tokens += u.cache_creation_input_tokens;
  } else {
    const u = REPLY_USAGE.codex;
    r.input_tokens += u.input_tokens - u.cached_tokens;
    r.output_tokens += u.output_tokens;
    r.cache_read_tokens += u.cached_tokens;
    r.cache_write_tokens += u.cache_write_tokens;
  }
}

function text(c: unknown): string {
  if (typeof c === 'string') return c;
  if (Array.isArray(c))
    return c
      .map((x) => (typeof x === 'string' ? x : typeof x?.text === 'string' ? x.text : text(x?.content)))
      .join('\n');
  return '';
}

function claudeTurn(body: any): Turn {
  const msgs: any[] = body.messages ?? [];
  const user = msgs.find((m) => m.role === 'user');
  const results = msgs.flatMap((m) =>
    Array.isArray(m.content)
      ? m.content.filter((c: any) => c.type === 'tool_result').map((c: any) => text(c.content))
      : [],
  );
  return { agent: 'claude', prompt: text(user?.content), results };
}

function codexTurn(body: any): Turn {
  const input: any[] = body.input ?? [];
  const prompt = input
    .filter((i) => i.type === 'message' && i.role === 'user')
    .map((i) => text(i.content))
    .join('\n');
  const results = input.filter((i) => i.type === 'function_call_output').map((i) => text(i.output));
  return { agent: 'codex', prompt, results };
}

function sse(res: ServerResponse): (event: string, data: object) => void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  return (event, data) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

function claudeReply(
  res: ServerResponse,
  body: any,
  a: Exclude<Action, { hang: true }>,
  n: number,
  REPLY_USAGE: ReplyUsage,
): void {
  if ('http' in a || 'overloaded' in a) {
    const status = 'http' in a ? a.http : 529;
    const type = 'http' in a ? 'api_error' : 'overloaded_error';
    const message = 'http' in a ? (a.message ?? 'Internal server error') : 'Overloaded';
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ type: 'error', error: { type, message } }));
    return;
  }
  const ev = sse(res);
  const id = `msg_${n}`;
  ev('message_start', {
    type: 'message_start',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: REPLY_USAGE.claude.input_tokens,
        output_tokens: 1,
        cache_read_input_tokens: REPLY_USAGE.claude.cache_read_input_tokens,
        cache_creation_input_tokens: REPLY_USAGE.claude.cache_creation_input_tokens,
      },
    },
  });
  let stop = 'end_turn';
  if ('text' in a) {
    ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: a.text } });
  } else {
    const [name, input] =
      'bash' in a
        ? ['Bash', { command: a.bash, description: 'Run a command' }]
        : 'read' in a
          ? ['Read', { file_path: a.read }]
          : ['Write', { file_path: a.write, content: a.content }];
    ev('content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: `toolu_${n}`, name, input: {} },
    });
    ev('content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: JSON.stringify(input) },
    });
    stop = 'tool_use';
  }
  ev('content_block_stop', { type: 'content_block_stop', index: 0 });
  ev('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: REPLY_USAGE.claude.output_tokens },
  });
  ev('message_stop', { type: 'message_stop' });
  res.end();
}

/** A shell command writing `content` to `path` (codex has no file-writing tool here). */
function writeCommand(path: string, content: string): string {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return `printf '%s' ${q(content)} > ${q(path)}`;
}

function codexReply(res: ServerResponse, a: Exclude<Action, { hang: true }>, n: number, REPLY_USAGE: ReplyUsage): void {
  if ('http' in a) {
    res.writeHead(a.http, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: a.message ?? 'Internal server error', type: 'server_error' } }));
    return;
  }
  const ev = sse(res);
  const id = `resp_${n}`;
  ev('response.created', { type: 'response.created', response: { id } });
  if ('overloaded' in a) {
    ev('response.failed', {
      type: 'response.failed',
      response: { id, error: { code: 'server_is_overloaded', message: 'The server is overloaded' } },
    });
    res.end();
    return;
  }
  let item: object;
  if ('text' in a)
    item = { type: 'message', role: 'assistant', id: `m_${n}`, content: [{ type: 'output_text', text: a.text }] };
  else
    item = {
      type: 'function_call',
      id: `fc_${n}`,
      call_id: `call_${n}`,
      name: 'exec_command',
      arguments: JSON.stringify({
        cmd:
          'bash' in a
            ? a.bash
            : 'read' in a
              ? `cat '${a.read.replace(/'/g, `'\\''`)}'`
              : writeCommand(a.write, a.content),
      }),
    };
  ev('response.output_item.done', { type: 'response.output_item.done', item });
  ev('response.completed', {
    type: 'response.completed',
    response: {
      id,
      usage: {
        input_tokens: REPLY_USAGE.codex.input_tokens,
        input_tokens_details: {
          cached_tokens: REPLY_USAGE.codex.cached_tokens,
          cache_write_tokens: REPLY_USAGE.codex.cache_write_tokens,
        },
        output_tokens: REPLY_USAGE.codex.output_tokens,
        output_tokens_details: null,
        total_tokens: REPLY_USAGE.codex.input_tokens + REPLY_USAGE.codex.output_tokens,
      },
    },
  });
  res.end();
}

/** Starts the server; `script` decides each turn. */
export async function startModelServer(script: Script, options: ModelServerOptions = {}): Promise<ModelServer> {
  const usage = replyUsage(options);
  const turns: Turn[] = [];
  const reported: ReportedUsage = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 };
  const hung = new Set<ServerResponse>();
  let n = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(200);
        res.end();
        return;
      }
      let body: any;
      try {
        body = JSON.parse(raw);
      } catch {
        res.writeHead(400);
        res.end();
        return;
      }
      const path = (req.url ?? '').split('?')[0];
      n++;
      if (path === '/v1/messages') {
        // Side requests (no tools, or not streamed) are not the agent's conversation: a plain answer.
        if (!body.stream || !Array.isArray(body.tools) || body.tools.length === 0) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              id: `msg_${n}`,
              type: 'message',
              role: 'assistant',
              model: body.model,
              content: [{ type: 'text', text: 'ok' }],
              stop_reason: 'end_turn',
              stop_sequence: null,
              usage: { input_tokens: 1, output_tokens: 1 },
            }),
          );
          return;
        }
        const t = claudeTurn(body);
        turns.push(t);
        const a = script(t);
        if ('hang' in a) return void hung.add(res);
        claudeReply(res, body, a, n, usage);
        if (!('http' in a) && !('overloaded' in a)) report(reported, 'claude', usage);
        return;
      }
      if (path === '/v1/responses') {
        const t = codexTurn(body);
        turns.push(t);
        const a = script(t);
        if ('hang' in a) return void hung.add(res);
        codexReply(res, a, n, usage);
        if (!('http' in a) && !('overloaded' in a)) report(reported, 'codex', usage);
        return;
      }
      res.writeHead(404);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    turns,
    reported,
    close: () =>
      new Promise<void>((r) => {
        for (const res of hung) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
