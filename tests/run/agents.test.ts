/**
 * Agent implementer presets (docs/run.md §2.1): `tugcode run --agent claude|codex` with fake executables of
 * the same name first on PATH. Each fake records its argv, stdin, cwd and TUG_* environment, writes
 * `<TUG_STEP>.txt` in its working directory and prints its final message the way the real CLI does
 * (claude: a JSON result object on stdout; codex: the file named by --output-last-message).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { git, tempDir } from '../helpers/repo.js';
import { agentPrompt } from '../../src/run/agent-prompt.js';
import {
  agentArgv,
  agentCommandLine,
  codexErrorLine,
  coderReport,
  resolveImplementer,
  type AgentName,
} from '../../src/run/agents.js';
import type { StepBrief } from '../../src/run/types.js';
import { ClaudeTranscript } from '../../src/run/usage.js';
import { planText, runJsonl, runRepo, step, stepCommits } from './helpers.js';

const PLAN = planText([step(1, 'Base'), step(2, 'Next', { deps: [1], body: '**References:** [D01] the design' })]);

const FAKE = `#!/usr/bin/env node
const fs = require('node:fs');
const path = require('node:path');
const name = path.basename(process.argv[1]);
const argv = process.argv.slice(2);
const stdin = fs.readFileSync(0, 'utf8');
const step = process.env.TUG_STEP;
const rec = { argv, stdin, cwd: process.cwd(), env: {} };
for (const k of ['TUG_STEP', 'TUG_WORKTREE', 'TUG_ATTEMPT', 'TUG_PLAN', 'TUG_STEP_JSON']) rec.env[k] = process.env[k];
fs.writeFileSync(path.join(process.env.FAKE_REC, name + '-' + step + '-' + process.env.TUG_ATTEMPT + '.json'), JSON.stringify(rec));
if (process.env.FAKE_FAIL) { console.error(name + ': model overloaded'); process.exit(3); }
if (process.env.FAKE_PLANT && step === 'step-1') {
  // Links to the outside where the driver writes and removes (docs/agents.md §1.4, §1.5).
  const out = process.env.FAKE_PLANT;
  const relay = process.env.TUG_STATE_RELAY;
  fs.symlinkSync(path.join(out, 'victim.txt'), path.join(relay, '000-x.res.tmp'));
  fs.writeFileSync(path.join(relay, '000-x.req'), JSON.stringify({ argv: ['state', 'heartbeat'], cwd: process.cwd() }));
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let end = Date.now() + 20000; !fs.existsSync(path.join(relay, '000-x.res')) && Date.now() < end; ) Atomics.wait(pause, 0, 0, 20);
  fs.mkdirSync('.tug/bin', { recursive: true });
  fs.symlinkSync(path.join(out, 'victim.txt'), '.tug/bin/tugcode');
  fs.renameSync('.tug', '.tug-old');
  fs.rmSync('.tug-old', { recursive: true });
  fs.symlinkSync(out, '.tug');
}
if (process.env.FAKE_LAUNCHER) {
  // An unconfined agent rewrites the tugcode first on its PATH (docs/agents.md §1.2).
  const bin = process.env.PATH.split(':')[0];
  fs.chmodSync(bin, 0o755);
  fs.writeFileSync(path.join(bin, 'tugcode'), '#!/bin/sh\\necho payload\\n');
}
fs.writeFileSync(path.join(process.cwd(), step + '.txt'), step + ' by ' + name + '\\n');
const message = 'Implemented ' + step + ' with ' + name + '\\n\\nChanged ' + step + '.txt';
console.error(name + ': working');
if (name === 'claude') {
  console.log(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: message, session_id: 'x' }));
} else {
  const i = argv.indexOf('--output-last-message');
  fs.writeFileSync(argv[i + 1], message);
  console.log('codex: done');
}
`;

/** A dir holding the fakes `claude` and `codex`, and a dir where they record what they received. */
function fakes(): { bin: string; rec: string; env: Record<string, string> } {
  const dir = tempDir('tugcode-agents-');
  const bin = join(dir, 'bin');
  const rec = join(dir, 'rec');
  mkdirSync(bin);
  mkdirSync(rec);
  for (const n of ['claude', 'codex']) {
    writeFileSync(join(bin, n), FAKE);
    chmodSync(join(bin, n), 0o755);
  }
  return { bin, rec, env: { PATH: `${bin}:${process.env.PATH ?? ''}`, FAKE_REC: rec } };
}

/** The CLI with one JSON document (not JSON Lines) on stdout. */
function tugcode(
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Rec {
  argv: string[];
  stdin: string;
  cwd: string;
  env: Record<string, string>;
}

function recorded(rec: string, agent: string, stepAnchor: string, attempt = 1): Rec {
  return JSON.parse(readFileSync(join(rec, `${agent}-${stepAnchor}-${attempt}.json`), 'utf8'));
}

function artifacts(root: string): { step_anchor: string; kind: string; summary: string; content: string }[] {
  const db = new Database(join(root, '.tugtool', 'state.db'), { readonly: true });
  try {
    return db.prepare('SELECT step_anchor, kind, summary, content FROM step_artifacts ORDER BY id').all() as never;
  } finally {
    db.close();
  }
}

/** The argv a preset must run, written out literally (the README documents the same line). */
function expectedArgv(agent: AgentName, root: string, stepAnchor: string): string[] {
  const wt = join(root, '.tugtree', 'tugplan__demo--w1');
  if (agent === 'claude') {
    const owner = `.tugtool/tugplan-demo.md ${stepAnchor} --worktree ${wt} --attempt 1`;
    return [
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'acceptEdits',
      '--setting-sources',
      'user',
      '--allowedTools',
      ...['update', 'artifact', 'heartbeat'].flatMap((c) => [
        `Bash(tugcode state ${c} ${owner})`,
        `Bash(tugcode state ${c} ${owner} *)`,
      ]),
      '--disallowedTools',
      ...['push', 'commit', 'rebase', 'reset', 'checkout', 'switch', 'merge', 'worktree'].flatMap((g) => [
        `Bash(git ${g})`,
        `Bash(git ${g} *)`,
      ]),
      ...['complete', 'fail', 'reset', 'release', 'import', 'init', 'prune', 'claim', 'start', 'decide'].flatMap(
        (c) => [`Bash(tugcode state ${c})`, `Bash(tugcode state ${c} *)`],
      ),
    ];
  }
  return [
    'exec',
    '--json',
    '--cd',
    wt,
    '--sandbox',
    'workspace-write',
    '--ignore-rules',
    '-c',
    'approval_policy="never"',
    '-c',
    'allow_login_shell=false',
    '-c',
    'sandbox_workspace_write.writable_roots=[]',
    '-c',
    'sandbox_workspace_write.exclude_tmpdir_env_var=true',
    '-c',
    'sandbox_workspace_write.exclude_slash_tmp=true',
    '-c',
    'sandbox_workspace_write.network_access=false',
    '--output-last-message',
    join(root, '.tugtool', 'logs', 'demo', `${stepAnchor}-attempt1.final.md`),
    '-',
  ];
}

describe.each(['claude', 'codex'] as const)('tugcode run --agent %s', (agent) => {
  it('runs the preset in each worktree with the prompt on stdin, commits its edit, records its final message', () => {
    const root = realpathSync(runRepo(PLAN));
    const f = fakes();
    const r = runJsonl(root, ['demo', '--workers', '1', '--agent', agent], f.env);
    const summary = r.events.at(-1);
    expect(summary, r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(r.code).toBe(0);

    const wt = join(root, '.tugtree', 'tugplan__demo--w1');
    for (const s of ['step-1', 'step-2']) {
      const got = recorded(f.rec, agent, s);
      expect(got.argv).toEqual(expectedArgv(agent, root, s));
      expect([agent, ...got.argv]).toEqual(
        agentArgv(agent, {
          owner: { plan: '.tugtool/tugplan-demo.md', step: s, worktree: wt, attempt: 1 },
          lastMessage: join(root, '.tugtool', 'logs', 'demo', `${s}-attempt1.final.md`),
          checkpoints: [],
          allow: [],
        }),
      );
      expect(got.cwd).toBe(wt);
      expect(got.env).toMatchObject({
        TUG_STEP: s,
        TUG_WORKTREE: wt,
        TUG_ATTEMPT: '1',
        TUG_PLAN: '.tugtool/tugplan-demo.md',
      });
      // The prompt: title, the task list, the confinement rules, the state commands it may call.
      expect(got.stdin).toContain(`# ${s}: ${s === 'step-1' ? 'Base' : 'Next'}`);
      expect(got.stdin).toContain(`- [ ] task 0 (open): write ${s === 'step-1' ? 'base' : 'next'}`);
      expect(got.stdin).toContain(`Edit only files inside the worktree ${wt}`);
      expect(got.stdin).toContain('never call `git push`');
      // Literal values only: agent permission systems refuse commands with shell expansions (docs/agents.md §1.1).
      expect(got.stdin).toContain(
        `tugcode state update .tugtool/tugplan-demo.md ${s} --worktree ${wt} --attempt 1 --task ORD completed`,
      );
      expect(got.stdin).not.toContain('$TUG_');
      expect(got.stdin).toContain(`The full brief is JSON in the file ${got.env.TUG_STEP_JSON}.`);
      // The brief file is still there for the agent, as for any implementer.
      expect(JSON.parse(readFileSync(got.env.TUG_STEP_JSON!, 'utf8'))).toMatchObject({ step_anchor: s });
    }
    expect(recorded(f.rec, agent, 'step-2').stdin).toContain('## References\n\n[D01] the design');
    expect(recorded(f.rec, agent, 'step-2').stdin).toContain('Depends on: step-1');

    // The edits are committed on the integration branch, one commit per step.
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
    expect(git(root, 'show', 'tugplan/demo:step-1.txt')).toBe(`step-1 by ${agent}\n`);
    expect(git(root, 'show', 'tugplan/demo:step-2.txt')).toBe(`step-2 by ${agent}\n`);

    // The final message is each step's coder_report artifact.
    expect(artifacts(root).filter((a) => a.kind === 'coder_report')).toEqual(
      ['step-1', 'step-2'].map((s) => ({
        step_anchor: s,
        kind: 'coder_report',
        summary: `Implemented ${s} with ${agent}`,
        content: `Implemented ${s} with ${agent}\n\nChanged ${s}.txt`,
      })),
    );
  });

  it('a launcher changed while the agent ran fails the attempt, though the agent exited 0', () => {
    const root = realpathSync(runRepo(PLAN, 'demo', { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' }));
    const f = fakes();
    const r = runJsonl(root, ['demo', '--workers', '1', '--agent', agent], { ...f.env, FAKE_LAUNCHER: '1' });
    expect(r.code, r.stderr).toBe(4);
    expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([
      expect.objectContaining({
        step_anchor: 'step-1',
        reason_code: 'ImplementerFailed',
        reason: expect.stringMatching(/the tugcode launcher was changed while the agent ran: .*\.agent-bin-/),
      }),
    ]);
    expect(stepCommits(root, 'tugplan/demo')).toEqual([]);
    // The launcher's directory is the driver's, outside the worktree, and gone after the run.
    const logs = join(root, '.tugtool', 'logs', 'demo');
    expect(readdirSync(logs).filter((n) => n.startsWith('.agent-bin-'))).toEqual([]);
  });

  it('links an agent plants in its .tug/ are never followed: nothing outside is written or removed', () => {
    const root = realpathSync(runRepo(PLAN));
    const f = fakes();
    const out = tempDir('tugcode-outside-');
    mkdirSync(join(out, 'relay'));
    mkdirSync(join(out, 'bin'));
    for (const p of ['victim.txt', 'relay/important.txt', 'bin/tugcode']) writeFileSync(join(out, p), 'precious\n');
    const r = runJsonl(root, ['demo', '--workers', '1', '--agent', agent], { ...f.env, FAKE_PLANT: out });
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
    // The reply was not written through the link, the relay not removed through `.tug`, no launcher written.
    for (const p of ['victim.txt', 'relay/important.txt', 'bin/tugcode'])
      expect(readFileSync(join(out, p), 'utf8'), p).toBe('precious\n');
    expect(readdirSync(out).sort()).toEqual(['bin', 'relay', 'victim.txt']);
    // step-2's agent ran in the same worktree, its space made anew.
    expect(recorded(f.rec, agent, 'step-2').cwd).toBe(join(root, '.tugtree', 'tugplan__demo--w1'));
  });

  it('a fake that exits non-zero fails the attempt with ImplementerFailed and commits nothing', () => {
    const root = realpathSync(runRepo(PLAN, 'demo', { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' }));
    const f = fakes();
    const r = runJsonl(root, ['demo', '--workers', '1', '--agent', agent], { ...f.env, FAKE_FAIL: '1' });
    expect(r.code, r.stderr).toBe(4);
    const failures = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failures).toEqual([
      expect.objectContaining({
        step_anchor: 'step-1',
        attempt: 1,
        reason_code: 'ImplementerFailed',
        reason: expect.stringContaining('exited 3'),
      }),
    ]);
    expect(r.events.at(-1)).toMatchObject({ status: 'error', error: { code: 'PlanIncomplete' } });
    expect(stepCommits(root, 'tugplan/demo')).toEqual([]);
    // The failure's output tail is the step's coder_report (docs/run.md §1 item 4.9).
    const reports = artifacts(root).filter((a) => a.kind === 'coder_report');
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ step_anchor: 'step-1', summary: `${agent}: model overloaded` });
    expect(readdirSync(f.rec)).toEqual([`${agent}-step-1-1.json`]);
  });
});

describe('choosing the agent', () => {
  it('[run] agent in config.toml picks the preset; --implementer on the command line wins over it', () => {
    const root = realpathSync(runRepo(PLAN, 'demo', { '.tugtool/config.toml': '[run]\nagent = "codex"\n' }));
    const f = fakes();
    const r = runJsonl(root, ['demo', '--workers', '1'], f.env);
    expect(r.events.at(-1), r.stderr).toMatchObject({ status: 'ok' });
    expect(readdirSync(f.rec).sort()).toEqual(['codex-step-1-1.json', 'codex-step-2-1.json']);
  });

  it('--implementer and --agent together: InvalidArgument, exit 2, nothing runs', () => {
    const root = realpathSync(runRepo(PLAN));
    const f = fakes();
    const r = runJsonl(root, ['demo', '--agent', 'claude', '--implementer', 'true'], f.env);
    expect(r.code).toBe(2);
    expect(r.events.at(-1)).toMatchObject({ type: 'summary', status: 'error', error: { code: 'InvalidArgument' } });
    expect(readdirSync(f.rec)).toEqual([]);
  });

  it('an unknown agent is refused by the flag', () => {
    const root = realpathSync(runRepo(PLAN));
    const r = tugcode(root, ['run', 'demo', '--agent', 'gemini', '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'InvalidArgument' } });
    expect(r.stdout).toContain('Allowed choices are claude, codex');
  });

  it('resolveImplementer: flag beats config, both flags or both config keys are refused', () => {
    const none = { implementer: '', agent: '' };
    expect(resolveImplementer({ agent: 'claude' }, { implementer: 'x', agent: '' })).toEqual({
      implementer: null,
      agent: 'claude',
    });
    expect(resolveImplementer({ implementer: 'x' }, { implementer: '', agent: 'codex' })).toEqual({
      implementer: 'x',
      agent: null,
    });
    expect(resolveImplementer({}, { implementer: '', agent: 'codex' })).toEqual({ implementer: null, agent: 'codex' });
    expect(resolveImplementer({}, none)).toEqual({ implementer: null, agent: null });
    expect(() => resolveImplementer({ implementer: 'x', agent: 'codex' }, none)).toThrow(/cannot be used together/);
    expect(() => resolveImplementer({}, { implementer: 'x', agent: 'codex' })).toThrow(/both run.implementer/);
  });

  it('--dry-run shows the preset command line as the implementer', () => {
    const root = realpathSync(runRepo(PLAN));
    // The preset's CLI must be installed (on PATH) for the dry run too (docs/run.md §2).
    const r = tugcode(root, ['run', 'demo', '--agent', 'claude', '--dry-run', '--json'], fakes().env);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.steps[0].implementer).toBe(agentCommandLine('claude'));
  });
});

describe('the README documents the exact command lines', () => {
  it.each(['claude', 'codex'] as const)('%s', (agent) => {
    const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
    expect(readme).toContain(agentCommandLine(agent));
  });
});

describe('prompt and final message', () => {
  const brief: StepBrief = {
    plan_path: '.tugtool/tugplan-demo.md',
    step_anchor: 'step-2',
    title: 'Document it',
    attempt: 3,
    commit_message: 'feat: document it',
    references: '[D01]',
    depends_on: ['step-1'],
    items: [
      { kind: 'task', ordinal: 0, text: 'Write the docs', status: 'completed' },
      { kind: 'task', ordinal: 1, text: 'Link them', status: 'open' },
      { kind: 'test', ordinal: 0, text: 'Links resolve', status: 'deferred' },
      { kind: 'checkpoint', ordinal: 0, text: '`npm test`', status: 'open' },
    ],
    substeps: [
      {
        plan_path: '.tugtool/tugplan-demo.md',
        step_anchor: 'step-2-1',
        title: 'Sub',
        attempt: 3,
        commit_message: null,
        references: null,
        depends_on: [],
        items: [],
        substeps: [],
        previous_failures: [],
      },
    ],
    previous_failures: [{ attempt: 2, reason: 'CheckpointFailed: step-2: checkpoint `npm test` exited 1' }],
  };

  it('holds the task list with kind, ordinal and status, the substeps and the previous failures', () => {
    const p = agentPrompt(brief, { worktree: '/r/.tugtree/w1', briefPath: '/r/.tugtool/logs/demo/step-2-brief3.json' });
    expect(p).toContain(
      [
        '- [x] task 0 (completed): Write the docs',
        '- [ ] task 1 (open): Link them',
        '- [-] test 0 (deferred): Links resolve',
        '- [ ] checkpoint 0 (open): `npm test`',
      ].join('\n'),
    );
    expect(p).toContain('Plan: .tugtool/tugplan-demo.md (step step-2, attempt 3)');
    expect(p).toContain('- step-2-1: Sub');
    expect(p).toContain('- attempt 2: CheckpointFailed: step-2: checkpoint `npm test` exited 1');
    expect(p).toContain('Commit message (the driver commits for you): feat: document it');
    expect(p).toContain('Do not commit');
  });

  it("reads claude's stream: a readable log, the result's message, is_error and usage", () => {
    const t = new ClaudeTranscript();
    const call = (id: string, content: object[], output: number) =>
      JSON.stringify({
        type: 'assistant',
        message: {
          id,
          content,
          usage: {
            input_tokens: 10,
            output_tokens: output,
            cache_read_input_tokens: 4,
            cache_creation_input_tokens: 3,
          },
        },
      });
    const log = [
      'warming up',
      JSON.stringify({ type: 'system', subtype: 'init', session_id: 's-1', model: 'm' }),
      call('msg_1', [{ type: 'tool_use', name: 'Write', input: { file_path: 'a.txt' } }], 1),
      JSON.stringify({ type: 'user', message: { content: [{ type: 'tool_result', content: 'File created' }] } }),
      call('msg_2', [{ type: 'text', text: 'Done.' }], 1),
    ].map((l) => t.line(l));
    expect(log.join('')).toBe(
      'warming up\nclaude session s-1 (m)\ntool Write\n{"file_path":"a.txt"}\ntool result\nFile created\nclaude\nDone.\n',
    );
    // Before the result (a run killed then): each model call's streamed usage, no cost.
    expect(t.result()).toBeNull();
    expect(t.usage()).toEqual({
      input_tokens: 20,
      output_tokens: 2,
      cache_read_tokens: 8,
      cache_write_tokens: 6,
      cost_usd: null,
    });
    // A call streamed again (the same message id) counts once, as its latest usage.
    t.line(call('msg_2', [], 5));
    expect(t.usage()).toMatchObject({ input_tokens: 20, output_tokens: 6 });
    // The result: its totals and cost win.
    const result = {
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'Done.\nDetails',
      total_cost_usd: 0.5,
      usage: { input_tokens: 20, output_tokens: 15, cache_read_input_tokens: 8, cache_creation_input_tokens: 6 },
    };
    expect(t.line(JSON.stringify(result))).toBe('result success: 49 tokens, $0.5\n');
    expect(t.result()).toEqual({
      message: 'Done.\nDetails',
      is_error: false,
      subtype: 'success',
      usage: { input_tokens: 20, output_tokens: 15, cache_read_tokens: 8, cache_write_tokens: 6, cost_usd: 0.5 },
      usage_warning: null,
    });
    const failed = new ClaudeTranscript();
    failed.line('{"type":"result","subtype":"error_max_turns","is_error":true}');
    expect(failed.result()).toEqual({
      message: null,
      is_error: true,
      subtype: 'error_max_turns',
      usage: null,
      usage_warning: null,
    });
    expect(failed.usage()).toBeNull();
    // A long run: every call counted, however many (the old ones summed, not kept one by one).
    const long = new ClaudeTranscript();
    for (let i = 0; i < 500; i++) long.line(call(`m${i}`, [], 2));
    expect(long.usage()).toEqual({
      input_tokens: 5000,
      output_tokens: 1000,
      cache_read_tokens: 2000,
      cache_write_tokens: 1500,
      cost_usd: null,
    });
    const none = new ClaudeTranscript();
    expect(none.line('plain text')).toBe('plain text\n');
    expect(none.line('{not json')).toBe('{not json\n');
    expect(none.result()).toBeNull();
  });

  it("codex's failure reason is its last ERROR: line, not a command's output nor the token count", () => {
    const tail = [
      'exec',
      "error: cannot lock ref 'refs/heads/x'",
      'ERROR: stream disconnected',
      'ERROR: Selected model is at capacity. Please try a different model.',
      'tokens used',
      '15',
    ].join('\n');
    expect(codexErrorLine(tail)).toBe('ERROR: Selected model is at capacity. Please try a different model.');
    expect(codexErrorLine("error: cannot lock ref 'x'\ndone")).toBeNull();
  });

  it('coder_report: the first non-empty line is the summary, the whole message the content', () => {
    expect(coderReport({ final_message: '\n  Did it  \nmore\n' })).toEqual({
      summary: 'Did it',
      content: 'Did it  \nmore',
    });
    expect(coderReport({ final_message: '  \n' })).toBeNull();
    expect(coderReport({ final_message: null })).toBeNull();
  });
});
