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

interface Facts {
  step: string;
  worktree: string;
  /** `tugcode state update <plan> <step> --worktree W --attempt N` as the prompt gives it. */
  update: string;
  /** The same owner arguments after `tugcode state <cmd>`. */
  owner: string;
}

/** What the prompt says about the step: its anchor, its worktree, the literal state commands. */
function fromPrompt(t: Turn): Facts {
  const step = /^# (step-[\w-]+):/m.exec(t.prompt)?.[1];
  const worktree = /^Worktree: (.+)$/m.exec(t.prompt)?.[1];
  const update = /^\s+(tugcode state update .*) --task ORD completed$/m.exec(t.prompt)?.[1];
  if (!step || !worktree || !update) throw new Error(`the prompt lacks step/worktree/commands:\n${t.prompt}`);
  return { step, worktree, update, owner: update.slice('tugcode state update '.length) };
}

/** A script: the actions per turn, each made from the prompt's facts; then a final report. */
function scripted(
  steps: ((p: Facts, t: Turn) => Action)[],
  final?: (p: Facts, t: Turn) => string,
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

/** The item updates made with `state update` by a worktree (not the driver's --complete-remaining). */
function updatesBy(root: string): { step_anchor: string; actor: string }[] {
  const db = new Database(join(root, '.tugtool', 'state.db'), { readonly: true });
  try {
    return db
      .prepare("SELECT step_anchor, actor, details_json FROM events WHERE command = 'state update' ORDER BY id")
      .all()
      .filter((e: any) => !JSON.parse(e.details_json).complete_remaining)
      .map((e: any) => ({ step_anchor: e.step_anchor, actor: e.actor }));
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
      scripted([
        (p) => ({ write: join(p.worktree, `${p.step}.txt`), content: `${p.step} by ${agent}\n` }),
        (p) => ({ bash: `${p.update} --task 0 completed` }),
      ]),
    );
    const { env } = agentEnv(agent, bin, server.url);
    const r = await startRun(root, ['demo', '--workers', '1', '--agent', agent], env).done;
    expect(r.events.at(-1), r.stdout + r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
    expect(git(root, 'show', 'tugplan/demo:step-2.txt')).toBe(`step-2 by ${agent}\n`);
    // The agent's own `tugcode state update` went through (via the driver's relay): its tool result is the
    // command's success, and the item's update event names the worktree as the actor.
    const results = server.turns.filter((t) => t.results.length === 2).map((t) => t.results[1]);
    expect(results, JSON.stringify(results)).toHaveLength(2);
    for (const r of results) expect(r).toMatch(/updated|task 0/i);
    expect(updatesBy(root)).toEqual([
      { step_anchor: 'step-1', actor: join(root, '.tugtree', 'tugplan__demo--w1') },
      { step_anchor: 'step-2', actor: join(root, '.tugtree', 'tugplan__demo--w1') },
    ]);
    expect(artifacts(root).filter((a) => a.kind === 'coder_report')).toEqual([
      { step_anchor: 'step-1', kind: 'coder_report', summary: 'Implemented step-1' },
      { step_anchor: 'step-2', kind: 'coder_report', summary: 'Implemented step-2' },
    ]);
  });
});
