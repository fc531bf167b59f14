/**
 * `tugcode mcp` as a child process spoken to line by line, for what the SDK's client never sends: garbage
 * lines, huge lines, `arguments: null`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI } from '../helpers/cli.js';
import { T0 } from '../gitflow/helpers.js';

export class RawMcp {
  readonly child: ChildProcess;
  /** Every JSON-RPC message the server wrote, in order. */
  readonly messages: any[] = [];
  stderr = '';
  readonly exited: Promise<number | null>;
  private pending = '';
  private waiters: (() => void)[] = [];

  constructor(cwd: string) {
    this.child = spawn(process.execPath, [CLI, 'mcp'], {
      cwd,
      env: { ...process.env, NODE_ENV: 'test', TUGCODE_NOW: T0 },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    // The server may stop reading (a line over its limit): writing on is the client's EPIPE, not a failure.
    this.child.stdin!.on('error', () => undefined);
    this.child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      const lines = (this.pending + s).split('\n');
      this.pending = lines.pop()!;
      for (const l of lines) if (l.trim()) this.messages.push(JSON.parse(l));
      for (const w of this.waiters.splice(0)) w();
    });
    this.child.stderr!.setEncoding('utf8').on('data', (s: string) => (this.stderr += s));
    this.exited = new Promise((res) => this.child.on('exit', (code) => res(code)));
  }

  /** Writes one line: a message (as JSON), or a string or bytes as they are. */
  send(line: object | string | Buffer): void {
    const data = Buffer.isBuffer(line) ? line : Buffer.from(typeof line === 'string' ? line : JSON.stringify(line));
    this.child.stdin!.write(Buffer.concat([data, Buffer.from('\n')]));
  }

  async initialize(): Promise<void> {
    this.send({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    });
    await this.reply('init');
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  /** The first message matching `pick`, waiting for it up to `ms`. */
  async next(pick: (m: any) => boolean, ms = 30_000): Promise<any> {
    const deadline = Date.now() + ms;
    for (;;) {
      const m = this.messages.find(pick);
      if (m) return m;
      if (Date.now() > deadline) throw new Error(`no such message; got ${JSON.stringify(this.messages)}`);
      await new Promise<void>((res) => {
        this.waiters.push(res);
        setTimeout(res, 200);
      });
    }
  }

  reply(id: string | number, ms?: number): Promise<any> {
    return this.next((m) => m.id === id, ms);
  }

  call(id: string | number, name: string, args: unknown): void {
    this.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
  }

  /** Closes stdin and waits for the exit code. */
  async close(): Promise<number | null> {
    this.child.stdin!.end();
    return this.exited;
  }
}
