/**
 * `tugcode run --review-agent claude|codex` with the real CLIs (tests/helpers/agent-clis.ts) against the
 * scripted model server (tests/helpers/model-server.ts), a model that reviews: it tries to change the
 * worktree and to write the state (refused: a reviewer is read-only, docs/agents.md §1.8), reads the diff
 * with git, and answers a one-line verdict — REVISE in round 1, APPROVE in round 2. The implementer is a
 * script, so the only agent in the run is the reviewer. One suite per agent (claude-review.test.ts,
 * codex-review.test.ts).
 */
import { existsSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureAgentClis } from '../helpers/agent-clis.js';
import { agentEnv } from '../helpers/agent-env.js';
import { startModelServer, type Action, type Agent, type ModelServer, type Turn } from '../helpers/model-server.js';
import { git, tempDir } from '../helpers/repo.js';
import { planText, runRepo, startRun, step, stepCommits } from '../run/helpers.js';

/** What the reviewer's prompt says: the step, the worktree, the round, the git command for the change. */
function fromPrompt(t: Turn): { step: string; worktree: string; round: number; diff: string; note: string | null } {
  const step = /^# (step-[\w-]+):/m.exec(t.prompt)?.[1];
  const worktree = /^Worktree: (.+)$/m.exec(t.prompt)?.[1];
  const round = /review round (\d+) of at most/.exec(t.prompt)?.[1];
  const diff = /read it yourself with `(git diff \S+)`/.exec(t.prompt)?.[1];
  if (!step || !worktree || !round || !diff || !t.prompt.includes('You are the reviewer'))
    throw new Error(`not a reviewer's prompt:\n${t.prompt}`);
  // The note command, as the prompt writes it (claude only: codex's sandbox reaches no state).
  const note = /^ {6}(tugcode state artifact .*)$/m.exec(t.prompt)?.[1] ?? null;
  return { step, worktree, round: Number(round), diff, note };
}

/** A scripted implementer (no agent): `<step>.txt`, `<step> revised` once its brief carries review_issues. */
function implementer(): string {
  const script = join(tempDir('tugcode-impl-'), 'impl.sh');
  writeFileSync(
    script,
    `#!/bin/sh
if grep -q '"review_issues"'; then echo "$TUG_STEP revised" > "$TUG_WORKTREE/$TUG_STEP.txt"
else echo "$TUG_STEP" > "$TUG_WORKTREE/$TUG_STEP.txt"; fi
`,
    { mode: 0o755 },
  );
  return JSON.stringify(script);
}

function verdicts(root: string): { step_anchor: string; summary: string }[] {
  const d = new Database(join(root, '.tugtool', 'state.db'), { readonly: true });
  try {
    return d
      .prepare("SELECT step_anchor, summary FROM step_artifacts WHERE kind = 'reviewer_verdict' ORDER BY id")
      .all() as any[];
  } finally {
    d.close();
  }
}

function notes(root: string): string[] {
  const d = new Database(join(root, '.tugtool', 'state.db'), { readonly: true });
  try {
    return d
      .prepare("SELECT summary FROM step_artifacts WHERE kind = 'note' ORDER BY id")
      .all()
      .map((r: any) => r.summary);
  } finally {
    d.close();
  }
}

const ONE_ATTEMPT = { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' };

export function reviewSuite(agent: Agent): void {
  const clis = ensureAgentClis();
  if (!clis.ok) console.warn(`tests/agents-real (${agent} as reviewer) skipped: ${clis.reason}`);
  let server: ModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  describe.skipIf(!clis.ok)(`real ${agent} as the reviewer`, () => {
    it('cannot change the worktree or the state, reads the diff, and its verdicts gate the step: REVISE, then APPROVE', async () => {
      const root = realpathSync(runRepo(planText([step(1, 'Base')]), 'demo', ONE_ATTEMPT));
      const plan = '.tugtool/tugplan-demo.md';
      const tries = (p: ReturnType<typeof fromPrompt>): Action[] => [
        { write: join(p.worktree, 'reviewer-was-here.txt'), content: 'no\n' },
        { bash: `tugcode state update ${plan} ${p.step} --worktree ${p.worktree} --attempt 1 --task 0 completed` },
        { bash: p.diff },
        // The note command the prompt gives, run as written (with its own text): the relay accepts it.
        ...(p.note ? [{ bash: p.note.replace('what you found', `round ${p.round} noted`) }] : []),
      ];
      const verdict = (p: ReturnType<typeof fromPrompt>) =>
        p.round === 1
          ? `I read the diff.\n{"verdict":"REVISE","summary":"${p.step}.txt says too little","issues":[{"severity":"major","file":"${p.step}.txt","line":1,"message":"say it was revised"}]}`
          : `Fixed.\n{"verdict":"APPROVE","summary":"${p.step} is done","issues":[]}`;
      server = await startModelServer((t) => {
        const p = fromPrompt(t);
        return tries(p)[t.results.length] ?? { text: verdict(p) };
      });
      const { env } = agentEnv(agent, clis.ok ? clis.bin : '', server.url);
      const r = await startRun(root, ['demo', '--implementer', implementer(), '--review-agent', agent], env).done;
      expect(r.events.at(-1), r.stdout + r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
      expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
      expect(r.events.filter((e) => e.type === 'review').map((e) => `${e.round}:${e.verdict}`)).toEqual([
        '1:REVISE',
        '2:APPROVE',
      ]);
      // Two reviewer conversations (one per round), each with its tries and the verdict.
      const last = server.turns.filter((t) => t.results.length === (agent === 'claude' ? 4 : 3));
      expect(last).toHaveLength(2);
      for (const t of last) {
        // The write and the state update were refused; the diff was read.
        expect(t.results[0]).toMatch(agent === 'claude' ? /No such tool available: Write/ : /Read-only file system/);
        expect(t.results[1]).toMatch(
          // codex: its sandbox refuses the launcher's request file (the relay's directory is read-only too).
          agent === 'claude' ? /has been denied/ : /cannot reach the state relay .*read-only file system/i,
        );
        expect(t.results[2]).toMatch(/\+step-1/);
        expect(fromPrompt(t).note === null).toBe(agent === 'codex');
      }
      if (agent === 'claude') expect(notes(root)).toEqual(['round 1 noted', 'round 2 noted']);
      expect(existsSync(join(root, '.tugtree', 'tugplan__demo--w1', 'reviewer-was-here.txt'))).toBe(false);
      // The step's work: one commit with the revision; the verdicts recorded.
      expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1']);
      expect(git(root, 'show', 'tugplan/demo:step-1.txt')).toBe('step-1 revised\n');
      expect(verdicts(root)).toEqual([
        { step_anchor: 'step-1', summary: 'round 1: REVISE: step-1.txt says too little' },
        { step_anchor: 'step-1', summary: 'round 2: APPROVE: step-1 is done' },
      ]);
    });

    it('a final message without a verdict fails the attempt ReviewerFailed', async () => {
      const root = realpathSync(runRepo(planText([step(1, 'Base')]), 'demo', ONE_ATTEMPT));
      server = await startModelServer(() => ({ text: 'Looks good to me.' }));
      const { env } = agentEnv(agent, clis.ok ? clis.bin : '', server.url);
      const r = await startRun(root, ['demo', '--implementer', implementer(), '--review-agent', agent], env).done;
      const failed = r.events.filter((e) => e.type === 'attempt_failed');
      expect(failed, r.stdout + r.stderr).toEqual([
        expect.objectContaining({ step_anchor: 'step-1', reason_code: 'ReviewerFailed' }),
      ]);
      expect(failed[0].reason).toContain('its last line is not JSON: Looks good to me.');
      expect(stepCommits(root, 'tugplan/demo')).toEqual([]);
    });
  });
}
