/**
 * The ledger (docs/run.md §7.1–§7.2): usage per attempt from fake `claude` and `codex` executables that
 * print their real output shapes, and from any implementer through TUG_USAGE_OUT — exact totals per step,
 * per plan, in the run's events and summary and in `tugcode status`; budgets that stop new claims;
 * `state export` → `import` keeps the usage. Real git, real state, the built CLI.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/repo.js';
import { claudeUsageOf, codexUsageOf, fakeAgents, totalsOf } from './fake-agents.js';
import { nodeImplementer, planText, runJsonl, runRepo, step, stepCommits, tugJson } from './helpers.js';

const CHAIN = planText([step(1, 'One'), step(2, 'Two', { deps: [1] }), step(3, 'Three', { deps: [2] })]);
const PRICES = { input: 2, output: 8, cache_read: 0.5 };

function showSteps(root: string): { plan: any; steps: Record<string, any> } {
  const r = tugJson(root, ['state', 'show', 'demo']);
  expect(r.code, r.stderr).toBe(0);
  const plan = r.json.plans[0];
  return { plan, steps: Object.fromEntries(plan.steps.map((s: any) => [s.anchor, s])) };
}

describe('the ledger with fake agents', () => {
  it('claude: each step, the plan, the usage events, the summary and tugcode status carry exact totals', () => {
    const root = runRepo(CHAIN);
    const f = fakeAgents();
    const r = runJsonl(root, ['demo', '--workers', '1', '--agent', 'claude'], f.env);
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    const want = [1, 2, 3].map((n) => claudeUsageOf(n));
    // One `usage` event per run, with the plan's running totals.
    const usage = r.events.filter((e) => e.type === 'usage');
    expect(usage.map((e) => [e.step_anchor, e.role, e.usage])).toEqual(
      want.map((u, i) => [`step-${i + 1}`, 'implementer', u]),
    );
    expect(usage.map((e) => e.plan)).toEqual(
      [1, 2, 3].map((k) => {
        const t = totalsOf(want.slice(0, k));
        return { tokens: t.tokens, cost_usd: t.cost_usd };
      }),
    );
    const summary = r.events.at(-1);
    expect(summary.usage).toEqual(totalsOf(want));
    expect(summary.plan_usage).toEqual(totalsOf(want));
    expect(summary.usage.cost_usd).toBe(1.5);
    // state show: per step and per plan.
    const { plan, steps } = showSteps(root);
    for (const n of [1, 2, 3]) expect(steps[`step-${n}`].usage).toEqual(totalsOf([want[n - 1]!]));
    expect(plan.usage).toEqual(totalsOf(want));
    const text = tugJson(root, ['state', 'show', 'demo']);
    expect(text.code).toBe(0);
    // tugcode status: the plan's total (JSON and text).
    const st = tugJson(root, ['status', 'demo']);
    expect(st.json.plans[0].usage).toEqual(totalsOf(want));
  });

  it('codex: --json events become a readable log; tokens priced by [run.prices]; cached input apart', () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]), 'demo', {
      '.tugtool/config.toml': '[run.prices]\ninput = 2\noutput = 8\ncache_read = 0.5\n',
    });
    const f = fakeAgents();
    const argvLog = join(tempDir('tugcode-argv-'), 'argv');
    const r = runJsonl(root, ['demo', '--workers', '1', '--agent', 'codex'], { ...f.env, FAKE_ARGV: argvLog });
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    const argvs = readFileSync(argvLog, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    for (const a of argvs) expect(a.slice(0, 3)).toEqual(['codex', 'exec', '--json']);
    const want = [1, 2].map((n) => codexUsageOf(n, PRICES));
    expect(want.map((u) => u.cost_usd)).toEqual([0.0025, 0.005]);
    expect(r.events.filter((e) => e.type === 'usage').map((e) => e.usage)).toEqual(want);
    expect(r.events.at(-1).usage).toEqual(totalsOf(want));
    const { plan, steps } = showSteps(root);
    expect(steps['step-2'].usage).toEqual(totalsOf([want[1]!]));
    expect(plan.usage).toEqual(totalsOf(want));
    // The log reads like codex's own output, not JSON.
    const log = readFileSync(join(root, '.tugtool', 'logs', 'demo', 'step-1-attempt1.log'), 'utf8');
    expect(log).toContain('codex\nImplemented step-1\n');
    expect(log).toContain("exec\nbash -c 'echo hi'\n succeeded:\nhi\n");
    expect(log).toContain('tokens used\n1100\n');
    expect(log).not.toContain('{"type"');
  });

  it('codex without [run.prices]: tokens counted, cost unknown (never guessed)', () => {
    const root = runRepo(planText([step(1, 'One')]));
    const r = runJsonl(root, ['demo', '--workers', '1', '--agent', 'codex'], fakeAgents().env);
    expect(r.events.at(-1).usage).toEqual(totalsOf([codexUsageOf(1)]));
    expect(r.events.at(-1).usage).toMatchObject({ cost_usd: null, unpriced: 1 });
  });

  it('any implementer through TUG_USAGE_OUT; an unreadable report is a warning, not a failure', () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]));
    const impl = nodeImplementer(`
writeFileSync(join(wt, step + '.txt'), step);
writeFileSync(process.env.TUG_USAGE_OUT, step === 'step-1'
  ? JSON.stringify({ input_tokens: 7, output_tokens: 3, cost_usd: 0.125 })
  : '{ not json');
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const summary = r.events.at(-1);
    expect(summary, r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(summary.usage).toMatchObject({ input_tokens: 7, output_tokens: 3, tokens: 10, cost_usd: 0.125, reports: 1 });
    const warnings = r.events.filter((e) => e.type === 'warning');
    expect(warnings).toEqual([expect.objectContaining({ code: 'UsageUnreadable' })]);
    expect(warnings[0].message).toMatch(/step-2 \(implementer\): .*step-2-brief1\.usage\.json: not JSON/);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
  });

  it('an absurd number in a TUG_USAGE_OUT report counts as its bound: a warning, and it spends the budget', () => {
    // docs/run.md §7.1: never ignored (a budget blind to it) and never Infinity (every later budget spent).
    const root = runRepo(CHAIN);
    const impl = nodeImplementer(`
writeFileSync(join(wt, step + '.txt'), step);
writeFileSync(process.env.TUG_USAGE_OUT, step === 'step-1'
  ? '{"input_tokens": 5, "cost_usd": 1e308}'
  : JSON.stringify({ input_tokens: 7, output_tokens: 3, cost_usd: 0.25 }));
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--budget-usd', '1']);
    expect(r.code, r.stderr).toBe(4);
    expect(r.events.at(-1).error).toMatchObject({ code: 'BudgetExhausted' });
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1']);
    const warnings = r.events.filter((e) => e.type === 'warning' && e.code !== 'BudgetUnmeasured');
    expect(warnings.map((w) => [w.code, w.message])).toEqual([
      ['UsageOutOfBounds', "step-1 (implementer): cost_usd 1e+308 counted as 1,000,000,000 (past the ledger's bound)"],
    ]);
    expect(r.events.find((e) => e.type === 'usage').usage).toEqual({
      input_tokens: 5,
      output_tokens: null,
      cache_read_tokens: null,
      cache_write_tokens: null,
      cost_usd: 1e9,
    });
    const { plan } = showSteps(root);
    expect(plan.usage).toMatchObject({ tokens: 5, cost_usd: 1e9, reports: 1 });
  });

  it('a claude or codex usage field that is no count (negative, text) counts 0 with a UsageUnreadable warning naming it', () => {
    // docs/run.md §7.1: never dropped silently; the fields that are counts still count.
    for (const agent of ['claude', 'codex'] as const) {
      const root = runRepo(planText([step(1, 'One')]));
      const env = { ...fakeAgents().env, FAKE_USAGE: JSON.stringify({ input_tokens: -5, output_tokens: 'many' }) };
      const r = runJsonl(root, ['demo', '--workers', '1', '--agent', agent], env);
      expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
      const warnings = r.events.filter((e) => e.type === 'warning');
      expect(warnings.map((w) => [w.code, w.message])).toEqual([
        [
          'UsageUnreadable',
          `step-1 (implementer): ${agent} reported input_tokens -5, output_tokens "many", which are not usage: counted as 0`,
        ],
      ]);
      const usage = r.events.find((e) => e.type === 'usage').usage;
      expect(usage).toMatchObject({ input_tokens: null, output_tokens: null });
      expect(usage.cache_read_tokens).toBeGreaterThan(0);
    }
  });

  it('a claude run killed before its result (stalled) counts the usage its model calls streamed, with no cost', () => {
    // docs/run.md §7.1: an attempt that never finished is not free for a budget.
    const root = runRepo(planText([step(1, 'One')]), 'demo', { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' });
    const env = { ...fakeAgents().env, FAKE_HANG: '1' };
    const r = runJsonl(root, ['demo', '--workers', '1', '--agent', 'claude', '--stall-seconds', '2'], env);
    expect(
      r.events.find((e) => e.type === 'attempt_failed'),
      r.stderr,
    ).toMatchObject({ reason_code: 'Stalled' });
    const usage = {
      input_tokens: 1000,
      output_tokens: 1,
      cache_read_tokens: 10,
      cache_write_tokens: 5,
      cost_usd: null,
    };
    expect(r.events.find((e) => e.type === 'usage').usage).toEqual(usage);
    expect(showSteps(root).steps['step-1'].usage).toMatchObject({ ...usage, tokens: 1016 });
    // The log reads as text, not as claude's JSON lines.
    const log = readdirSync(join(root, '.tugtool', 'logs', 'demo')).find(
      (f) => f.startsWith('step-1') && f.endsWith('.log'),
    );
    const text = readFileSync(join(root, '.tugtool', 'logs', 'demo', log!), 'utf8');
    expect(text).toContain('claude\nImplemented step-1\n');
    expect(text).not.toContain('"type":"assistant"');
  });

  it('a token count past the bound counts as the bound, so --budget-tokens trips on it', () => {
    const root = runRepo(CHAIN);
    const impl = nodeImplementer(`
writeFileSync(join(wt, step + '.txt'), step);
writeFileSync(process.env.TUG_USAGE_OUT, JSON.stringify({ input_tokens: 1e15, output_tokens: 3 }));
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--budget-tokens', '100000']);
    expect(r.code, r.stderr).toBe(4);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1']);
    const warnings = r.events.filter((e) => e.type === 'warning' && e.code === 'UsageOutOfBounds');
    expect(warnings.map((w) => w.message)).toEqual([
      "step-1 (implementer): input_tokens 1,000,000,000,000,000 counted as 1,000,000,000,000 (past the ledger's bound)",
    ]);
    expect(showSteps(root).plan.usage).toMatchObject({ input_tokens: 1e12, output_tokens: 3, tokens: 1e12 + 3 });
  });

  it('a report whose priced cost is past the bound counts the bound (UsageOutOfBounds), in every total', () => {
    // At the highest prices, 10^12 input and 10^12 output tokens cost 2·10^9: more than one report may.
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]), 'demo', {
      '.tugtool/config.toml': '[run.prices]\ninput = 1000\noutput = 1000\n',
    });
    const impl = nodeImplementer(`
writeFileSync(join(wt, step + '.txt'), step);
writeFileSync(process.env.TUG_USAGE_OUT, step === 'step-1'
  ? JSON.stringify({ input_tokens: 1e12, output_tokens: 1e12 })
  : JSON.stringify({ input_tokens: 7, output_tokens: 3 }));
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const summary = r.events.at(-1);
    expect(summary, r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    const warnings = r.events.filter((e) => e.type === 'warning');
    expect(warnings.map((w) => [w.code, w.message])).toEqual([
      [
        'UsageOutOfBounds',
        "step-1 (implementer): cost_usd 2,000,000,000 (priced) counted as 1,000,000,000 (past the ledger's bound)",
      ],
    ]);
    expect(r.events.filter((e) => e.type === 'usage').map((e) => e.step_anchor)).toEqual(['step-1', 'step-2']);
    const want = { tokens: 2e12 + 10, cost_usd: 1e9 + 0.01, reports: 2 };
    expect(summary.usage).toMatchObject(want);
    expect(summary.plan_usage).toMatchObject(want);
    expect(showSteps(root).plan.usage).toMatchObject(want);
  });

  it('--budget-usd stops new claims at the step that reached it and exits BudgetExhausted with the totals', () => {
    const root = runRepo(CHAIN);
    const f = fakeAgents();
    const r = runJsonl(root, ['demo', '--workers', '1', '--agent', 'claude', '--budget-usd', '1'], {
      ...f.env,
      FAKE_COST: '0.5',
    });
    expect(r.code, r.stderr).toBe(4);
    const summary = r.events.at(-1);
    expect(summary).toMatchObject({ status: 'error', steps_completed: ['step-1', 'step-2'] });
    expect(summary.error).toMatchObject({ code: 'BudgetExhausted' });
    expect(summary.error.details).toMatchObject({ budget_usd: 1, usage: { cost_usd: 1, reports: 2 } });
    expect(r.stderr).toMatch(/the budget of \.tugtool\/tugplan-demo\.md is spent: \$1\.00 of \$1\.00/);
    const exhausted = r.events.filter((e) => e.type === 'budget_exhausted');
    expect(exhausted).toEqual([expect.objectContaining({ budget_usd: 1, running: ['step-2'] })]);
    // Nothing claimed after it: step-3 never started.
    expect(r.events.filter((e) => e.type === 'claimed').map((e) => e.step_anchor)).toEqual(['step-1', 'step-2']);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);

    // A restarted run counts the earlier spend: nothing is claimed at all.
    const again = runJsonl(root, ['demo', '--workers', '1', '--agent', 'claude', '--budget-usd', '1'], f.env);
    expect(again.code).toBe(4);
    expect(again.events.filter((e) => e.type === 'claimed')).toEqual([]);
    // Its dry run says so, with the real run's hint, and schedules nothing (docs/run.md §7.2).
    const dryArgs = ['run', 'demo', '--workers', '1', '--agent', 'claude', '--budget-usd', '1', '--dry-run'];
    const dry = tugJson(root, dryArgs, f.env);
    expect(dry.code).toBe(0);
    expect(dry.json).toMatchObject({ waves: [], steps: [], done: ['step-1', 'step-2'] });
    expect(dry.json.warnings).toEqual([
      expect.objectContaining({ code: 'BudgetExhausted', details: expect.objectContaining({ budget_usd: 1 }) }),
    ]);
    const realHint = again.events.at(-1).error.hint;
    expect(realHint).toContain('--budget-usd <more>');
    expect(dry.json.warnings[0].message).toContain(`(${realHint})`);
    const dryText = runCli(dryArgs, { cwd: root, env: f.env });
    expect(dryText.stdout).toMatch(/^nothing to run until the budget is raised \(it is spent\)\n/);
    expect(dryText.stdout).not.toMatch(/wave|implementer/);
    expect(dryText.stderr).toContain(`warning: BudgetExhausted: the budget of`);
    expect(dryText.stderr).toContain(realHint);
    // With a higher budget the plan finishes.
    const more = runJsonl(root, ['demo', '--workers', '1', '--agent', 'claude', '--budget-usd', '5'], f.env);
    expect(more.events.at(-1), more.stderr).toMatchObject({ status: 'ok', steps_completed: ['step-3'] });
    expect(more.events.at(-1).plan_usage).toMatchObject({ cost_usd: 1.75, reports: 3 });
  });

  it('--budget-tokens counts all four kinds of tokens; [run] budget_usd from config', () => {
    const root = runRepo(CHAIN, 'demo', { '.tugtool/config.toml': '[run]\nbudget_usd = 100\n' });
    const f = fakeAgents();
    // step-1 uses 1115 tokens: the budget is reached after it.
    const r = runJsonl(root, ['demo', '--workers', '1', '--agent', 'claude', '--budget-tokens', '1000'], f.env);
    expect(r.code).toBe(4);
    expect(r.events.at(-1)).toMatchObject({ steps_completed: ['step-1'], error: { code: 'BudgetExhausted' } });
    expect(r.events.at(-1).error.details).toMatchObject({ budget_tokens: 1000, budget_usd: 100 });
  });

  it('BudgetExhausted names the totals state show gives once the running steps finished, and those it was judged by', () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two'), step(3, 'Three', { deps: [1, 2] })]));
    // step-1 reports once step-2 is running; step-2 once step-1's report reached the budget (polling the state).
    const impl = nodeImplementer(`
const { execFileSync } = await import('node:child_process');
const show = () => JSON.parse(execFileSync(process.execPath, [${JSON.stringify(CLI)}, 'state', 'show', 'demo', '--json'], { cwd: ${JSON.stringify(root)}, encoding: 'utf8' })).plans[0];
writeFileSync(join(wt, step + '.txt'), step);
if (step === 'step-1') {
  while (show().steps.find((s) => s.anchor === 'step-2').status === 'pending') await sleep(50);
  writeFileSync(process.env.TUG_USAGE_OUT, JSON.stringify({ input_tokens: 3000, output_tokens: 150 }));
} else {
  while ((show().usage?.tokens ?? 0) < 3150) await sleep(50);
  writeFileSync(process.env.TUG_USAGE_OUT, JSON.stringify({ input_tokens: 100, output_tokens: 50 }));
}
`);
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv, '--budget-tokens', '3000']);
    expect(r.code, r.stderr).toBe(4);
    const summary = r.events.at(-1);
    expect(summary).toMatchObject({ error: { code: 'BudgetExhausted' } });
    expect([...summary.steps_completed].sort()).toEqual(['step-1', 'step-2']);
    const { plan } = showSteps(root);
    expect(plan.usage.tokens).toBe(3300);
    // The totals it names are state show's (3,300), with the 3,150 the budget was judged by, formatted as elsewhere.
    expect(summary.error.details).toMatchObject({ usage: { tokens: 3300 }, reached_at: { tokens: 3150 } });
    expect(summary.error.message).toBe(
      'the budget of .tugtool/tugplan-demo.md is spent: 3,300 of 3,000 tokens (reached at 3,150 tokens; the steps running then finished); no new step was claimed',
    );
    expect(r.events.filter((e) => e.type === 'budget_exhausted')).toEqual([
      expect.objectContaining({ usage: expect.objectContaining({ tokens: 3150 }), running: ['step-1', 'step-2'] }),
    ]);
  });

  it('a budget that cannot be measured is one warning, at the first run that reports nothing, not a silent no-op', () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]));
    const impl = nodeImplementer(`writeFileSync(join(wt, step + '.txt'), step);`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--budget-usd', '2']);
    expect(r.events.at(-1)).toMatchObject({ status: 'ok' });
    // Once per run (docs/run.md §7.2), though both steps' runs reported nothing.
    const warnings = r.events.filter((e) => e.type === 'warning');
    expect(warnings.map((w) => w.code)).toEqual(['BudgetUnmeasured']);
    expect(warnings[0].message).toBe(
      'the implementer of step-1 reported no usage: --budget-usd 2 does not count it (see TUG_USAGE_OUT, docs/run.md §7.1)',
    );
  });

  it('a command implementer that reports its usage through TUG_USAGE_OUT leaves the budget measured: no warning', () => {
    const impl = nodeImplementer(`
writeFileSync(join(wt, step + '.txt'), step);
writeFileSync(process.env.TUG_USAGE_OUT, JSON.stringify({ input_tokens: 7, output_tokens: 3, cost_usd: 0.125 }));
`);
    for (const budget of [
      ['--budget-usd', '2'],
      ['--budget-tokens', '1000'],
    ]) {
      const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]));
      const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, ...budget]);
      expect(r.events.at(-1), r.stderr).toMatchObject({ status: 'ok' });
      expect(r.events.filter((e) => e.type === 'warning')).toEqual([]);
      expect(r.stderr).not.toContain('BudgetUnmeasured');
    }
  });

  it('state export → import keeps the usage; an export from before the ledger still imports', () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]));
    const r = runJsonl(root, ['demo', '--workers', '1', '--agent', 'claude'], fakeAgents().env);
    expect(r.events.at(-1)).toMatchObject({ status: 'ok' });
    const before = showSteps(root);
    const dir = tempDir('tugcode-export-');
    const e = tugJson(root, ['state', 'export', 'demo', '--output', join(dir, 'doc.json')]);
    expect(e.json, e.stderr).toMatchObject({ counts: { step_usage: 2 } });
    const doc = JSON.parse(readFileSync(join(dir, 'doc.json'), 'utf8'));
    expect(doc.step_usage.map((u: any) => [u.step_anchor, u.role, u.cost_usd])).toEqual([
      ['step-1', 'implementer', 0.25],
      ['step-2', 'implementer', 0.5],
    ]);
    const i = tugJson(root, ['state', 'import', join(dir, 'doc.json'), '--replace']);
    expect(i.json, i.stderr).toMatchObject({ replaced: true, imported: { step_usage: 2 } });
    const after = showSteps(root);
    expect(after.plan.usage).toEqual(before.plan.usage);
    expect(after.steps['step-2'].usage).toEqual(before.steps['step-2'].usage);
    // The same document without the ledger (as an older tugcode wrote it): imported, no usage.
    const { step_usage: _u, ...old } = doc;
    writeFileSync(join(dir, 'old.json'), JSON.stringify({ ...old, schema_version: 1 }));
    const o = tugJson(root, ['state', 'import', join(dir, 'old.json'), '--replace']);
    expect(o.json, o.stderr).toMatchObject({ replaced: true, imported: { step_usage: 0 } });
    expect(showSteps(root).plan.usage).toBeNull();
    expect(readdirSync(dir).sort()).toEqual(['doc.json', 'old.json']);
  });
});
