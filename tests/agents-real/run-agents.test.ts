/**
 * `tugcode run --agent claude|codex` with the real CLIs (pinned, installed from npm by
 * tests/helpers/agent-clis.ts) against a scripted model server on 127.0.0.1 (tests/helpers/model-server.ts).
 * The server's tool calls are derived from the prompt tugcode gives the agent: the worktree, the step and
 * the literal `tugcode state …` commands it names.
 */
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureAgentClis } from '../helpers/agent-clis.js';
import { agentEnv } from '../helpers/agent-env.js';
import { startModelServer, type Action, type ModelServer, type Script, type Turn } from '../helpers/model-server.js';
import { git } from '../helpers/repo.js';
import { planText, runRepo, startRun, step, stepCommits } from '../run/helpers.js';

const clis = ensureAgentClis();
if (!clis.ok) console.warn(`tests/agents-real skipped: ${clis.reason}`);

/** What the prompt says about the step: its anchor, its worktree. */
export function fromPrompt(t: Turn): { step: string; worktree: string } {
  const step = /^# (step-[\w-]+):/m.exec(t.prompt)?.[1];
  const worktree = /^Worktree: (.+)$/m.exec(t.prompt)?.[1];
  if (!step || !worktree) throw new Error(`the prompt names no step/worktree:\n${t.prompt.slice(0, 2000)}`);
  return { step, worktree };
}

/** A script: the actions per turn, each made from the prompt's facts; then a final report. */
function scripted(
  steps: ((p: { step: string; worktree: string }, t: Turn) => Action)[],
  final?: (p: { step: string }, t: Turn) => string,
): Script {
  return (t) => {
    const p = fromPrompt(t);
    const next = steps[t.results.length];
    if (next) return next(p, t);
    return { text: final ? final(p, t) : `Implemented ${p.step}\n\nChanged ${p.step}.txt` };
  };
}

function artifacts(root: string): { step_anchor: string; kind: string; summary: string }[] {
  const db = new Database(join(root, '.tugtool', 'state.db'), { readonly: true });
  try {
    return db.prepare('SELECT step_anchor, kind, summary FROM step_artifacts ORDER BY id').all() as never;
  } finally {
    db.close();
  }
}

let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe.skipIf(!clis.ok).each(['claude', 'codex'] as const)('real %s', (agent) => {
  const bin = clis.ok ? clis.bin : '';

  it('implements a two-step plan end to end: one commit per step, the final message is the coder_report', async () => {
    const root = realpathSync(
      runRepo(planText([step(1, 'Base'), step(2, 'Next', { deps: [1] })]), 'demo', {
        '.tugtool/config.toml': '[state]\nmax_attempts = 1\n',
      }),
    );
    server = await startModelServer(
      scripted([(p) => ({ write: join(p.worktree, `${p.step}.txt`), content: `${p.step} by ${agent}\n` })]),
    );
    const { env } = agentEnv(agent, bin, server.url);
    const r = await startRun(root, ['demo', '--workers', '1', '--agent', agent], env).done;
    expect(r.events.at(-1), r.stdout + r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
    expect(git(root, 'show', 'tugplan/demo:step-2.txt')).toBe(`step-2 by ${agent}\n`);
    expect(artifacts(root).filter((a) => a.kind === 'coder_report')).toEqual([
      { step_anchor: 'step-1', kind: 'coder_report', summary: 'Implemented step-1' },
      { step_anchor: 'step-2', kind: 'coder_report', summary: 'Implemented step-2' },
    ]);
  });
});
