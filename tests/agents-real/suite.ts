/**
 * `tugcode run --agent claude|codex` with the real CLIs (pinned, installed from npm by
 * tests/helpers/agent-clis.ts) against a scripted model server on 127.0.0.1 (tests/helpers/model-server.ts).
 * The server's tool calls are derived from the prompt tugcode gives the agent: its worktree, its step and
 * the literal `tugcode state …` commands it names. One suite per agent (claude.test.ts, codex.test.ts), so
 * the two run side by side.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureAgentClis } from '../helpers/agent-clis.js';
import { agentEnv } from '../helpers/agent-env.js';
import {
  startModelServer,
  type Action,
  type Agent,
  type ModelServer,
  type Script,
  type Turn,
} from '../helpers/model-server.js';
import { running } from '../helpers/proc.js';
import { git, tempDir } from '../helpers/repo.js';
import { planText, runRepo, startRun, step, stepCommits, type RunResult } from '../run/helpers.js';

interface Facts {
  step: string;
  worktree: string;
  /** `<plan> <step> --worktree W --attempt N`, literally as the prompt gives it. */
  owner: string;
}

/** What the prompt says about the step: its anchor, its worktree, the literal owner arguments. */
function fromPrompt(t: Turn): Facts {
  const step = /^# (step-[\w-]+):/m.exec(t.prompt)?.[1];
  const worktree = /^Worktree: (.+)$/m.exec(t.prompt)?.[1];
  const owner = /^\s+tugcode state update (.*) --task ORD completed$/m.exec(t.prompt)?.[1];
  if (!step || !worktree || !owner) throw new Error(`the prompt lacks step/worktree/commands:\n${t.prompt}`);
  return { step, worktree, owner };
}

/** A script: one action per turn, made from the prompt's facts; then the final report. */
function scripted(
  steps: ((p: Facts) => Action)[],
  final = (p: Facts) => `Implemented ${p.step}\n\nChanged ${p.step}.txt`,
): Script {
  return (t) => {
    const p = fromPrompt(t);
    const next = steps[t.results.length];
    return next ? next(p) : { text: final(p) };
  };
}

/** The usual work: the step's file, then the agent's own progress through `tugcode state update`. */
const work = (agent: Agent) => [
  (p: Facts): Action => ({ write: join(p.worktree, `${p.step}.txt`), content: `${p.step} by ${agent}\n` }),
  (p: Facts): Action => ({ bash: `tugcode state update ${p.owner} --task 0 completed` }),
];

function db<T>(root: string, f: (d: Database.Database) => T): T {
  const d = new Database(join(root, '.tugtool', 'state.db'), { readonly: true });
  try {
    return f(d);
  } finally {
    d.close();
  }
}

/** The item updates an agent made itself (not the driver's --complete-remaining), with their actor. */
function agentUpdates(root: string): { step_anchor: string; actor: string }[] {
  return db(root, (d) =>
    (
      d
        .prepare("SELECT step_anchor, actor, details_json FROM events WHERE command = 'state update' ORDER BY id")
        .all() as any[]
    )
      .filter((e) => !JSON.parse(e.details_json).complete_remaining)
      .map((e) => ({ step_anchor: e.step_anchor, actor: e.actor })),
  );
}

function reports(root: string): Record<string, string> {
  return Object.fromEntries(
    db(
      root,
      (d) =>
        d
          .prepare("SELECT step_anchor, summary FROM step_artifacts WHERE kind = 'coder_report' ORDER BY id")
          .all() as any[],
    ).map((a) => [a.step_anchor, a.summary]),
  );
}

const ONE_ATTEMPT = { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' };
/** A checkpoint command that is not read-only (claude would run a read-only one unasked): node. */
const CHECK = {
  'check.mjs':
    "import { existsSync } from 'node:fs';\nconst f = process.argv[2];\nif (!existsSync(f)) { console.error('missing ' + f); process.exit(1); }\nconsole.log('CHECK OK ' + f);\n",
};

export function agentSuite(agent: Agent): void {
  const clis = ensureAgentClis();
  if (!clis.ok) console.warn(`tests/agents-real (${agent}) skipped: ${clis.reason}`);
  let server: ModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** Runs `tugcode run` with the agent against a fresh server playing `script`. */
  async function run(root: string, script: Script, args: string[], setup?: (home: string) => void): Promise<RunResult> {
    server = await startModelServer(script);
    const { env, home } = agentEnv(agent, clis.ok ? clis.bin : '', server.url);
    setup?.(home);
    return startRun(root, ['demo', '--agent', agent, ...args], env).done;
  }

  describe.skipIf(!clis.ok)(`real ${agent}`, () => {
    it('a 4-step diamond with 2 workers: one commit per step, its own state updates land, a login profile resetting PATH changes nothing', async () => {
      const root = realpathSync(
        runRepo(
          planText([
            step(1, 'Base'),
            step(2, 'Left', { deps: [1] }),
            step(3, 'Right', { deps: [1] }),
            step(4, 'Join', { deps: [2, 3] }),
          ]),
          'demo',
          ONE_ATTEMPT,
        ),
      );
      const r = await run(root, scripted(work(agent)), ['--workers', '2'], (home) => {
        // A login shell's profile that resets PATH (codex ran `bash -lc` before allow_login_shell=false).
        for (const f of ['.bash_profile', '.profile']) writeFileSync(join(home, f), 'export PATH=/usr/bin:/bin\n');
      });
      expect(r.events.at(-1), r.stdout + r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
      expect(new Set(stepCommits(root, 'tugplan/demo'))).toEqual(new Set(['step-1', 'step-2', 'step-3', 'step-4']));
      expect(stepCommits(root, 'tugplan/demo')[0]).toBe('step-1');
      expect(stepCommits(root, 'tugplan/demo')[3]).toBe('step-4');
      for (const s of ['step-1', 'step-2', 'step-3', 'step-4'])
        expect(git(root, 'show', `tugplan/demo:${s}.txt`)).toBe(`${s} by ${agent}\n`);
      // Each agent's own `tugcode state update` went through the relay: the event's actor is its worktree.
      const updates = agentUpdates(root);
      expect(updates.map((u) => u.step_anchor).sort()).toEqual(['step-1', 'step-2', 'step-3', 'step-4']);
      for (const u of updates) expect(u.actor).toMatch(new RegExp(`^${root}/\\.tugtree/tugplan__demo--w[12]$`));
      for (const t of server!.turns.filter((x) => x.results.length === 2))
        expect(t.results[1]).not.toMatch(/refused|not found|denied|approval/i);
      expect(reports(root)).toEqual({
        'step-1': 'Implemented step-1',
        'step-2': 'Implemented step-2',
        'step-3': 'Implemented step-3',
        'step-4': 'Implemented step-4',
      });
    });

    it('what it may not do is refused or caught; it runs its checkpoint; its work is not lost', async () => {
      const remote = tempDir('tugcode-remote-');
      git(remote, 'init', '-q', '--bare');
      const root = realpathSync(
        runRepo(planText([step(1, 'Base', { checkpoint: 'node check.mjs step-1.txt' })]), 'demo', {
          // The project's own test runner, allowed for the agent (`./check.mjs`: not the checkpoint's command).
          '.tugtool/config.toml': '[state]\nmax_attempts = 1\n[run]\nagent_allow = ["node ./check.mjs *"]\n',
          ...CHECK,
          // A project settings file that would allow the push (the preset does not load project settings).
          '.claude/settings.json': JSON.stringify({
            permissions: { allow: ['Bash(git push *)', 'Bash(git push)', 'Write(//**)'] },
          }),
        }),
      );
      git(root, 'remote', 'add', 'origin', remote);
      git(root, 'push', '-q', 'origin', 'main');
      const remoteBefore = git(remote, 'for-each-ref');
      const mainBefore = git(root, 'status', '--porcelain', '--untracked-files=all');
      const stray = join(tempDir('tugcode-stray-'), 'from-agent.txt');
      const attempts: ((p: Facts) => Action)[] = [
        (p) => ({ bash: `tugcode state complete ${p.owner} --force "done by the agent"` }),
        () => ({ bash: 'git push origin HEAD:refs/heads/from-agent' }),
        () => ({ write: join(root, 'stray.txt'), content: 'outside\n' }),
        () => ({ write: join(root, '.tugtool', 'evil.md'), content: 'outside\n' }),
        () => ({ write: stray, content: 'outside\n' }),
        ...work(agent),
        () => ({ bash: 'node check.mjs step-1.txt' }),
        () => ({ bash: 'node ./check.mjs step-1.txt' }),
      ];
      const r = await run(root, scripted(attempts), ['--workers', '1'], (home) => {
        // A user settings file that allows the push: the deny rule still wins.
        mkdirSync(join(home, '.claude'), { recursive: true });
        writeFileSync(
          join(home, '.claude', 'settings.json'),
          JSON.stringify({ permissions: { allow: ['Bash(git push *)', 'Bash(git push)', 'Bash(tugcode *)'] } }),
        );
      });
      expect(r.events.at(-1), r.stdout + r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
      const results = server!.turns.at(-1)!.results;
      expect(results, JSON.stringify(results, null, 1)).toHaveLength(attempts.length);
      // state complete: refused (claude's deny rule, or the relay for codex).
      expect(results[0]).toMatch(
        agent === 'claude' ? /denied|requires approval|permission/i : /refused under tugcode run.*state complete/,
      );
      // The push, the writes outside: refused by claude's rules, by codex's sandbox.
      const refusal =
        agent === 'claude' ? /has been denied|you haven't granted it/ : /Read-only file system|remote rejected/;
      for (const i of [1, 2, 3, 4]) expect(results[i]).toMatch(refusal);
      // Its own update and its checkpoint ran.
      expect(results[6]).not.toMatch(/refused|denied|approval/i);
      expect(results[7]).toContain('CHECK OK step-1.txt');
      expect(results[8]).toContain('CHECK OK step-1.txt'); // through [run] agent_allow
      // Nothing outside changed: no OutsideWrite, the main checkout and the remote as before.
      expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
      expect(git(root, 'status', '--porcelain', '--untracked-files=all')).toBe(mainBefore);
      expect(
        existsSync(join(root, 'stray.txt')) || existsSync(join(root, '.tugtool', 'evil.md')) || existsSync(stray),
      ).toBe(false);
      expect(git(remote, 'for-each-ref')).toBe(remoteBefore);
      // The step's work is committed, and the step was completed by the driver (not by the agent).
      expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1']);
      expect(git(root, 'show', 'tugplan/demo:step-1.txt')).toBe(`step-1 by ${agent}\n`);
    });

    it('the tugcode its allow rules run is not its to change: a rewritten launcher never runs', async () => {
      const root = realpathSync(runRepo(planText([step(1, 'Base')]), 'demo', ONE_ATTEMPT));
      const mark = join(tempDir('tugcode-launcher-'), 'payload-ran');
      const payload = `#!/bin/sh\necho "$*" > ${mark}\n`;
      // The launcher first on the agent's PATH, wherever the driver put it; and where it used to be.
      const onPath = () => {
        const logs = join(root, '.tugtool', 'logs', 'demo');
        const d = readdirSync(logs).find((n) => n.startsWith('.agent-bin-'));
        return d ? join(logs, d, 'bin', 'tugcode') : join(logs, 'missing');
      };
      const attempts: ((p: Facts) => Action)[] = [
        () => ({ read: onPath() }),
        () => ({ write: onPath(), content: payload }),
        (p) => ({ read: join(p.worktree, '.tug', 'bin', 'tugcode') }),
        (p) => ({ write: join(p.worktree, '.tug', 'bin', 'tugcode'), content: payload }),
        ...work(agent),
      ];
      const r = await run(root, scripted(attempts), ['--workers', '1']);
      expect(r.events.at(-1), r.stdout + r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
      const results = server!.turns.at(-1)!.results;
      expect(results, JSON.stringify(results, null, 1)).toHaveLength(attempts.length);
      // claude: neither read nor written (a file outside its worktree; its Write wants a Read first); codex: its
      // sandbox's read-only file system.
      if (agent === 'claude') {
        expect(results[0]).toMatch(/haven't granted it/);
        expect(results[1]).toMatch(/haven't granted it|has not been read/);
      } else expect(results[1]).toMatch(/Read-only file system|Permission denied/);
      // Its `tugcode state update` ran tugcode (through the relay), not a payload.
      expect(existsSync(mark)).toBe(false);
      expect(agentUpdates(root).map((u) => u.step_anchor)).toEqual(['step-1']);
      // The launcher's directory went with the agent's run.
      expect(readdirSync(join(root, '.tugtool', 'logs', 'demo')).filter((n) => n.startsWith('.agent-bin-'))).toEqual(
        [],
      );
    });

    it('the relay reads no file for it outside its worktree: a --summary-file elsewhere is refused', async () => {
      const root = realpathSync(runRepo(planText([step(1, 'Base')]), 'demo', ONE_ATTEMPT));
      const secret = join(tempDir('tugcode-secret-'), 'secret.txt');
      writeFileSync(secret, 'TOPSECRET-OUTSIDE\n');
      const attempts: ((p: Facts) => Action)[] = [
        (p) => ({ bash: `tugcode state artifact ${p.owner} --kind note --summary-file ${secret}` }),
        (p) => ({ bash: `tugcode state artifact ${p.owner} --kind note --summary x --content-file ${secret}` }),
        ...work(agent),
      ];
      const r = await run(root, scripted(attempts), ['--workers', '1']);
      expect(r.events.at(-1), r.stdout + r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
      const results = server!.turns.at(-1)!.results;
      expect(results, JSON.stringify(results, null, 1)).toHaveLength(attempts.length);
      for (const i of [0, 1])
        expect(results[i]).toMatch(/refused under tugcode run.*-file must name a file inside the worktree/);
      const all = db(root, (d) => d.prepare('SELECT summary, content FROM step_artifacts').all());
      expect(JSON.stringify(all)).not.toContain('TOPSECRET');
    });

    it('what its commands leave running in a session of their own is ended with it, and the run says so', async () => {
      const secs = `1000.${process.pid}${Date.now() % 100000}`;
      const root = realpathSync(
        runRepo(planText([step(1, 'Base')]), 'demo', {
          '.tugtool/config.toml': '[state]\nmax_attempts = 1\n[run]\nagent_allow = ["sh ./bg.sh"]\n',
          // The project's own script, which leaves a process running (nothing of its own keeps it in the group).
          'bg.sh': `nohup sleep ${secs} > /dev/null 2>&1 &\n`,
        }),
      );
      const attempts: ((p: Facts) => Action)[] = [() => ({ bash: 'sh ./bg.sh' }), ...work(agent)];
      const r = await run(root, scripted(attempts), ['--workers', '1']);
      expect(r.events.at(-1), r.stdout + r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
      const results = server!.turns.at(-1)!.results;
      expect(results[0]).not.toMatch(/denied|approval|haven't granted/);
      expect(running(`sleep ${secs}`)).toEqual([]);
      // claude's Bash tool runs it in a new session, out of the group; codex's sandbox ends it itself.
      const warned = r.events.filter((e) => e.type === 'warning' && e.code === 'ProcessesLeftRunning');
      if (agent === 'claude') expect(warned.map((w) => w.message)).toEqual([expect.stringContaining(`sleep ${secs}`)]);
    });

    it.each([
      [
        'HTTP 500',
        { http: 500, message: 'scripted internal error' } as Action,
        // claude: the result's text (its API error); codex: its last `ERROR:` line (its words for a 5xx).
        agent === 'claude'
          ? /exited 1: claude: API Error: 500 scripted internal error/
          : /exited 1: ERROR: .*high demand/,
      ],
      [
        'overloaded',
        { overloaded: true } as Action,
        agent === 'claude' ? /exited 1: claude: API Error: 529 Overloaded/ : /exited 1: ERROR: .*at capacity/,
      ],
    ])('%s fails the attempt with its reason', async (_what, action, reason) => {
      const root = realpathSync(runRepo(planText([step(1, 'Base')]), 'demo', ONE_ATTEMPT));
      const r = await run(root, () => action, ['--workers', '1']);
      const failed = r.events.filter((e) => e.type === 'attempt_failed');
      expect(failed, r.stdout).toEqual([
        expect.objectContaining({ step_anchor: 'step-1', reason_code: 'ImplementerFailed' }),
      ]);
      expect(failed[0].reason).toMatch(reason);
      expect(failed[0].reason).not.toMatch(/^\S+: the implementer exited \d+: \{/); // not a raw JSON line
      expect(stepCommits(root, 'tugplan/demo')).toEqual([]);
    });

    it('as the resolver: a conflict with an integrated commit is merged in the same attempt through its edit tool', async () => {
      // Two steps at once: step-2 changes the line step-1 changes, and is integrated first (the run's own
      // integration: a commit put on the branch from outside the run would be an OutsideWrite).
      const free = (n: number, title: string, o: Parameters<typeof step>[2] = {}) =>
        step(n, title, o).replace('**Commit:**', '**Depends on:** none\n\n**Commit:**');
      const root = realpathSync(
        runRepo(planText([free(1, 'Base', { checkpoint: 'node check.mjs shared.txt' }), free(2, 'Left')]), 'demo', {
          ...ONE_ATTEMPT,
          ...CHECK,
          'shared.txt': 'top\nmiddle\nbottom\n',
        }),
      );
      // step-1's agent reads the file again (a tool call each turn) until step-2 is on the integration branch.
      const leftIntegrated = () =>
        /Tug-Step: step-2/.test(
          execFileSync('git', ['-C', root, 'log', '--format=%B', 'tugplan/demo'], { encoding: 'utf8' }),
        );
      let step1Wrote = false;
      const isResolver = (t: Turn) => t.prompt.includes('You are resolving a merge conflict');
      const script: Script = (t) => {
        const p = fromPrompt(t);
        const file = join(p.worktree, 'shared.txt');
        if (isResolver(t)) {
          const plan = [
            (): Action => ({ read: file }),
            (): Action => ({ write: file, content: 'top\nmiddle from the left\nmiddle by the agent\nbottom\n' }),
            (): Action => ({ text: 'Merged shared.txt: kept both middle lines' }),
          ];
          return plan[Math.min(t.results.length, plan.length - 1)]!();
        }
        if (p.step === 'step-2') {
          const plan = [
            (): Action => ({ read: file }),
            (): Action => ({ write: file, content: 'top\nmiddle from the left\nbottom\n' }),
            (): Action => ({ text: 'Implemented step-2' }),
          ];
          return plan[Math.min(t.results.length, plan.length - 1)]!();
        }
        // step-1: reads until step-2 is integrated (at most 300 turns), then writes its line and reports.
        if (step1Wrote) return { text: 'Implemented step-1' };
        if (t.results.length < 300 && !leftIntegrated()) return { read: file };
        step1Wrote = true;
        return { write: file, content: 'top\nmiddle by the agent\nbottom\n' };
      };
      const r = await run(root, script, ['--workers', '2']);
      expect(r.events.at(-1), r.stdout + r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
      expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
      expect(r.events.filter((e) => e.type === 'conflict_resolved')).toEqual([
        expect.objectContaining({ step_anchor: 'step-1', files: ['shared.txt'], round: 1 }),
      ]);
      // The resolver's prompt named the file and the integrated step that changed it.
      const prompt = server!.turns.find(isResolver)!.prompt;
      expect(prompt).toContain('- shared.txt');
      expect(prompt).toMatch(/- step-2: .+ \([0-9a-f]{12}\)/);
      // Every tool call went through (the Read before the Write, nothing refused).
      for (const t of server!.turns)
        for (const res of t.results) expect(res).not.toMatch(/refused|denied|not been read/i);
      expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-2', 'step-1']);
      expect(git(root, 'show', 'tugplan/demo:shared.txt')).toBe(
        'top\nmiddle from the left\nmiddle by the agent\nbottom\n',
      );
      const art = db(root, (d) =>
        d.prepare("SELECT summary, content FROM step_artifacts WHERE kind = 'conflict_resolution'").all(),
      );
      expect(art).toEqual([
        { summary: 'round 1: resolved shared.txt', content: 'Merged shared.txt: kept both middle lines' },
      ]);
    });

    it('a hung model fails the attempt with StepTimeout', async () => {
      const root = realpathSync(runRepo(planText([step(1, 'Base')]), 'demo', ONE_ATTEMPT));
      const r = await run(root, () => ({ hang: true }), ['--workers', '1', '--step-timeout', '4']);
      expect(
        r.events.filter((e) => e.type === 'attempt_failed'),
        r.stdout,
      ).toEqual([expect.objectContaining({ step_anchor: 'step-1', reason_code: 'StepTimeout' })]);
    });

    it('no work done: the checkpoint fails and the final message is the coder_report', async () => {
      const root = realpathSync(
        runRepo(planText([step(1, 'Base', { checkpoint: 'node check.mjs step-1.txt' })]), 'demo', {
          // The project's own test runner, allowed for the agent (`./check.mjs`: not the checkpoint's command).
          '.tugtool/config.toml': '[state]\nmax_attempts = 1\n[run]\nagent_allow = ["node ./check.mjs *"]\n',
          ...CHECK,
        }),
      );
      const r = await run(
        root,
        scripted([], () => 'I could not do step-1\n\nNothing changed'),
        ['--workers', '1'],
      );
      const failed = r.events.filter((e) => e.type === 'attempt_failed');
      expect(failed, r.stdout).toEqual([
        expect.objectContaining({ step_anchor: 'step-1', reason_code: 'CheckpointFailed' }),
      ]);
      expect(failed[0].reason).toContain('missing step-1.txt');
      expect(reports(root)['step-1']).toBe('I could not do step-1');
    });
  });
}
