#!/usr/bin/env node
// How long a cheap state tool call waits while `tugcode mcp` runs a TypeScript rename (docs/run.md §5):
// the SDK's own client over stdio against the built CLI, in a repository holding the 300-file project of
// bench/kernel/gen-ts-project.mjs. Prints the cold and warm rename times, the state call alone, and the
// state call sent while a warm rename runs (its latency, and whether it was answered before the rename).
// Usage: node bench/mcp-kernel.bench.mjs [--files 300] [--runs 5]
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, median } from './lib.mjs';
import { generate } from './kernel/gen-ts-project.mjs';

const arg = (name, d) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? d : Number(process.argv[i + 1]);
};
const files = arg('files', 300);
const runs = arg('runs', 5);

const dir = generate({ files, seed: 1 });
const sh = (...a) => execFileSync(a[0], a.slice(1), { cwd: dir, stdio: 'pipe' });
sh('git', 'init', '-q', '-b', 'main');
sh('git', 'config', 'user.email', 'bench@example.com');
sh('git', 'config', 'user.name', 'bench');
sh(process.execPath, CLI, 'init');
const PLAN =
  '## Phase 1.0: Demo {#phase-demo}\n\n### Execution Steps {#execution-steps}\n\n#### Step 1: Add alpha {#step-1}\n\n**Commit:** `feat: alpha`\n\n**Tasks:**\n- [ ] write alpha\n';
writeFileSync(join(dir, '.tugtool', 'tugplan-demo.md'), PLAN);
sh('git', 'add', '-A');
sh('git', 'commit', '-q', '-m', 'project');
sh(process.execPath, CLI, 'state', 'init', '.tugtool/tugplan-demo.md');

const transport = new StdioClientTransport({
  command: process.execPath,
  args: [CLI, 'mcp'],
  cwd: dir,
  env: { ...process.env },
  stderr: 'pipe',
});
const client = new Client({ name: 'tugcode-bench', version: '1.0.0' });
await client.connect(transport);

const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const rename = { name: 'tug_rename_symbol', arguments: { symbol: 'src/util.ts::parseConfig', to: 'readConfig' } };
const cheap = { name: 'tug_state_ready', arguments: { plan: '.tugtool/tugplan-demo.md' } };
async function timed(req) {
  const t0 = process.hrtime.bigint();
  const r = await client.callTool(req, undefined, { timeout: 600_000 });
  return { ms: ms(t0), at: process.hrtime.bigint(), r };
}

// While `req` runs, state calls one after another: the longest any of them waited (`worst`; the last one
// also waits while this client parses the rename's answer, megabytes of patch), the longest of those
// answered before the rename (`worstBefore`: the server's part), and whether the first (sent once the
// server has `req`) was answered before it.
async function probeDuring(req) {
  let finished = false;
  const r = timed(req).then((x) => ((finished = true), x));
  await new Promise((res) => setTimeout(res, 5));
  const calls = [];
  while (!finished) {
    const c = await timed(cheap);
    if (c.r.isError) throw new Error(c.r.content[0].text);
    calls.push(c);
  }
  const done = await r;
  if (done.r.isError) throw new Error(done.r.content[0].text);
  const before = calls.filter((c) => c.at < done.at);
  return {
    ms: done.ms,
    worst: Math.max(...calls.map((c) => c.ms)),
    worstBefore: Math.max(0, ...before.map((c) => c.ms)),
    first: calls.length > 0 && calls[0].at < done.at,
  };
}

const cold = await probeDuring(rename);
const warm = [];
for (let i = 0; i < runs; i++) warm.push(await probeDuring(rename));
const alone = [];
for (let i = 0; i < runs; i++) alone.push((await timed(cheap)).ms);
// The floor: state calls one after another for as long as a warm rename takes, nothing else running.
const idle = [];
for (let i = 0; i < runs; i++) {
  const until = performance.now() + median(warm.map((w) => w.ms));
  let worst = 0;
  while (performance.now() < until) worst = Math.max(worst, (await timed(cheap)).ms);
  idle.push(worst);
}
const last = (await timed(cheap)).r;
const cheapOk = !last.isError;
await client.close();
const round = (x) => Math.round(x);
console.log(
  JSON.stringify({
    files,
    rename_cold_ms: round(cold.ms),
    state_call_worst_wait_during_cold_rename_ms: [round(cold.worst), round(cold.worstBefore)],
    rename_warm_ms: round(median(warm.map((w) => w.ms))),
    state_call_worst_wait_during_warm_rename_ms: warm.map((w) => [round(w.worst), round(w.worstBefore)]),
    state_call_alone_ms: round(median(alone)),
    state_call_worst_wait_idle_ms: idle.map(round),
    state_answered_before_rename: `${warm.filter((w) => w.first).length + (cold.first ? 1 : 0)}/${runs + 1}`,
    state_call_ok: cheapOk,
  }),
);
