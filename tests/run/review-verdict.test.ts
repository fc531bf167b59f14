/**
 * The review gate's pieces (docs/run.md §6, docs/agents.md §1.8): the verdict contract as the driver parses
 * it and as agents/reviewer.md, skills/implement and the prompt state it; the read-only reviewer presets
 * and their relay; what the implementer's prompt says in a REVISE round and after a human's notes; the
 * capped diff.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentPrompt, promptOwner } from '../../src/run/agent-prompt.js';
import { agentCommandLine, resolveReviewer, reviewerArgv } from '../../src/run/agents.js';
import { reviewVerdictSchema } from '../../src/contract/schemas/run.js';
import { gitCapped } from '../../src/git/capped.js';
import { parseVerdict } from '../../src/run/review-run.js';
import { reviewerPrompt, VERDICT_EXAMPLE } from '../../src/run/review-prompt.js';
import { relayArgv } from '../../src/run/state-relay.js';
import { createRenderer, eventLine, summaryText } from '../../src/run/render.js';
import type { ReviewBrief, RunEvent, RunSummary, StepBrief } from '../../src/run/types.js';
import { git, tempDir } from '../helpers/repo.js';

const ROOT = join(__dirname, '..', '..');

describe('parseVerdict: the last non-empty line, one JSON object', () => {
  it('takes the last line after prose; issues may be left out; unknown keys are dropped', async () => {
    expect(await parseVerdict('I read it.\n\n{"verdict":"APPROVE","summary":"fine","extra":1}\n\n')).toEqual({
      ok: true,
      verdict: { verdict: 'APPROVE', summary: 'fine', issues: [] },
    });
    const v = await parseVerdict(`x\n${VERDICT_EXAMPLE}`);
    expect(v).toMatchObject({ ok: true, verdict: { verdict: 'REVISE', issues: [{ file: 'src/hello.ts', line: 12 }] } });
  });

  it('skips a closing code fence after the JSON line', async () => {
    const r = await parseVerdict('```json\n{"verdict":"ESCALATE","summary":"the plan is wrong","issues":[]}\n```\n');
    expect(r).toMatchObject({ ok: true, verdict: { verdict: 'ESCALATE' } });
  });

  it.each([
    ['', /printed nothing/],
    ['looks fine', /last line is not JSON: looks fine/],
    ['{"verdict":"APPROVE","summary":"ok"}\nthanks', /last line is not JSON: thanks/],
    ['{"verdict":"LGTM","summary":"ok"}', /not a verdict \(verdict: /],
    ['{"summary":"ok"}', /not a verdict \(verdict: Required/],
    ['{"verdict":"REVISE","summary":"x","issues":[{"severity":"huge","message":"m"}]}', /issues\.0\.severity/],
    ['{"verdict":"APPROVE",\n"summary":"two lines"}', /last line is not JSON/],
  ])('%j is no verdict', async (text, why) => {
    const r = await parseVerdict(text);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.why).toMatch(why);
  });
});

it('a cut text: its one line began before the window and is refused as too long; a later line is read', async () => {
  const long = await parseVerdict('x'.repeat(100) + '","issues":[]}', true);
  expect(long).toEqual({ ok: false, why: 'its last line is longer than 64 KiB, the most a verdict line may be' });
  expect(await parseVerdict('xx\n{"verdict":"APPROVE","summary":"ok"}\n', true)).toMatchObject({ ok: true });
});

describe('one verdict contract in the prose and the driver', () => {
  it("agents/reviewer.md's output example is a verdict, the one the prompt and docs/run.md show", () => {
    const md = readFileSync(join(ROOT, 'agents', 'reviewer.md'), 'utf8');
    const out = md.slice(md.indexOf('## Output'));
    const line = /```json\n(.*)\n```/.exec(out)![1]!;
    expect(reviewVerdictSchema.parse(JSON.parse(line))).toEqual(JSON.parse(line));
    expect(JSON.parse(line)).toEqual(JSON.parse(VERDICT_EXAMPLE));
    const doc = readFileSync(join(ROOT, 'docs', 'run.md'), 'utf8');
    expect(doc).toContain(`    ${line.replace(/ {2,}/g, ' ')}`);
    for (const v of ['APPROVE', 'REVISE', 'ESCALATE']) expect(md).toContain(`\`${v}\``);
    const skill = readFileSync(join(ROOT, 'skills', 'implement', 'SKILL.md'), 'utf8');
    expect(skill).toContain('`{"verdict": "APPROVE" | "REVISE" | "ESCALATE", "summary": "…", "issues":');
  });
});

describe('the reviewer presets are read-only', () => {
  const owner = { plan: '.tugtool/tugplan-demo.md', step: 'step-1', worktree: '/r/.tugtree/w1', attempt: 2 };
  const paths = { owner, lastMessage: '/r/final.md', checkpoints: ['npm test'], allow: ['npx vitest run *'] };

  it('claude: no editing tool, default permissions, only its own state artifact allowed', () => {
    const a = reviewerArgv('claude', paths);
    expect(a.slice(0, 10)).toEqual([
      'claude',
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'default',
      '--setting-sources',
      'user',
      '--tools',
    ]);
    expect(a[10]).toBe('Read,Glob,Grep,Bash');
    const allowed = a.slice(a.indexOf('--allowedTools') + 1, a.indexOf('--disallowedTools'));
    const own = '.tugtool/tugplan-demo.md step-1 --worktree /r/.tugtree/w1 --attempt 2';
    expect(allowed).toEqual([
      `Bash(tugcode state artifact ${own})`,
      `Bash(tugcode state artifact ${own} *)`,
      'Bash(npm test)',
      'Bash(npx vitest run *)',
    ]);
    const denied = a.slice(a.indexOf('--disallowedTools') + 1);
    for (const t of [
      'Write',
      'Edit',
      'MultiEdit',
      'NotebookEdit',
      'Bash(tugcode state update *)',
      'Bash(git commit *)',
    ])
      expect(denied).toContain(t);
    expect(a).not.toContain('acceptEdits');
  });

  it('codex: the read-only sandbox', () => {
    const a = reviewerArgv('codex', paths);
    expect(a.slice(a.indexOf('--sandbox'), a.indexOf('--sandbox') + 2)).toEqual(['--sandbox', 'read-only']);
    expect(a.join(' ')).not.toMatch(/workspace-write|writable_roots/);
    expect(a.slice(-3)).toEqual(['--output-last-message', '/r/final.md', '-']);
  });

  it('its relay serves state artifact only', () => {
    const own = [owner.plan, owner.step, '--worktree', owner.worktree, '--attempt', '2'];
    expect(relayArgv(['state', 'artifact', ...own, '--kind', 'note'], owner.worktree, owner, ['artifact'])).toEqual({
      argv: ['state', 'artifact', ...own.slice(0, 2), '--kind', 'note', '--worktree', owner.worktree, '--attempt', '2'],
    });
    expect(
      relayArgv(['state', 'update', ...own, '--task', '0', 'completed'], owner.worktree, owner, ['artifact']),
    ).toEqual({
      refused: expect.stringContaining('only state artifact of its own step'),
    });
  });

  it('the README documents both command lines', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    for (const agent of ['claude', 'codex'] as const) expect(readme).toContain(agentCommandLine(agent, 'reviewer'));
  });

  it('resolveReviewer: as resolveImplementer, flag beats config, both refused', () => {
    const none = { reviewer: '', review_agent: '' };
    expect(resolveReviewer({}, none)).toEqual({ reviewer: null, reviewAgent: null });
    expect(resolveReviewer({ review_agent: 'codex' }, { reviewer: 'x', review_agent: '' })).toEqual({
      reviewer: null,
      reviewAgent: 'codex',
    });
    expect(resolveReviewer({}, { reviewer: 'sh r.sh', review_agent: '' })).toEqual({
      reviewer: 'sh r.sh',
      reviewAgent: null,
    });
    expect(() => resolveReviewer({ reviewer: 'x', review_agent: 'claude' }, none)).toThrow(
      /--reviewer and --review-agent cannot be used together/,
    );
    expect(() => resolveReviewer({}, { reviewer: 'x', review_agent: 'claude' })).toThrow(/both run.reviewer/);
    expect(() => resolveReviewer({ review_agent: 'gemini' }, none)).toThrow(/unknown agent "gemini"/);
  });
});

const brief: StepBrief = {
  plan_path: '.tugtool/tugplan-demo.md',
  step_anchor: 'step-2',
  title: 'Greet',
  attempt: 1,
  commit_message: 'feat: greet',
  references: null,
  depends_on: [],
  items: [{ kind: 'task', ordinal: 0, text: 'print it', status: 'completed' }],
  substeps: [],
  previous_failures: [],
};

describe('the prompts', () => {
  it("the implementer's prompt lists the reviewer's issues and a human's notes", () => {
    const p = agentPrompt(
      {
        ...brief,
        human_notes: 'print to stderr on --quiet',
        review_issues: [{ severity: 'major', file: 'src/a.ts', line: 3, message: 'not on --quiet' }],
      },
      { worktree: '/r/w1', briefPath: '/r/b.json' },
    );
    expect(p).toContain('## Notes from a human (they sent the step back: follow them)\n\nprint to stderr on --quiet\n');
    expect(p).toContain('## The reviewer asked for changes');
    expect(p).toContain('- major src/a.ts:3: not on --quiet\n');
    const plain = agentPrompt(brief, { worktree: '/r/w1', briefPath: '/r/b.json' });
    expect(plain).not.toMatch(/reviewer|human/);
  });

  it("the reviewer's prompt: the step, the diff, earlier verdicts, read-only rules, the verdict line", () => {
    const b: ReviewBrief = {
      ...brief,
      human_notes: 'keep it short',
      review: {
        round: 2,
        base: 'a'.repeat(40),
        head: 'b'.repeat(40),
        diff: 'diff --git a/x b/x\n+hello\n',
        diff_truncated: true,
        previous_verdicts: [
          {
            round: 1,
            verdict: 'REVISE',
            summary: 'too long',
            issues: [{ severity: 'minor', file: 'x', message: 'trim' }],
          },
        ],
      },
    };
    const p = reviewerPrompt(b, { worktree: '/r/w1', briefPath: '/r/rev.json', rounds: 3, notes: true });
    expect(p).toContain('You are the reviewer');
    expect(p).toContain('review round 2 of at most 3');
    expect(p).toContain('```diff\ndiff --git a/x b/x\n+hello\n```');
    expect(p).toContain('cut at 256 KiB');
    expect(p).toContain(`git diff ${'a'.repeat(40)}...${'b'.repeat(40)}`);
    expect(p).toContain('- round 1: REVISE: too long\n  - minor: x: trim');
    expect(p).toContain('keep it short');
    expect(p).toContain('You are read-only');
    expect(p).toContain(VERDICT_EXAMPLE);
    // docs/agents.md §1.8: the one state command a claude reviewer may run, with its literal owner — the
    // implementer's own (its relay and allow rule take nothing else); none for codex's read-only sandbox.
    const owner = promptOwner(b, '/r/w1');
    expect(owner).toContain(`--attempt ${b.attempt}`);
    expect(p).toContain(`      tugcode state artifact ${owner} --kind note --summary "what you found"\n`);
    expect(p.match(/tugcode state/g)).toHaveLength(1);
    const codex = reviewerPrompt(b, { worktree: '/r/w1', briefPath: '/r/rev.json', rounds: 3, notes: false });
    expect(codex).not.toContain('tugcode state');
  });
});

describe('gitCapped: a diff read up to its cap', () => {
  it('stops git past the cap and ends on a whole character', async () => {
    const dir = tempDir('tugcode-capped-');
    git(dir, 'init', '-q');
    writeFileSync(join(dir, 'a.txt'), 'é'.repeat(50_000));
    git(dir, 'add', '-A');
    git(dir, '-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-qm', 'a');
    const whole = await gitCapped(process.env, ['show', '--format=', 'HEAD'], dir, 1_000_000);
    expect(whole.truncated).toBe(false);
    expect(whole.text).toContain('é'.repeat(1000));
    const cut = await gitCapped(process.env, ['show', '--format=', 'HEAD'], dir, 1001);
    expect(cut.truncated).toBe(true);
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(1001);
    expect(whole.text.startsWith(cut.text)).toBe(true);
    expect(cut.text).not.toContain('\uFFFD');
    await expect(gitCapped(process.env, ['show', 'no-such-rev'], dir, 100)).rejects.toMatchObject({ code: 'GitError' });
  });
});

describe('what the renderers show of reviews and escalations', () => {
  const at = '2026-01-02T03:04:05.678Z';
  const plan = '.tugtool/tugplan-demo.md';
  const review: RunEvent = {
    type: 'review',
    at,
    worker: 'w1',
    step_anchor: 'step-2',
    round: 1,
    verdict: 'REVISE',
    summary: 'misses --quiet',
  };
  const needs: RunEvent = {
    type: 'needs_human',
    at,
    step_anchor: 'step-2',
    review_ref: 'refs/tugplan/review/demo/step-2',
    reason: 'the plan asks for two outputs',
  };

  it('one line per verdict and per escalation, with the command to run', () => {
    const o = { color: false, plan_path: plan };
    expect(eventLine(review, o)).toBe('w1 step-2 review round 1: REVISE misses --quiet');
    expect(eventLine(needs, o)).toBe(
      'step-2 needs a human: the plan asks for two outputs (kept as refs/tugplan/review/demo/step-2; ' +
        'tugcode state decide .tugtool/tugplan-demo.md step-2 --approve, --revise or --reject)',
    );
  });

  it('the live view keeps the worker on its step through a verdict and counts the steps waiting for a human', () => {
    let out = '';
    const view = createRenderer('live', {
      write: (s) => (out += s),
      color: false,
      now: () => 0,
      steps_total: 2,
      steps_done: 0,
      workers: ['w1'],
      plan_path: plan,
    });
    view.event({ type: 'phase', at, worker: 'w1', step_anchor: 'step-2', phase: 'review' });
    view.event(review);
    expect(out).toContain('w1  step-2  review');
    view.event(needs);
    view.close();
    const last = out.slice(out.lastIndexOf('\x1b[0J'));
    expect(last).toContain('w1  idle');
    expect(last).toContain('1 needs a human');
  });

  it('the summary lists the steps waiting for you with the decide commands, and the review rounds', async () => {
    const s: RunSummary = {
      status: 'error',
      steps_completed: ['step-1'],
      failed_steps: [],
      blocked_steps: [],
      commits: [],
      wall_ms: 1000,
      workers: [],
      review_rounds: [{ step_anchor: 'step-1', rounds: 2, verdict: 'APPROVE' }],
      needs_human: [
        {
          step_anchor: 'step-2',
          review_ref: 'refs/tugplan/review/demo/step-2',
          reason: 'the reviewer asked for a human: two outputs',
        },
      ],
      error: { code: 'NeedsHuman', message: 'm', details: { plan_path: plan } },
    };
    const text = await summaryText(s, { color: false });
    expect(text).toMatch(/step-1\s+completed\s+reviewed, 2 rounds/);
    expect(text).toMatch(/step-2\s+needs you\s+the reviewer asked for a human: two outputs\n/);
    expect(text).not.toContain('ESCALATE');
    expect(text).toContain(
      [
        'waiting for you:',
        'step-2 (its commit is kept as refs/tugplan/review/demo/step-2; git show refs/tugplan/review/demo/step-2):',
        `  tugcode state decide ${plan} step-2 --approve`,
        `  tugcode state decide ${plan} step-2 --revise "<notes>"`,
        `  tugcode state decide ${plan} step-2 --reject "<reason>"`,
        `then: tugcode run ${plan}`,
      ].join('\n'),
    );
    expect(text).toContain('1 completed, 1 waiting for you');
  });
});
