#!/usr/bin/env node
// Baseline for the Python kernel benchmark: a fresh node process that drives pyright's language server
// directly — spawn through pyright/langserver.index.js, initialize, didOpen pkg/util.py, prepareRename and
// rename at parse_config, then shutdown/exit — the minimum any client needs for the same edit set.
// Prints {edits, files, rss_kb} (rss_kb: the server's peak RSS from /proc, when available).
// Usage: node py-direct.mjs DIR [--warm]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import * as rpc from 'vscode-jsonrpc/node.js';

const require = createRequire(import.meta.url);
const dir = process.argv[2];
const python = null;
const child = spawn(process.execPath, [require.resolve('pyright/langserver.index.js'), '--stdio'], {
  cwd: dir,
  stdio: ['pipe', 'pipe', 'ignore'],
});
const conn = rpc.createMessageConnection(
  new rpc.StreamMessageReader(child.stdout),
  new rpc.StreamMessageWriter(child.stdin),
);
conn.onRequest((method, params) => {
  if (method === 'workspace/configuration')
    return params.items.map((it) =>
      it.section === 'python'
        ? python
          ? { pythonPath: python }
          : {}
        : it.section === 'python.analysis'
          ? { diagnosticMode: 'openFilesOnly' }
          : null,
    );
  return null;
});
conn.listen();
const root = pathToFileURL(dir).href;
await conn.sendRequest('initialize', {
  processId: process.pid,
  rootUri: root,
  workspaceFolders: [{ uri: root, name: 'bench' }],
  capabilities: {
    textDocument: { rename: { prepareSupport: true } },
    workspace: { configuration: true, workspaceEdit: { documentChanges: true } },
  },
});
conn.sendNotification('initialized', {});
const file = join(dir, 'pkg', 'util.py');
const text = readFileSync(file, 'utf8');
const uri = pathToFileURL(file).href;
conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
const before = text.slice(0, text.indexOf('def parse_config') + 4).split('\n');
const position = { line: before.length - 1, character: before[before.length - 1].length };
let prep = await conn.sendRequest('textDocument/prepareRename', { textDocument: { uri }, position });
if (!prep) {
  await new Promise((r) => setTimeout(r, 500));
  prep = await conn.sendRequest('textDocument/prepareRename', { textDocument: { uri }, position });
}
const we = await conn.sendRequest('textDocument/rename', { textDocument: { uri }, position, newName: 'load_config' });
const docs = we?.documentChanges ?? [];
// --warm: then the same server renames the bench's other targets, timed (prepareRename + rename).
const warm = [];
if (process.argv.includes('--warm')) {
  const targets = [
    ['pkg/util.py', 'class Registry'],
    ['pkg/util.py', 'class Config'],
    ['pkg/util.py', 'def register'],
    ['pkg/util.py', 'def lookup'],
    ['pkg/m/mod_010.py', 'class Service010'],
    ['pkg/m/mod_020.py', 'def fn_020_a'],
    ['pkg/m/mod_030.py', 'def load'],
  ];
  for (const [rel, needle] of targets) {
    const f = join(dir, rel);
    const t = readFileSync(f, 'utf8');
    const u = pathToFileURL(f).href;
    conn.sendNotification('textDocument/didOpen', {
      textDocument: { uri: u, languageId: 'python', version: 1, text: t },
    });
    const lines = t.slice(0, t.indexOf(needle) + needle.indexOf(' ') + 1).split('\n');
    const pos = { line: lines.length - 1, character: lines[lines.length - 1].length };
    const t0 = performance.now();
    await conn.sendRequest('textDocument/prepareRename', { textDocument: { uri: u }, position: pos });
    await conn.sendRequest('textDocument/rename', {
      textDocument: { uri: u },
      position: pos,
      newName: 'renamed_symbol',
    });
    warm.push(performance.now() - t0);
  }
}
let rss = null;
try {
  rss = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]);
} catch {
  rss = null;
}
await conn.sendRequest('shutdown');
conn.sendNotification('exit');
await new Promise((r) => child.on('exit', r));
process.stdout.write(
  JSON.stringify({
    edits: docs.reduce((n, d) => n + d.edits.length, 0),
    files: docs.length,
    rss_kb: rss,
    warm_ms: warm,
  }) + '\n',
);
process.exit(0);
