/**
 * The operations layer is the CLI's engine (issue 11): claim → start → update → complete called
 * in-process through src/ops give the same JSON documents as the same commands run through the CLI,
 * on two identical repositories. One OpsContext serves every call, as in the driver or the MCP server.
 */
import { describe, expect, it } from 'vitest';
import { ok } from '../../src/contract/envelope.js';
import { fixedClock, parseInstant } from '../../src/clock.js';
import { OpsContext, newCall } from '../../src/ops/context.js';
import * as state from '../../src/ops/state-write.js';
import { runJson } from '../helpers/cli.js';
import { planRepo, T0 } from '../gitflow/helpers.js';

describe('operations in-process', () => {
  it('give the same JSON as the CLI for claim → start → update → complete', async () => {
    const viaCli = planRepo();
    const viaOps = planRepo();
    const env = { TUGCODE_NOW: T0 };
    const cli = (args: string[]) => runJson(`state ${args[0]}`, ['state', ...args], { cwd: viaCli, env }).json;
    const fromCli = [
      cli(['init', 'demo']),
      cli(['claim', 'demo', '--worktree', '.']),
      cli(['start', 'demo', 'step-1', '--worktree', '.', '--attempt', '1']),
      cli(['update', 'demo', 'step-1', '--worktree', '.', '--task', '0', 'completed']),
      cli(['complete', 'demo', 'step-1', '--worktree', '.', '--attempt', '1']),
    ];

    const ctx = new OpsContext({ cwd: viaOps, env: { ...process.env, ...env }, clock: fixedClock(parseInstant(T0)!) });
    const run = async <I, O extends object>(
      command: string,
      op: (c: OpsContext, i: I, call: ReturnType<typeof newCall>) => Promise<O>,
      input: I,
    ) => {
      const call = newCall(command);
      const data = await op(ctx, input, call);
      return JSON.parse(JSON.stringify(ok(command, data, call.warnings.items)));
    };
    const owner = { plan: 'demo', step: 'step-1', worktree: '.', attempt: 1 };
    const init = await run('state init', state.stateInit, { plan: 'demo' });
    delete init.gitignore_added; // the CLI shows these lines in its text only
    const fromOps = [
      init,
      await run('state claim', state.stateClaim, { plan: 'demo', worktree: '.' }),
      await run('state start', state.stateStart, owner),
      await run('state update', state.stateUpdate, {
        ...owner,
        items: [{ kind: 'task' as const, ordinal: 0, status: 'completed' as const }],
      }),
      await run('state complete', state.stateComplete, owner),
    ];
    await ctx.close();

    const norm = (docs: unknown[], root: string) => JSON.parse(JSON.stringify(docs).split(root).join('<ROOT>'));
    expect(norm(fromOps, viaOps)).toEqual(norm(fromCli, viaCli));
    expect(fromOps.at(-1)).toMatchObject({ status: 'ok', completed: true, plan_completed: false });
  });
});
