/**
 * Fake `claude` and `codex` executables for the ledger tests (docs/run.md §7.1): first on PATH, each writes
 * `<TUG_STEP>.txt` in its working directory and prints what the real CLI prints, with usage — claude its
 * `--output-format stream-json` lines (a model call's message with the usage streamed for it, then the
 * result object with `usage` and `total_cost_usd`), codex its `exec --json` events (a
 * `turn.completed` with `usage`) and its final message in the `--output-last-message` file. The numbers
 * depend on the step's number n (`step-n`), so totals are known exactly: see claudeUsageOf / codexUsageOf.
 * FAKE_USAGE (JSON) replaces fields of the usage object either reports. FAKE_HANG=1: claude stops after its
 * model call's message and waits to be killed (a stalled run that never reaches its result).
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/repo.js';

const FAKE = `#!/usr/bin/env node
const fs = require('node:fs');
const path = require('node:path');
const name = path.basename(process.argv[1]);
const argv = process.argv.slice(2);
fs.readFileSync(0, 'utf8');
const step = process.env.TUG_STEP;
const n = Number(step.split('-')[1]);
if (process.env.FAKE_ARGV) fs.appendFileSync(process.env.FAKE_ARGV, JSON.stringify([name, ...argv]) + '\\n');
fs.writeFileSync(path.join(process.cwd(), step + '.txt'), step + ' by ' + name + '\\n');
const message = 'Implemented ' + step;
const over = process.env.FAKE_USAGE ? JSON.parse(process.env.FAKE_USAGE) : {};
if (name === 'claude') {
  const cost = process.env.FAKE_COST ? Number(process.env.FAKE_COST) : 0.25 * n;
  console.log(JSON.stringify({ type: 'system', subtype: 'init', session_id: 's', model: 'fake' }));
  console.log(JSON.stringify({
    type: 'assistant',
    message: { id: 'msg-' + step, content: [{ type: 'text', text: message }],
      usage: { input_tokens: 1000 * n, cache_creation_input_tokens: 5 * n, cache_read_input_tokens: 10 * n, output_tokens: 1, ...over } },
  }));
  if (process.env.FAKE_HANG) setInterval(() => {}, 1000);
  else console.log(JSON.stringify({
    type: 'result', subtype: 'success', is_error: false, result: message, session_id: 's', total_cost_usd: cost,
    usage: { input_tokens: 1000 * n, cache_creation_input_tokens: 5 * n, cache_read_input_tokens: 10 * n, output_tokens: 100 * n, ...over },
  }));
} else {
  const ev = (e) => console.log(JSON.stringify(e));
  ev({ type: 'thread.started', thread_id: 't-' + step });
  ev({ type: 'turn.started' });
  ev({ type: 'item.started', item: { id: 'i1', type: 'command_execution', command: "bash -c 'echo hi'", aggregated_output: '', exit_code: null, status: 'in_progress' } });
  ev({ type: 'item.completed', item: { id: 'i1', type: 'command_execution', command: "bash -c 'echo hi'", aggregated_output: 'hi\\n', exit_code: 0, status: 'completed' } });
  ev({ type: 'item.completed', item: { id: 'i2', type: 'agent_message', text: message } });
  ev({ type: 'turn.completed', usage: { input_tokens: 1000 * n, cached_input_tokens: 200 * n, cache_write_input_tokens: 0, output_tokens: 100 * n, reasoning_output_tokens: 0, ...over } });
  fs.writeFileSync(argv[argv.indexOf('--output-last-message') + 1], message);
}
`;

/** A directory holding the fakes; `env` puts them first on PATH. */
export function fakeAgents(): { bin: string; env: Record<string, string> } {
  const dir = tempDir('tugcode-fake-agents-');
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const n of ['claude', 'codex']) {
    writeFileSync(join(bin, n), FAKE);
    chmodSync(join(bin, n), 0o755);
  }
  return { bin, env: { PATH: `${bin}:${process.env.PATH ?? ''}` } };
}

/** What the fake claude reports for step n (cost 0.25 n unless FAKE_COST). */
export function claudeUsageOf(n: number, cost = 0.25 * n) {
  return {
    input_tokens: 1000 * n,
    output_tokens: 100 * n,
    cache_read_tokens: 10 * n,
    cache_write_tokens: 5 * n,
    cost_usd: cost,
  };
}

/** What the ledger makes of the fake codex's step n: cached input apart; cost from `prices` (USD/Mtok). */
export function codexUsageOf(n: number, prices?: { input: number; output: number; cache_read: number }) {
  const u = { input_tokens: 800 * n, output_tokens: 100 * n, cache_read_tokens: 200 * n, cache_write_tokens: 0 };
  const cost = prices
    ? Math.round(
        ((u.input_tokens * prices.input + u.output_tokens * prices.output + u.cache_read_tokens * prices.cache_read) /
          1e6) *
          1e9,
      ) / 1e9
    : null;
  return { ...u, cost_usd: cost };
}

/** Totals of reports (the ledger's UsageTotals), all by the implementer. */
export function totalsOf(reports: ReturnType<typeof claudeUsageOf | typeof codexUsageOf>[]) {
  const t = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 };
  let cost: number | null = null;
  let unpriced = 0;
  for (const r of reports) {
    for (const k of Object.keys(t) as (keyof typeof t)[]) t[k] += r[k];
    if (r.cost_usd === null) unpriced++;
    else cost = Math.round(((cost ?? 0) + r.cost_usd) * 1e9) / 1e9;
  }
  const tokens = t.input_tokens + t.output_tokens + t.cache_read_tokens + t.cache_write_tokens;
  return {
    ...t,
    tokens,
    cost_usd: cost,
    reports: reports.length,
    unpriced,
    by_role: { implementer: { tokens, cost_usd: cost, reports: reports.length } },
  };
}
