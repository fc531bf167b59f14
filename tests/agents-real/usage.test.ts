/**
 * The ledger with the real CLIs (docs/run.md §7.1): `tugcode run --agent claude|codex` against the scripted
 * model server, which counts the tokens it reports in its replies; tugcode's totals — per step, per plan
 * and in the summary — equal what it reported. claude prices its runs itself; codex is priced by
 * `[run.prices]`.
 */
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureAgentClis } from '../helpers/agent-clis.js';
import { agentEnv } from '../helpers/agent-env.js';
import { startModelServer, type Agent, type ModelServer, type Script } from '../helpers/model-server.js';
import { planText, runRepo, startRun, step, tugJson } from '../run/helpers.js';

const PRICES = { input: 2, output: 8, cache_read: 0.5, cache_write: 2.5 };

/** The step's file, then the final message (the prompt names the step and its worktree). */
const script: Script = (t) => {
  const stepAnchor = /^# (step-[\w-]+):/m.exec(t.prompt)?.[1];
  const worktree = /^Worktree: (.+)$/m.exec(t.prompt)?.[1];
  if (!stepAnchor || !worktree) throw new Error(`the prompt lacks step/worktree:\n${t.prompt}`);
  if (t.results.length === 0) return { write: join(worktree, `${stepAnchor}.txt`), content: `${stepAnchor}\n` };
  return { text: `Implemented ${stepAnchor}` };
};

const clis = ensureAgentClis();

describe.skipIf(!clis.ok).each(['claude', 'codex'] as Agent[])('real %s: the ledger', (agent) => {
  let server: ModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("tugcode's totals equal the tokens the model server reported", async () => {
    const config =
      agent === 'codex'
        ? `[run.prices]\n${Object.entries(PRICES)
            .map(([k, v]) => `${k} = ${v}`)
            .join('\n')}\n`
        : '';
    const root = realpathSync(
      runRepo(planText([step(1, 'Base'), step(2, 'Next', { deps: [1] })]), 'demo', {
        '.tugtool/config.toml': `[state]\nmax_attempts = 1\n${config}`,
      }),
    );
    server = await startModelServer(script);
    const { env } = agentEnv(agent, clis.ok ? clis.bin : '', server.url);
    const r = await startRun(root, ['demo', '--agent', agent, '--workers', '1'], env).done;
    const summary = r.events.at(-1);
    expect(summary, r.stdout + r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    const reported = server.reported;
    expect(reported.input_tokens).toBeGreaterThan(0);
    const tokens =
      reported.input_tokens + reported.output_tokens + reported.cache_read_tokens + reported.cache_write_tokens;
    expect(summary.usage).toMatchObject({ ...reported, tokens, reports: 2 });
    const show = tugJson(root, ['state', 'show', 'demo']).json.plans[0];
    expect(show.usage).toEqual(summary.usage);
    const perStep = show.steps.map((s: any) => s.usage.tokens);
    expect(perStep.reduce((a: number, b: number) => a + b, 0)).toBe(tokens);
    if (agent === 'codex') {
      const cost =
        (reported.input_tokens * PRICES.input +
          reported.output_tokens * PRICES.output +
          reported.cache_read_tokens * PRICES.cache_read +
          reported.cache_write_tokens * PRICES.cache_write) /
        1e6;
      expect(summary.usage.cost_usd).toBeCloseTo(cost, 9);
    } else {
      // claude prices its runs itself: the ledger keeps its total_cost_usd.
      expect(summary.usage.cost_usd).toBeGreaterThan(0);
      expect(summary.usage.unpriced).toBe(0);
    }
  });
});

describe.skipIf(!clis.ok)('real claude: an absurd report', () => {
  let server: ModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('a count past the bound counts as the bound (UsageOutOfBounds), so --budget-tokens still stops the run', async () => {
    // docs/run.md §7.1: claude's own result carries the absurd count; the ledger holds it to 10^12.
    const root = realpathSync(
      runRepo(planText([step(1, 'Base'), step(2, 'Next', { deps: [1] })]), 'demo', {
        '.tugtool/config.toml': '[state]\nmax_attempts = 1\n',
      }),
    );
    server = await startModelServer(script, { input_tokens: 1e13 });
    const { env } = agentEnv('claude', clis.ok ? clis.bin : '', server.url);
    const r = await startRun(root, ['demo', '--agent', 'claude', '--workers', '1', '--budget-tokens', '100000'], env)
      .done;
    const summary = r.events.at(-1);
    expect(summary.error, r.stdout + r.stderr).toMatchObject({ code: 'BudgetExhausted' });
    expect(r.events.filter((e) => e.type === 'warning').map((e) => [e.code, e.message])).toEqual([
      [
        'UsageOutOfBounds',
        expect.stringMatching(
          /^step-1 \(implementer\): input_tokens 20,000,000,000,000 counted as 1,000,000,000,000(; cost_usd \S+ counted as 1,000,000,000)? \(past the ledger's bound\)$/,
        ),
      ],
    ]);
    const usage = r.events.filter((e) => e.type === 'usage');
    expect(usage.map((e) => e.step_anchor)).toEqual(['step-1']);
    expect(usage[0].usage.input_tokens).toBe(1e12);
    const show = tugJson(root, ['state', 'show', 'demo']).json.plans[0];
    expect(show.usage.input_tokens).toBe(1e12);
    expect(show.steps.find((s: any) => s.anchor === 'step-2').status).not.toBe('completed');
  });
});

describe.skipIf(!clis.ok)('real claude: a run killed before its result', () => {
  let server: ModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('a stalled claude counts the usage of the model calls it streamed: input and cache whole, no cost', async () => {
    // docs/run.md §7.1: the first call writes the step's file; the second never answers, so the run stalls.
    const root = realpathSync(
      runRepo(planText([step(1, 'Base')]), 'demo', { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' }),
    );
    server = await startModelServer((t) => (t.results.length === 0 ? script(t) : { hang: true }));
    const { env } = agentEnv('claude', clis.ok ? clis.bin : '', server.url);
    const r = await startRun(root, ['demo', '--agent', 'claude', '--workers', '1', '--stall-seconds', '3'], env).done;
    expect(
      r.events.find((e) => e.type === 'attempt_failed'),
      r.stdout + r.stderr,
    ).toMatchObject({
      reason_code: 'Stalled',
    });
    const reported = server.reported;
    expect(reported.input_tokens).toBeGreaterThan(0);
    const usage = r.events.find((e) => e.type === 'usage').usage;
    expect(usage).toMatchObject({
      input_tokens: reported.input_tokens,
      cache_read_tokens: reported.cache_read_tokens,
      cache_write_tokens: reported.cache_write_tokens,
      cost_usd: null,
    });
    // Output as far as claude streamed it before the message was written: counted, never more than reported.
    expect(usage.output_tokens).toBeLessThanOrEqual(reported.output_tokens);
    const show = tugJson(root, ['state', 'show', 'demo']).json.plans[0];
    expect(show.steps[0].usage).toMatchObject({ input_tokens: reported.input_tokens, cost_usd: null });
  });
});
