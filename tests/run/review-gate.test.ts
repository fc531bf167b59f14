/**
 * The review gate (docs/run.md §6) as users run it: the built CLI, real git, real state, a scripted
 * implementer and a scripted reviewer. REVISE rounds inside one attempt, ESCALATE to `needs_human` and
 * `state decide`, the failures (ReviewerFailed, ReviewRejected), and a driver killed mid-review.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stepText } from '../helpers/plan.js';
import { git } from '../helpers/repo.js';
import { runCli } from '../helpers/cli.js';
import {
  groupAlive,
  implementerScript,
  planText,
  runJsonl,
  runRepo,
  startRun,
  step,
  stepCommits,
  tugJson,
  waitUntil,
} from './helpers.js';
import { artifacts, implementer, reviewerScript } from './review-helpers.js';

const ONE_ATTEMPT = { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' };

describe('tugcode run --reviewer', () => {
  it('REVISE once then APPROVE: one attempt, two implementer runs, one commit, two reviewer_verdict artifacts', () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]), 'demo');
    const impl = implementer();
    const rev = reviewerScript();
    rev.answer('step-1', ['REVISE', 'APPROVE']);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    // One attempt, two implementer runs, the second with the reviewer's issues in its brief.
    expect(r.events.filter((e) => e.type === 'claimed' && e.step_anchor === 'step-1')).toHaveLength(1);
    expect(impl.runs('step-1')).toEqual(['attempt 1', 'attempt 1']);
    const briefs = impl.briefs('step-1');
    expect(briefs[0].review_issues).toBeUndefined();
    expect(briefs[1].review_issues).toEqual([
      { severity: 'major', file: 'step-1.txt', line: 1, message: 'say more in step-1' },
    ]);
    // One commit per step on the integration branch, with the revised content.
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
    expect(git(root, 'show', 'tugplan/demo:step-1.txt')).toBe('step-1 revised\n');
    // Two verdicts for step-1, one for step-2, each an artifact and an event.
    const verdicts = artifacts(root, 'reviewer_verdict');
    expect(verdicts.map((a) => [a.step_anchor, a.summary])).toEqual([
      ['step-1', 'round 1: REVISE: REVISE in round 1'],
      ['step-1', 'round 2: APPROVE: APPROVE in round 2'],
      ['step-2', 'round 1: APPROVE: APPROVE in round 1'],
    ]);
    expect(JSON.parse(verdicts[0]!.content)).toMatchObject({ verdict: 'REVISE', issues: [{ severity: 'major' }] });
    expect(r.events.filter((e) => e.type === 'review').map((e) => [e.step_anchor, e.round, e.verdict])).toEqual([
      ['step-1', 1, 'REVISE'],
      ['step-1', 2, 'APPROVE'],
      ['step-2', 1, 'APPROVE'],
    ]);
    // The reviewer's input: the brief plus `review` (the diff against the tip, earlier verdicts), its round.
    const [first, second] = rev.inputs('step-1');
    expect(first.step_anchor).toBe('step-1');
    expect(first.review).toMatchObject({ round: 1, diff_truncated: false, previous_verdicts: [] });
    expect(first.review.diff).toContain('+step-1\n');
    expect(second.review.diff).toContain('+step-1 revised\n');
    expect(second.review.previous_verdicts).toEqual([
      expect.objectContaining({ round: 1, verdict: 'REVISE', summary: 'REVISE in round 1' }),
    ]);
    expect(rev.rounds('step-1')).toEqual(['1', '2']);
    // step-2's review diffs against the tip that holds step-1: only its own change.
    const s2 = rev.inputs('step-2')[0];
    expect(s2.review.base).toBe(git(root, 'rev-parse', 'tugplan/demo~1').trim());
    expect(s2.review.diff).not.toContain('step-1.txt');
    expect(r.events.at(-1)).toMatchObject({
      status: 'ok',
      review_rounds: [
        { step_anchor: 'step-1', rounds: 2, verdict: 'APPROVE' },
        { step_anchor: 'step-2', rounds: 1, verdict: 'APPROVE' },
      ],
    });
  });

  it.each([
    ['a line that is no JSON', 'garbage', /answered no verdict: its last line is not JSON: looks fine to me/],
    ['a non-zero exit', 'exit', /the reviewer exited 3: reviewer crashed/],
    ['a verdict line over 64 KiB, which is not read whole', 'huge', /its last line is longer than 64 KiB/],
    ['a change to the worktree', 'edit', /the reviewer changed the worktree \(a reviewer is read-only\): step-1\.txt/],
  ])('%s fails the attempt ReviewerFailed, nothing is integrated', (_what, answer, reason) => {
    const root = runRepo(planText([step(1, 'One')]), 'demo', ONE_ATTEMPT);
    const impl = implementer();
    const rev = reviewerScript();
    rev.answer('step-1', [answer]);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv]);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failed).toEqual([expect.objectContaining({ step_anchor: 'step-1', reason_code: 'ReviewerFailed' })]);
    expect(failed[0].reason).toMatch(reason);
    // Where the reviewer's output went (its answer in .out, its stderr in .log), not the implementer's log.
    expect(failed[0].logs).toEqual([
      '.tugtool/logs/demo/step-1-review1-attempt1.out',
      '.tugtool/logs/demo/step-1-review1-attempt1.log',
    ]);
    expect(stepCommits(root, 'tugplan/demo')).toEqual([]);
    expect(artifacts(root, 'reviewer_verdict')).toEqual([]);
    expect(r.events.at(-1)).toMatchObject({ error: { code: 'PlanIncomplete' } });
    // The summary's entry names the same files as the last attempt_failed, not the implementer's log.
    expect(r.events.at(-1).failed_steps).toEqual([
      { step_anchor: 'step-1', reason: expect.stringMatching(/^ReviewerFailed: /), logs: failed[0].logs },
    ]);
  });

  it('ESCALATE: needs_human, dependents wait, exit 4 naming the command; decide --approve integrates the kept commit without the implementer', () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] }), step(3, 'Three')]), 'demo');
    const impl = implementer();
    const rev = reviewerScript();
    rev.answer('step-1', ['ESCALATE']);
    const args = ['demo', '--workers', '2', '--implementer', impl.argv, '--reviewer', rev.argv];
    const r = runJsonl(root, args);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    const last = r.events.at(-1);
    expect(last).toMatchObject({ type: 'summary', status: 'error', error: { code: 'NeedsHuman' } });
    expect(last.needs_human).toEqual([
      {
        step_anchor: 'step-1',
        review_ref: 'refs/tugplan/review/demo/step-1',
        reason: 'the reviewer asked for a human: ESCALATE in round 1',
      },
    ]);
    expect(r.events.filter((e) => e.type === 'needs_human')).toHaveLength(1);
    // The independent step ran; the dependent waited; the kept commit is under the review ref.
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-3']);
    expect(impl.runs('step-2')).toEqual([]);
    const kept = git(root, 'rev-parse', 'refs/tugplan/review/demo/step-1').trim();
    expect(git(root, 'show', `${kept}:step-1.txt`)).toBe('step-1\n');
    const show = tugJson(root, ['state', 'show', 'demo']);
    const s1 = show.json.plans[0].steps.find((x: any) => x.anchor === 'step-1');
    expect(s1).toMatchObject({ status: 'needs_human', review_commit: kept });
    // A second run with nothing to do ends the same way: the decision is still to make.
    const again = runJsonl(root, args);
    expect(again.code).toBe(4);
    expect(again.events.at(-1)).toMatchObject({ error: { code: 'NeedsHuman' } });

    const d = tugJson(root, ['state', 'decide', 'demo', 'step-1', '--approve']);
    expect(d.json, d.stderr).toMatchObject({ status: 'ok', decision: 'approve', review_commit: kept });
    const r2 = runJsonl(root, args);
    expect(r2.code, r2.stdout + r2.stderr).toBe(0);
    // The implementer never ran again for step-1, nor the reviewer; step-2 ran on top of the kept work.
    expect(impl.runs('step-1')).toEqual(['attempt 1']);
    expect(rev.rounds('step-1')).toEqual(['1']);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-3', 'step-1', 'step-2']);
    expect(git(root, 'show', 'tugplan/demo:step-1.txt')).toBe('step-1\n');
    // The kept ref has done its job.
    expect(git(root, 'for-each-ref', 'refs/tugplan/review/').trim()).toBe('');
  });

  it('an approval outlives an edit of another step: the re-initialised run integrates the kept commit as it is', () => {
    const plan = [step(1, 'One'), step(2, 'Two', { deps: [1] }), step(3, 'Three')];
    const root = runRepo(planText(plan), 'demo');
    const impl = implementer();
    const rev = reviewerScript();
    rev.answer('step-1', ['ESCALATE']);
    const args = ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv];
    expect(runJsonl(root, args).code).toBe(4);
    expect(tugJson(root, ['state', 'decide', 'demo', 'step-1', '--approve']).code).toBe(0);
    // A step added on the base: the structure changed, and the next run re-initialises the state.
    writeFileSync(join(root, '.tugtool/tugplan-demo.md'), planText([...plan, step(4, 'Four')]));
    git(root, 'commit', '-qam', 'plan: a fourth step');
    const dry = tugJson(root, ['run', ...args, '--dry-run']);
    expect(dry.json, dry.stderr).toMatchObject({ waves: [['step-1', 'step-4'], ['step-2']], done: ['step-3'] });
    const r = runJsonl(root, args);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.events.filter((e) => e.type === 'warning').map((e) => e.code)).toEqual(['PlanReinitialized']);
    // Neither the implementer nor the reviewer ran again for step-1: the approved commit went in.
    expect(impl.runs('step-1')).toEqual(['attempt 1']);
    expect(rev.rounds('step-1')).toEqual(['1']);
    expect(stepCommits(root, 'tugplan/demo').sort()).toEqual(['step-1', 'step-2', 'step-3', 'step-4']);
  });

  it('decide --approve of a step with substeps integrates the kept commits in the first attempt after it, no claim lost', () => {
    const plan = planText([
      '#### Step 1: Top {#step-1}\n\n**Commit:** `feat: top`\n\n**Tasks:**\n- [ ] t\n',
      '##### Step 1.1: Sub one {#step-1-1}\n\n**Commit:** `feat: sub one`\n\n**Tasks:**\n- [ ] t\n',
      '##### Step 1.2: Sub two {#step-1-2}\n\n**Commit:** `feat: sub two`\n\n**Tasks:**\n- [ ] t\n',
      step(2, 'Two', { deps: [1] }),
    ]);
    const root = runRepo(plan, 'demo');
    const impl = implementer();
    const rev = reviewerScript();
    rev.answer('step-1', ['ESCALATE']);
    const first = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv]);
    expect(first.code, first.stdout + first.stderr).toBe(4);
    const kept = git(root, 'rev-parse', 'refs/tugplan/review/demo/step-1').trim();
    expect(tugJson(root, ['state', 'decide', 'demo', 'step-1', '--approve']).json).toMatchObject({ status: 'ok' });
    // As the user ran it: the next run without a reviewer (docs/run.md §6.3, the approved commit as it is).
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.events.filter((e) => e.type === 'attempt_failed' || e.type === 'claim_lost')).toEqual([]);
    expect(r.events.filter((e) => e.type === 'claimed').map((e) => [e.step_anchor, e.attempt])).toEqual([
      ['step-1', 2],
      ['step-2', 1],
    ]);
    for (const s of ['step-1', 'step-1-1', 'step-1-2']) expect(impl.runs(s)).toEqual(['attempt 1']);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1-1', 'step-1-2', 'step-1', 'step-2']);
    expect(git(root, 'rev-parse', 'tugplan/demo~1').trim()).toBe(kept);
    const show = tugJson(root, ['state', 'show', 'demo']);
    expect(show.json.plans[0].steps.map((x: any) => [x.anchor, x.status])).toEqual([
      ['step-1', 'completed'],
      ['step-1-1', 'completed'],
      ['step-1-2', 'completed'],
      ['step-2', 'completed'],
    ]);
    expect(git(root, 'for-each-ref', 'refs/tugplan/review/').trim()).toBe('');
  });

  it('state reset of a needs_human (or approved) step, and state init --force, delete its review ref', () => {
    const free = (n: number) => stepText({ id: String(n), deps: [], commit: `feat: s${n}`, tasks: [`write s${n}`] });
    const root = runRepo(planText([free(1), free(2), free(3)]), 'demo');
    const impl = implementer();
    const rev = reviewerScript();
    for (const s of ['step-1', 'step-2', 'step-3']) rev.answer(s, ['ESCALATE']);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv]);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    const refs = () => git(root, 'for-each-ref', '--format=%(refname)', 'refs/tugplan/review/').trim().split('\n');
    expect(refs()).toEqual(['step-1', 'step-2', 'step-3'].map((s) => `refs/tugplan/review/demo/${s}`));
    const kept = (s: string) => git(root, 'rev-parse', `refs/tugplan/review/demo/${s}`).trim();
    const [kept1, kept2] = [kept('step-1'), kept('step-2')];
    // needs_human, reset: the kept commit is dropped in the state, and its ref with it; the others stay.
    expect(tugJson(root, ['state', 'reset', 'demo', 'step-1']).json).toMatchObject({
      status: 'ok',
      previous_status: 'needs_human',
      dropped_review: {
        review_commit: kept1,
        review_ref: 'refs/tugplan/review/demo/step-1',
        human_decision: null,
        human_notes: null,
      },
    });
    expect(refs()).toEqual(['refs/tugplan/review/demo/step-2', 'refs/tugplan/review/demo/step-3']);
    // Approved, then reset before a run integrated it: the approval is gone, the ref too, and the text says so.
    expect(tugJson(root, ['state', 'decide', 'demo', 'step-2', '--approve']).code).toBe(0);
    const reset2 = runCli(['state', 'reset', 'demo', 'step-2'], { cwd: root });
    expect(reset2.code, reset2.stderr).toBe(0);
    expect(reset2.stdout).toBe(
      `Reset step-2 (was pending); dropped the human approval and the kept commit ${kept2.slice(0, 12)} ` +
        `(refs/tugplan/review/demo/step-2)\n`,
    );
    expect(refs()).toEqual(['refs/tugplan/review/demo/step-3']);
    // A plain reset drops nothing.
    expect(tugJson(root, ['state', 'reset', 'demo', 'step-2']).json).toMatchObject({ dropped_review: null });
    // A forced re-init keeps a step waiting for a human whose work is unchanged, and its ref (docs/state.md
    // §3.11); once the step's work changed, it is pending again, its kept commit cleared: no ref is left.
    expect(tugJson(root, ['state', 'init', 'demo', '--force']).code).toBe(0);
    expect(refs()).toEqual(['refs/tugplan/review/demo/step-3']);
    const plan = join(root, '.tugtool', 'tugplan-demo.md');
    writeFileSync(plan, readFileSync(plan, 'utf8').replace('- [ ] write s3', '- [ ] write s3 and test it'));
    expect(tugJson(root, ['state', 'init', 'demo', '--force']).code).toBe(0);
    expect(git(root, 'for-each-ref', 'refs/tugplan/review/').trim()).toBe('');
  });

  it('a run that takes over an edited step drops the review ref of the step it made pending again', () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]), 'demo');
    const impl = implementer();
    const rev = reviewerScript();
    rev.answer('step-1', ['ESCALATE']);
    expect(runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv]).code).toBe(4);
    expect(git(root, 'for-each-ref', '--format=%(refname)', 'refs/tugplan/review/').trim()).toBe(
      'refs/tugplan/review/demo/step-1',
    );
    // A task added to step-1 on the base: the run re-initialises the state (docs/run.md §1.1 item 1), and
    // step-1, whose work changed, is pending again (docs/state.md §3.11).
    const plan = join(root, '.tugtool', 'tugplan-demo.md');
    const edited = readFileSync(plan, 'utf8').replace('- [ ] write one', '- [ ] write one\n- [ ] and say so');
    expect(edited).toContain('and say so');
    writeFileSync(plan, edited);
    git(root, 'commit', '-qam', 'a task for step 1');
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.events.filter((e) => e.type === 'warning').map((e) => e.code)).toEqual(['PlanReinitialized']);
    expect(impl.runs('step-1')).toEqual(['attempt 1', 'attempt 2']);
    expect(git(root, 'for-each-ref', 'refs/tugplan/review/').trim()).toBe('');
  });

  it('an approved commit that is gone fails the attempt ReviewCommitMissing; the next attempt implements the step again', () => {
    const root = runRepo(planText([step(1, 'One')]), 'demo');
    const impl = implementer();
    const rev = reviewerScript();
    rev.answer('step-1', ['ESCALATE', 'APPROVE']);
    const args = ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv];
    expect(runJsonl(root, args).code).toBe(4);
    const kept = git(root, 'rev-parse', 'refs/tugplan/review/demo/step-1').trim();
    expect(tugJson(root, ['state', 'decide', 'demo', 'step-1', '--approve']).code).toBe(0);
    // The kept commit made unreachable and pruned: its ref, the worker's tree and branch, the reflogs.
    git(root, 'update-ref', '-d', 'refs/tugplan/review/demo/step-1');
    for (const line of git(root, 'worktree', 'list', '--porcelain').split('\n'))
      if (line.startsWith('worktree ') && line.includes('.tugtree'))
        git(root, 'worktree', 'remove', '--force', line.slice(9));
    git(root, 'branch', '-D', 'tugplan/demo--w1');
    git(root, 'reflog', 'expire', '--expire=now', '--all');
    git(root, 'gc', '-q', '--prune=now');
    expect(() => git(root, 'cat-file', '-e', `${kept}^{commit}`)).toThrow();
    const r = runJsonl(root, args);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failed).toEqual([expect.objectContaining({ attempt: 2, reason_code: 'ReviewCommitMissing' })]);
    expect(failed[0].reason).toMatch(
      /the approved commit [0-9a-f]{12} is gone from the repository; the step is implemented again/,
    );
    expect(impl.runs('step-1')).toEqual(['attempt 1', 'attempt 3']);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1']);
  });

  it('decide --revise sends the notes into the next brief; --reject fails the step', () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two'), step(3, 'Three', { deps: [1] })]), 'demo');
    const impl = implementer();
    const rev = reviewerScript();
    rev.answer('step-1', ['ESCALATE', 'APPROVE']);
    rev.answer('step-2', ['ESCALATE']);
    const args = ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv];
    expect(runJsonl(root, args).code).toBe(4);
    const dv = tugJson(root, ['state', 'decide', 'demo', 'step-1', '--revise', 'name it after the ticket']);
    expect(dv.json, JSON.stringify(dv.json)).toMatchObject({
      status: 'ok',
      decision: 'revise',
    });
    expect(tugJson(root, ['state', 'decide', 'demo', 'step-2', '--reject', 'not wanted']).json).toMatchObject({
      status: 'ok',
      step_status: 'failed',
      decision: 'reject',
    });
    expect(git(root, 'for-each-ref', 'refs/tugplan/review/').trim()).toBe('');
    const r = runJsonl(root, args);
    expect(r.code).toBe(4);
    expect(r.events.at(-1)).toMatchObject({ error: { code: 'PlanIncomplete' } });
    expect(impl.briefs('step-1').at(-1).human_notes).toBe('name it after the ticket');
    expect(impl.runs('step-1')).toEqual(['attempt 1', 'attempt 2']);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-3']);
    const show = tugJson(root, ['state', 'show', 'demo']);
    expect(show.json.plans[0].steps.find((x: any) => x.anchor === 'step-2')).toMatchObject({
      status: 'failed',
      fail_reason: 'not wanted',
    });
  });

  it('REVISE past --review-rounds fails the attempt ReviewRejected; the next attempt starts afresh', () => {
    const root = runRepo(planText([step(1, 'One')]), 'demo', {
      '.tugtool/config.toml': '[state]\nmax_attempts = 2\n[run]\nreview_rounds = 5\n',
    });
    const impl = implementer();
    const rev = reviewerScript();
    rev.answer('step-1', ['REVISE', 'REVISE', 'APPROVE']);
    // The flag beats the config's 5: two REVISE verdicts end attempt 1; attempt 2 is approved at once.
    const r = runJsonl(root, [
      'demo',
      '--workers',
      '1',
      '--implementer',
      impl.argv,
      '--reviewer',
      rev.argv,
      '--review-rounds',
      '2',
    ]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failed).toEqual([expect.objectContaining({ attempt: 1, reason_code: 'ReviewRejected' })]);
    expect(failed[0].reason).toMatch(/asked for changes 2 time\(s\)/);
    expect(impl.runs('step-1')).toEqual(['attempt 1', 'attempt 1', 'attempt 2']);
    expect(r.events.filter((e) => e.type === 'review').map((e) => `${e.round}:${e.verdict}`)).toEqual([
      '1:REVISE',
      '2:REVISE',
      '1:APPROVE',
    ]);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1']);
    expect(git(root, 'show', 'tugplan/demo:step-1.txt')).toBe('step-1\n');
  });

  it("a step with a substep is reviewed once, as a whole; a revision remakes the step's own commit, trailers kept", () => {
    const plan = planText([
      '#### Step 1: Top {#step-1}\n\n**Commit:** `feat: top`\n\n**Tasks:**\n- [ ] t\n',
      '##### Step 1.1: Sub {#step-1-1}\n\n**Commit:** `feat: sub`\n\n**Tasks:**\n- [ ] t\n',
    ]);
    const root = runRepo(plan, 'demo');
    const impl = implementer();
    const rev = reviewerScript();
    rev.answer('step-1', ['REVISE', 'APPROVE']);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(impl.runs('step-1-1')).toEqual(['attempt 1']);
    expect(impl.runs('step-1')).toEqual(['attempt 1', 'attempt 1']);
    expect(rev.inputs('step-1-1')).toEqual([]);
    const [first] = rev.inputs('step-1');
    expect(first.review.diff).toContain('+step-1-1\n'); // the substep's commit is part of the change
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1-1', 'step-1']);
    const msg = git(root, 'log', '-1', '--format=%B', 'tugplan/demo');
    expect(msg).toMatch(/^feat: top\n/);
    expect(msg).toContain('Tug-Step: step-1\n');
    expect(msg).toContain('Tug-Plan: .tugtool/tugplan-demo.md');
    expect(git(root, 'show', 'tugplan/demo:step-1.txt')).toBe('step-1 revised\n');
    expect(git(root, 'show', '--stat', '--format=', 'tugplan/demo')).toContain('implementation-log/demo/step-1.md');
    const show = tugJson(root, ['state', 'show', 'demo']);
    const steps = show.json.plans[0].steps;
    expect(steps.map((s: any) => [s.anchor, s.status, s.commit_hash])).toEqual([
      ['step-1', 'completed', git(root, 'rev-parse', 'tugplan/demo').trim()],
      ['step-1-1', 'completed', git(root, 'rev-parse', 'tugplan/demo~1').trim()],
    ]);
  });

  it('a verdict line that fills the 64 KiB read exactly, its newline included, is read whole and approves', () => {
    const root = runRepo(planText([step(1, 'One')]), 'demo', ONE_ATTEMPT);
    const impl = implementer();
    const rev = reviewerScript();
    rev.answer('step-1', ['window']);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.events.filter((e) => e.type === 'review').map((e) => e.verdict)).toEqual(['APPROVE']);
  });

  it('a driver SIGKILLed during a review round: the next run ends the orphaned reviewer and heals, one commit', async () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]), 'demo');
    const impl = implementer();
    const rev = reviewerScript();
    rev.answer('step-1', ['hold', 'APPROVE']);
    const args = ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv];
    const run = startRun(root, args);
    await waitUntil('the reviewer of step-1', () => rev.held('step-1'));
    const pid = Number(readFileSync(join(rev.dir, 'held', 'step-1'), 'utf8'));
    expect(
      run
        .events()
        .filter((e) => e.type === 'phase')
        .at(-1),
    ).toMatchObject({ step_anchor: 'step-1', phase: 'review' });
    run.child.kill('SIGKILL');
    await run.done;
    // The worker branch holds step-1's commit; nothing is integrated yet.
    expect(stepCommits(root, 'tugplan/demo--w1')).toEqual(['step-1']);
    expect(stepCommits(root, 'tugplan/demo')).toEqual([]);

    const r = runJsonl(root, args);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(groupAlive(pid)).toBe(false); // the adoption ended the reviewer the killed run left
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
    expect(r.events.filter((e) => e.type === 'step_completed').map((e) => e.step_anchor)).toEqual(['step-1', 'step-2']);
    expect(r.events.find((e) => e.type === 'claimed' && e.step_anchor === 'step-1')).toMatchObject({ attempt: 2 });
    expect(impl.runs('step-1')).toEqual(['attempt 1', 'attempt 2']);
    const show = tugJson(root, ['state', 'show', 'demo']);
    expect(show.json.plans[0].steps.map((x: any) => x.status)).toEqual(['completed', 'completed']);
  });

  it('ESCALATE beside a failed step: the hint and the summary name the reset of the failed step before the run again', () => {
    const root = runRepo(
      planText([step(1, 'One', { deps: [] }), step(2, 'Two', { deps: [] }), step(3, 'Three', { deps: [2] })]),
      'demo',
      ONE_ATTEMPT,
    );
    const impl = implementerScript();
    writeFileSync(join(impl.failDir, 'step-2'), '9');
    const rev = reviewerScript();
    rev.answer('step-1', ['ESCALATE']);
    const args = ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv];
    const r = runJsonl(root, args);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    const last = r.events.at(-1);
    expect(last).toMatchObject({ error: { code: 'NeedsHuman' }, failed_steps: [{ step_anchor: 'step-2' }] });
    // Deciding step-1 and running again would leave step-2 failed and step-3 blocked: the reset is named too.
    expect(last.error.hint).toMatch(
      /^tugcode state decide \.tugtool\/tugplan-demo\.md step-1 --approve \(or .*\); tugcode state reset \.tugtool\/tugplan-demo\.md step-2; then tugcode run /,
    );
    writeFileSync(join(impl.failDir, 'step-2'), '9');
    const text = runCli(['run', ...args], { cwd: root });
    expect(text.code).toBe(4);
    expect(text.stdout).toContain(
      [
        'waiting for you:',
        'step-1 (its commit is kept as refs/tugplan/review/demo/step-1; git show refs/tugplan/review/demo/step-1):',
        '  tugcode state decide .tugtool/tugplan-demo.md step-1 --approve',
        '  tugcode state decide .tugtool/tugplan-demo.md step-1 --revise "<notes>"',
        '  tugcode state decide .tugtool/tugplan-demo.md step-1 --reject "<reason>"',
        'step-2 (failed; to run it again):',
        '  tugcode state reset .tugtool/tugplan-demo.md step-2',
        'then: tugcode run ',
      ].join('\n'),
    );
  });

  it('ESCALATE beside a spent budget or a stop: the hints and the summary name the decision, and a run that can claim', async () => {
    // A step waiting for a human when the run ends BudgetExhausted or Interrupted (docs/run.md §6.3, §7.2).
    const two = stepText({ id: '2', title: 'Two', deps: [], commit: 'feat: two', tasks: ['write two'] });
    const root = runRepo(planText([step(1, 'One'), two]), 'demo');
    const impl = implementer({ billed: true });
    const rev = reviewerScript();
    rev.answer('step-1', ['ESCALATE']);
    const args = ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv];
    const decide = 'tugcode state decide .tugtool/tugplan-demo.md step-1 --approve (or ';
    // step-1's implementer spends 1,100 tokens: the budget is reached, step-1 finishes and escalates.
    const r = runJsonl(root, [...args, '--budget-tokens', '1000']);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    const last = r.events.at(-1);
    expect(last).toMatchObject({ error: { code: 'BudgetExhausted' }, needs_human: [{ step_anchor: 'step-1' }] });
    expect(last.error.hint).toMatch(/ --budget-tokens <more>$/);
    expect(last.error.hint.startsWith(decide), last.error.hint).toBe(true);
    // The summary's "then:" is a run that claims: the spent budget given again would stop it at once.
    const text = runCli(['run', ...args, '--budget-tokens', '1000'], { cwd: root });
    expect(text.code).toBe(4);
    expect(text.stdout).toMatch(/\nthen: tugcode run \.tugtool\/tugplan-demo\.md .* --budget-tokens <more>\n/);

    // Stopped while step-2 is in review and step-1 waits: the hint names the decision before the run again.
    rev.answer('step-2', ['hold']);
    const run = startRun(root, [...args, '--budget-tokens', '100000']);
    await waitUntil('the reviewer of step-2', () => rev.held('step-2'));
    run.child.kill('SIGINT');
    const stopped = await run.done;
    rev.release();
    const end = stopped.events.at(-1);
    expect(end).toMatchObject({ error: { code: 'Interrupted' }, needs_human: [{ step_anchor: 'step-1' }] });
    expect(end.error.hint.startsWith(decide), end.error.hint).toBe(true);
    expect(end.error.hint).toMatch(
      /; then tugcode run .* --budget-tokens 100000 \(it resumes where this run stopped\)$/,
    );
  });

  it('a REVISE once the budget is spent sends no implementer back: the step waits for a human, its work kept', () => {
    const root = runRepo(planText([step(1, 'One')]), 'demo');
    const impl = implementer({ billed: true });
    const rev = reviewerScript();
    rev.answer('step-1', ['REVISE', 'APPROVE']);
    const args = ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv];
    // The implementer's 1,100 tokens reach the budget; the reviewer's REVISE would spend on (docs/run.md §7.2).
    const r = runJsonl(root, [...args, '--budget-tokens', '1000']);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.events.at(-1)).toMatchObject({
      error: { code: 'BudgetExhausted' },
      needs_human: [{ step_anchor: 'step-1', reason: 'the budget is spent, so no revision round: REVISE in round 1' }],
    });
    expect(impl.runs('step-1')).toEqual(['attempt 1']);
    // Said as what it is: no reviewer escalated it (docs/run.md §6.3), so no `ESCALATE:` before the reason.
    const text = runCli(['run', ...args, '--budget-tokens', '1000'], { cwd: root });
    expect(text.code).toBe(4);
    expect(text.stdout).toMatch(/step-1\s+needs you\s+the budget is spent, so no revision round: REVISE in round 1\n/);
    expect(text.stdout).not.toContain('ESCALATE');
    const dry = runCli(['run', ...args, '--budget-tokens', '1000', '--dry-run'], { cwd: root });
    expect(dry.stdout).toContain('step-1  needs you  the budget is spent, so no revision round: REVISE in round 1\n');
    expect(tugJson(root, ['state', 'decide', 'demo', 'step-1', '--approve']).code).toBe(0);
    const r2 = runJsonl(root, [...args, '--budget-tokens', '100000']);
    expect(r2.code, r2.stdout + r2.stderr).toBe(0);
    expect(impl.runs('step-1')).toEqual(['attempt 1']);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1']);
  });
});
