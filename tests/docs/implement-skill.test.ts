/**
 * skills/implement/SKILL.md §A and agents/committer.md, followed as written by two orchestrators in parallel:
 * their command lines (placeholders filled in) run through a shell with `tugcode` being the built CLI. The
 * second orchestrator's worktree (`--new`) must get step-1's work through the plan's integration branch
 * (`integration_tip`), and both steps land there, one commit each.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shellArg } from '../../src/util/shell-arg.js';
import { CLI, ROOT } from '../helpers/cli.js';
import { git, tempDir, writeFiles } from '../helpers/repo.js';
import { planRepo } from '../gitflow/helpers.js';
import { codeOf } from './extract.js';

/** The one command line of `file`'s fenced blocks that starts with `prefix` (`\` continuations joined). */
function commandOf(file: string, prefix: string): string {
  const lines = codeOf(join(ROOT, file), file)
    .filter((c) => !c.inline)
    .flatMap((c) => c.text.replace(/\\\n\s*/g, '').split('\n'))
    .map((l) => l.trim())
    .filter((l) => l.startsWith(prefix));
  expect(lines, `${file}: one \`${prefix}…\` line`).toHaveLength(1);
  return lines[0]!;
}

/** The one fenced block of `file` that holds a line starting with `prefix`, as written. */
function blockOf(file: string, prefix: string): string {
  const blocks = codeOf(join(ROOT, file), file).filter(
    (c) => !c.inline && c.text.split('\n').some((l) => l.trim().startsWith(prefix)),
  );
  expect(blocks, `${file}: one block with \`${prefix}…\``).toHaveLength(1);
  return blocks[0]!.text;
}

/** The line with its placeholders (whole words) replaced. */
function fill(line: string, values: Record<string, string>): string {
  return line
    .split(' ')
    .map((w) => (w in values ? shellArg(values[w]!) : w))
    .join(' ');
}

/** Runs a command line as the orchestrator would: exit 0, and a tugcode call's JSON stdout. */
function sh(command: string, cwd: string, env: Record<string, string>, input = ''): Record<string, any> {
  const r = spawnSync('sh', ['-c', `tugcode() { node ${shellArg(CLI)} "$@"; }\n${command}`], {
    cwd,
    input,
    encoding: 'utf8',
    env: { ...process.env, NODE_ENV: 'test', NO_COLOR: '1', ...env },
  });
  expect(r.status, `${command}\n${r.stdout}${r.stderr}`).toBe(0);
  return command.startsWith('git ') ? {} : JSON.parse(r.stdout);
}

const SKILL = 'skills/implement/SKILL.md';
const COMMITTER = 'agents/committer.md';
const PLAN = '.tugtool/tugplan-demo.md';

describe('skills/implement §A followed by two orchestrators', () => {
  it('the second (`worktree create --new`) builds on the first one’s integrated step; both land on tugplan/<slug>', () => {
    const root = planRepo();
    const envA = { TUGCODE_NOW: '2026-03-01T10:00:00.000Z' };
    const envB = { TUGCODE_NOW: '2026-03-01T10:01:00.000Z' };
    const create = commandOf(SKILL, 'tugcode worktree create');
    const claim = commandOf(SKILL, 'tugcode state claim');
    const reset = commandOf(SKILL, 'git -C W reset --hard');
    const start = commandOf(SKILL, 'tugcode state start');
    const skillCommit = commandOf(SKILL, 'tugcode commit');
    // The committer's whole script: its message and summary go through files of its own temp directory.
    const committerScript = blockOf(COMMITTER, 'tugcode commit');
    expect(committerScript).not.toMatch(/\/tmp\//);
    // The checklist update without deferrals is given inline in the prose.
    const update = /`(tugcode state update <plan> S --worktree W --attempt N --complete-remaining --json)`/.exec(
      readFileSync(join(ROOT, SKILL), 'utf8'),
    )?.[1];
    expect(update).toBeDefined();

    const a = sh(fill(create, { '<plan>': PLAN }), root, envA).worktree_path as string;
    expect(create).toContain('--reuse');
    const b = sh(fill(create.replace('--reuse', '--new'), { '<plan>': PLAN }), root, envB).worktree_path as string;
    expect(b).not.toBe(a);

    /** Claim, reset to the integration tip when there is one, start, work, tick the items. */
    const workOn = (W: string, env: Record<string, string>, file: string) => {
      const c = sh(fill(claim, { '<plan>': PLAN, W }), root, env);
      expect(c.claimed, JSON.stringify(c)).toBe(true);
      if (c.integration_tip !== null) {
        expect(git(W, 'status', '--porcelain')).toBe('');
        sh(fill(reset, { W, '<integration_tip>': c.integration_tip }), root, env);
      }
      const v = { '<plan>': PLAN, W, S: c.step_anchor as string, N: String(c.attempt) };
      sh(fill(start, v), root, env);
      writeFiles(W, { [file]: `${file}\n` });
      sh(fill(update!, v), root, env);
      return { v, claim: c };
    };

    // A: step-1, committed with the skill's command (the message on stdin).
    const s1 = workOn(a, envA, 'alpha.txt');
    expect(s1.v.S).toBe('step-1');
    const c1 = sh(fill(skillCommit, s1.v), root, envA, 'feat: alpha');
    expect(c1).toMatchObject({ committed: true, integrated: true, state_updated: true });
    expect(c1.integration_branch).toBe('tugplan/demo');

    // B: step-2 starts from the integration tip, so it has step-1's work; committed by the committer agent.
    const s2 = workOn(b, envB, 'beta.txt');
    expect(s2.v.S).toBe('step-2');
    expect(s2.claim.integration_tip).toBe(c1.commit_hash);
    expect(existsSync(join(b, 'alpha.txt'))).toBe(true);
    // A message and summary with what a shell would expand or choke on, put in as they are.
    const message = 'feat: beta\n\nBeta\'s "$HOME" `id` \\ $(true) line.';
    const summary = 'Added beta ($PATH, "quoted", it\'s fine).';
    const script = committerScript
      .split('\n')
      .map((l) => (l === '<message>' ? message : l === '<summary>' ? summary : l))
      .join('\n');
    // Its own temp directory (TMPDIR), empty again once the script ended.
    const tmp = tempDir('tug-committer-');
    const c2 = sh(
      fill(script, {
        '<worktree_path>': b,
        '<plan_path>': PLAN,
        '<step_anchor>': s2.v.S,
        '<attempt>': s2.v.N,
      }),
      root,
      { ...envB, TMPDIR: tmp },
    );
    expect(c2).toMatchObject({ committed: true, integrated: true, state_updated: true, plan_completed: true });
    // (The CLI keeps its compile cache there too: only mktemp's `tmp.*` directories are the script's.)
    expect(readdirSync(tmp).filter((f) => f.startsWith('tmp.'))).toEqual([]);
    expect(git(root, 'log', '-1', '--format=%B', c2.commit_hash).trimEnd()).toMatch(
      new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n\n`),
    );
    // The summary is the implementation-log entry's, committed with the step.
    expect(git(root, 'show', '--format=', c2.commit_hash)).toContain(summary);

    const steps = git(root, 'log', '--reverse', '--format=%(trailers:key=Tug-Step,valueonly)', 'tugplan/demo')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    expect(steps).toEqual(['step-1', 'step-2']);
    expect(git(root, 'show', 'tugplan/demo:alpha.txt')).toBe('alpha.txt\n');
    expect(git(root, 'show', 'tugplan/demo:beta.txt')).toBe('beta.txt\n');
    expect(sh(fill(claim, { '<plan>': PLAN, W: a }), root, envA)).toMatchObject({
      claimed: false,
      reason: 'all_completed',
    });
    // §3 Finish: the dry run of the merge is clean and merges the integration branch.
    const merge = commandOf(SKILL, 'tugcode merge');
    expect(sh(fill(merge, { '<plan>': PLAN }), root, envA)).toMatchObject({ branch: 'tugplan/demo', into: 'main' });
  });

  it('the `ownership` row, followed as written, integrates and completes the step whose claim was lost', () => {
    const root = planRepo();
    const env = { TUGCODE_NOW: '2026-03-01T10:00:00.000Z' };
    const text = readFileSync(join(ROOT, SKILL), 'utf8');
    const row = text.split('\n').find((l) => l.startsWith('| `ownership`'))!;
    const again = /`(tugcode state claim <plan> --worktree W --step S --json)`/.exec(row)?.[1];
    expect(again, row).toBeDefined();
    const update = /`(tugcode state update <plan> S --worktree W --attempt N --complete-remaining --json)`/.exec(
      text,
    )![1]!;
    const W = sh(fill(commandOf(SKILL, 'tugcode worktree create'), { '<plan>': PLAN }), root, env)
      .worktree_path as string;
    const c = sh(fill(commandOf(SKILL, 'tugcode state claim'), { '<plan>': PLAN, W }), root, env);
    const v = { '<plan>': PLAN, W, S: c.step_anchor as string, N: String(c.attempt) };
    sh(fill(commandOf(SKILL, 'tugcode state start'), v), root, env);
    writeFiles(W, { 'alpha.txt': 'alpha\n' });
    sh(fill(update, v), root, env);
    // The claim is lost meanwhile (an admin reset it).
    sh(`tugcode state reset ${PLAN} ${v.S} --force --json`, root, env);
    const commit = commandOf(SKILL, 'tugcode commit');
    const lost = sh(fill(commit, v), root, env, 'feat: alpha');
    expect(lost).toMatchObject({ committed: true, state_update_failed: true, state_failure_reason: 'ownership' });
    expect(lost.integrated).not.toBe(true);
    // The row: claim S again, no reset, commit again with the new attempt.
    const c2 = sh(fill(again!, v), root, env);
    expect(c2).toMatchObject({ claimed: true, step_anchor: v.S });
    const v2 = { ...v, N: String(c2.attempt) };
    sh(fill(commandOf(SKILL, 'tugcode state start'), v2), root, env);
    sh(fill(update, v2), root, env);
    const done = sh(fill(commit, v2), root, env, 'feat: alpha');
    expect(done, JSON.stringify(done)).toMatchObject({ committed: false, integrated: true, state_updated: true });
    expect(git(root, 'show', 'tugplan/demo:alpha.txt')).toBe('alpha\n');
  });

  it('the `substeps` row, followed as written, completes the step whose substep was left open', () => {
    const plan = [
      '## Phase 1: Demo {#phase-demo}',
      '',
      '### Execution Steps {#execution-steps}',
      '',
      '#### Step 1: Alpha {#step-1}',
      '',
      '**Commit:** `feat: alpha`',
      '',
      '**Tasks:**',
      '- [ ] write alpha',
      '',
      '##### Step 1.1: Alpha part {#step-1-1}',
      '',
      '**Tasks:**',
      '- [ ] write the part',
      '',
    ].join('\n');
    const root = planRepo(plan);
    const env = { TUGCODE_NOW: '2026-03-01T10:00:00.000Z' };
    const text = readFileSync(join(ROOT, SKILL), 'utf8');
    const row = text.split('\n').find((l) => l.startsWith('| `substeps`'))!;
    const update = /`(tugcode state update <plan> S --worktree W --attempt N --complete-remaining --json)`/.exec(
      row,
    )?.[1];
    expect(update, row).toBeDefined();
    const W = sh(fill(commandOf(SKILL, 'tugcode worktree create'), { '<plan>': PLAN }), root, env)
      .worktree_path as string;
    const c = sh(fill(commandOf(SKILL, 'tugcode state claim'), { '<plan>': PLAN, W }), root, env);
    const v = { '<plan>': PLAN, W, S: c.step_anchor as string, N: String(c.attempt) };
    sh(fill(commandOf(SKILL, 'tugcode state start'), v), root, env);
    writeFiles(W, { 'alpha.txt': 'alpha\n' });
    // The step's own items are ticked, its substep's are not.
    sh(`tugcode state update ${PLAN} ${v.S} --worktree ${shellArg(W)} --all completed --json`, root, env);
    const commit = commandOf(SKILL, 'tugcode commit');
    const open = sh(fill(commit, v), root, env, 'feat: alpha');
    expect(open).toMatchObject({ committed: true, state_update_failed: true, state_failure_reason: 'substeps' });
    sh(fill(update!, v), root, env);
    const done = sh(fill(commit, v), root, env, 'feat: alpha');
    expect(done, JSON.stringify(done)).toMatchObject({ committed: false, integrated: true, state_updated: true });
    const show = sh(`tugcode state show ${PLAN} --json`, root, env);
    expect(show.plans[0].steps.map((s: { status: string }) => s.status)).toEqual(['completed', 'completed']);
  });
});
