#!/usr/bin/env node
// A scripted fake LSP server (docs/quality.md §1) for the kernel's LSP error paths: timeouts, crashes,
// indexing that never ends, rust-analyzer error messages, resource operations. It also answers
// `--version` like rust-analyzer, so it can stand in for one through `--rust-analyzer`.
//
// The script is a JSON file named by FAKE_LSP_SCRIPT:
// {
//   "version": { "exit": 0, "stdout": "rust-analyzer 0.0.0 (fake)" },
//   "positionEncoding": "utf-8",                      // answered in initialize capabilities
//   "serverStatus": [{ "health": "ok", "quiescent": true }],  // sent after `initialized`
//   "askClient": { "method": "workspace/configuration", "params": {...} },  // asked during initialize
//   "stderr": "text written to stderr at start",
//   "methods": { "<method>": Answer | Answer[] }      // an array answers successive calls
// }
// Answer: { "result": any } | { "error": { "code", "message" } } | { "hang": true } | { "exit": code }
// Strings in results may contain {root} (the rootUri of initialize) and {clientAnswer} (JSON of the
// client's answer to askClient).
import { readFileSync } from 'node:fs';
import * as rpc from 'vscode-jsonrpc/node.js';

const script = process.env.FAKE_LSP_SCRIPT ? JSON.parse(readFileSync(process.env.FAKE_LSP_SCRIPT, 'utf8')) : {};

if (process.argv.includes('--version')) {
  const v = script.version ?? { exit: 0, stdout: 'rust-analyzer 0.0.0 (fake)' };
  if (v.stdout) process.stdout.write(v.stdout + '\n');
  if (v.stderr) process.stderr.write(v.stderr + '\n');
  process.exit(v.exit ?? 0);
}

if (script.stderr) process.stderr.write(script.stderr + '\n');

const conn = rpc.createMessageConnection(
  new rpc.StreamMessageReader(process.stdin),
  new rpc.StreamMessageWriter(process.stdout),
);
const calls = new Map();
let root = '';
let clientAnswer = null;

function fill(v) {
  if (typeof v === 'string')
    return v.split('{root}').join(root).split('{clientAnswer}').join(JSON.stringify(clientAnswer));
  if (Array.isArray(v)) return v.map(fill);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [fill(k), fill(x)]));
  return v;
}

function answerFor(method) {
  const a = script.methods?.[method];
  if (a === undefined) return undefined;
  if (!Array.isArray(a)) return a;
  const n = calls.get(method) ?? 0;
  calls.set(method, n + 1);
  return a[Math.min(n, a.length - 1)];
}

async function answer(method, fallback) {
  const a = answerFor(method);
  if (a === undefined) return fallback();
  if (a.exit !== undefined) {
    process.stderr.write(`fake server exits ${a.exit} on ${method}\n`);
    process.exit(a.exit);
  }
  if (a.hang) return new Promise(() => undefined);
  if (a.error) return new rpc.ResponseError(a.error.code, a.error.message);
  return fill(a.result ?? null);
}

conn.onRequest('initialize', async (params) => {
  root = params.rootUri ?? '';
  if (script.askClient)
    clientAnswer = await conn
      .sendRequest(script.askClient.method, script.askClient.params)
      .catch((e) => ({ error: e.code }));
  return answer('initialize', () => ({
    capabilities: { positionEncoding: script.positionEncoding ?? 'utf-16', renameProvider: { prepareProvider: true } },
    serverInfo: { name: 'fake', version: '0.0.0' },
  }));
});
conn.onNotification('initialized', () => {
  for (const s of script.serverStatus ?? []) void conn.sendNotification('experimental/serverStatus', s);
});
conn.onRequest('shutdown', () => answer('shutdown', () => null));
conn.onNotification('exit', () => process.exit(0));
conn.onRequest((method) => answer(method, () => null));
conn.onNotification(() => undefined);
conn.listen();
