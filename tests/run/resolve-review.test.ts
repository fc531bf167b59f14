/**
 * The review gate after a resolved conflict (docs/run.md §1.9, §6): the reviewer runs again on the merged
 * commits — its rounds continue within the attempt — and its verdict gates the integration like any other
 * (REVISE: the implementer again in the same attempt; ESCALATE: `needs_human` with the resolved commit
 * kept). A step a human approved whose kept commit no longer rebases cleanly goes through the resolver.
 * The reviewer's and the resolver's usage (TUG_USAGE_OUT) is counted by role. Real git, the built CLI.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../helpers/repo.js';
import { nodeImplementer, planText, runJsonl, runRepo, step, stepCommits, tugJson } from './helpers.js';
import {
  conflictRepo,
  lines,
  ok,
  racingImplementer,
  resolutionArtifacts,
  resolverScript,
  SHARED,
  type UsageOut,
} from './resolve-helpers.js';
import { artifacts, reviewerScript } from './review-helpers.js';

/** What each role's script reports through TUG_USAGE_OUT (costs exact in binary, so sums are too). */
const IMPL: UsageOut = { input_tokens: 1000, output_tokens: 100, cost_usd: 0.5 };
const REV: UsageOut = { input_tokens: 200, output_tokens: 20, cost_usd: 0.125 };
const RES: UsageOut = { input_tokens: 300, output_tokens: 30, cache_read_tokens: 7, cost_usd: 0.25 };

/** The ledger's totals of `runs` reports per role (UsageTotals, docs/run.md §7.1). */
function totals(runs: Partial<Record<'implementer' | 'reviewer' | 'resolver', number>>) {
  const reports = { implementer: IMPL, reviewer: REV, resolver: RES };
  const t = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, tokens: 0 };
  const by_role: Record<string, { tokens: number; cost_usd: number; reports: number }> = {};
  let cost = 0;
  let n = 0;
  for (const [role, k] of Object.entries(runs)) {
    const u = reports[role as keyof typeof reports];
    const tokens = (u.input_tokens ?? 0) + (u.output_tokens ?? 0) + (u.cache_read_tokens ?? 0);
    t.input_tokens += k * (u.input_tokens ?? 0);
    t.output_tokens += k * (u.output_tokens ?? 0);
    t.cache_read_tokens += k * (u.cache_read_tokens ?? 0);
    t.tokens += k * tokens;
    cost += k * u.cost_usd!;
    n += k;
    by_role[role] = { tokens: k * tokens, cost_usd: k * u.cost_usd!, reports: k };
  }
  return { ...t, cost_usd: cost, reports: n, unpriced: 0, by_role };
}

describe('tugcode run --resolver --reviewer: the reviewer after a resolution', () => {
  it('reviews the merged commits (rounds continue); a REVISE there sends the implementer back in the same attempt', () => {
    const counter = join(tempDir('tugcode-count-'), 'count');
    const root = conflictRepo(counter);
    const impl = racingImplementer({ usage: IMPL });
    const res = resolverScript('merge', { usage: RES });
    const rev = reviewerScript({ usage: REV });
    // step-3: approved as implemented, sent back once after the merge, then approved.
    rev.answer('step-3', ['APPROVE', 'REVISE', 'APPROVE']);
    const args = ['demo', '--workers', '2', '--implementer', impl.argv, '--resolver', res.argv];
    const r = runJsonl(root, [...args, '--reviewer', rev.argv]);
    ok(r);

    // One attempt of step-3: implemented, resolved, revised; never redone.
    expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
    expect(r.events.filter((e) => e.type === 'claimed' && e.step_anchor === 'step-3')).toEqual([
      expect.objectContaining({ attempt: 1 }),
    ]);
    expect(lines(join(impl.dir, 'calls')).filter((l) => l.startsWith('step-3'))).toEqual([
      'step-3 1 implement',
      'step-3 1 revise',
    ]);
    expect(res.briefs()).toHaveLength(1);

    // The order: review round 1, the conflict and its resolution, the checkpoints, review round 2 (REVISE),
    // the implementer, checkpoints and commit again, review round 3, then the integration.
    const s3 = r.events.filter((e) => e.step_anchor === 'step-3');
    const story = s3
      .filter((e) => ['phase', 'review', 'conflict', 'conflict_resolved'].includes(e.type))
      .map((e) => (e.type === 'phase' ? e.phase : e.type === 'review' ? `review ${e.round} ${e.verdict}` : e.type));
    expect(story.slice(story.indexOf('review 1 APPROVE'))).toEqual([
      'review 1 APPROVE',
      'integrate',
      'conflict',
      'resolve',
      'conflict_resolved',
      'checkpoints',
      'review',
      'review 2 REVISE',
      'implementer',
      'checkpoints',
      'commit',
      'review',
      'review 3 APPROVE',
      'integrate',
      'complete',
    ]);
    expect(lines(counter)).toEqual(['run', 'run', 'run']);

    // The reviewer's inputs: round 1 the change as implemented; round 2 the merged change against the tip
    // that holds step-2, with round 1's APPROVE among the earlier verdicts; round 3 the revision.
    const [first, second, third] = rev.inputs('step-3');
    expect(rev.rounds('step-3')).toEqual(['1', '2', '3']);
    expect(first.review.diff).toContain('-middle\n+middle from step-3\n');
    const tip2 = git(root, 'log', '-1', '--format=%H', '--grep=^Tug-Step: step-2$', 'tugplan/demo').trim();
    expect(second.review).toMatchObject({ round: 2, base: tip2 });
    expect(second.review.diff).toContain(' middle from step-2\n+middle from step-3\n');
    expect(second.review.diff).not.toContain('-middle');
    expect(second.review.previous_verdicts).toEqual([expect.objectContaining({ round: 1, verdict: 'APPROVE' })]);
    expect(third.review.diff).toContain('+step-3 revised\n');
    expect(third.review.diff).toContain('+middle from step-3\n');
    expect(third.review.previous_verdicts.map((v: any) => `${v.round} ${v.verdict}`)).toEqual([
      '1 APPROVE',
      '2 REVISE',
    ]);
    expect(
      artifacts(root, 'reviewer_verdict')
        .filter((a) => a.step_anchor === 'step-3')
        .map((a) => a.summary),
    ).toEqual([
      'round 1: APPROVE: APPROVE in round 1',
      'round 2: REVISE: REVISE in round 2',
      'round 3: APPROVE: APPROVE in round 3',
    ]);

    // One commit per step; step-3's holds the merge and the revision.
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2', 'step-3']);
    expect(git(root, 'show', 'tugplan/demo:shared.txt')).toBe('top\nmiddle from step-2\nmiddle from step-3\nbottom\n');
    expect(git(root, 'show', 'tugplan/demo:step-3.txt')).toBe('step-3 revised\n');
    const summary = r.events.at(-1);
    expect(summary.review_rounds).toContainEqual({ step_anchor: 'step-3', rounds: 3, verdict: 'APPROVE' });
    expect(summary.conflicts_resolved).toEqual([{ step_anchor: 'step-3', files: ['shared.txt'], round: 1 }]);

    // The ledger, by role: step-3 ran the implementer twice, the reviewer three times, the resolver once.
    const usage = r.events.filter((e) => e.type === 'usage' && e.step_anchor === 'step-3');
    expect(usage.map((e) => e.role).sort()).toEqual([
      'implementer',
      'implementer',
      'resolver',
      'reviewer',
      'reviewer',
      'reviewer',
    ]);
    expect(usage.find((e) => e.role === 'resolver').usage).toEqual({ cache_write_tokens: null, ...RES });
    const want = {
      'step-1': totals({ implementer: 1, reviewer: 1 }),
      'step-2': totals({ implementer: 1, reviewer: 1 }),
      'step-3': totals({ implementer: 2, reviewer: 3, resolver: 1 }),
    };
    const plan = totals({ implementer: 4, reviewer: 5, resolver: 1 });
    const show = tugJson(root, ['state', 'show', 'demo']);
    expect(show.code, show.stderr).toBe(0);
    for (const s of show.json.plans[0].steps) expect(s.usage, s.anchor).toEqual(want[s.anchor as keyof typeof want]);
    expect(show.json.plans[0].usage).toEqual(plan);
    expect(summary.usage).toEqual(plan);
    expect(summary.plan_usage).toEqual(plan);
    expect(resolutionArtifacts(root)).toHaveLength(1);
  });

  it('an approved step whose kept commit conflicts is resolved; ESCALATE after the merge keeps the resolved commit for a human', () => {
    // Independent steps (a Depends-on line turns the implicit order off, docs/plan-format.md).
    const two = step(2, 'Two').replace('**Commit:**', '**Depends on:** none\n\n**Commit:**');
    const root = runRepo(planText([step(1, 'One'), two]), 'demo', { 'shared.txt': SHARED });
    // Both steps rewrite the middle line of shared.txt.
    const impl = nodeImplementer(`
appendFileSync(join(dir, 'calls'), step + ' ' + attempt + '\\n');
writeFileSync(join(wt, step + '.txt'), step + '\\n');
const lines = readFileSync(join(wt, 'shared.txt'), 'utf8').split('\\n');
lines[1] = 'middle from ' + step;
writeFileSync(join(wt, 'shared.txt'), lines.join('\\n'));
`);
    const rev = reviewerScript();
    // step-1: escalated as implemented, escalated again after the merge, then never reviewed again.
    rev.answer('step-1', ['ESCALATE', 'ESCALATE', 'APPROVE']);
    const base = ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv];
    // Run 1: step-1 waits for a human; step-2 (from the same base) is integrated first.
    const r1 = runJsonl(root, base);
    expect(r1.code, r1.stdout + r1.stderr).toBe(4);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-2']);
    const kept1 = git(root, 'rev-parse', 'refs/tugplan/review/demo/step-1').trim();
    expect(tugJson(root, ['state', 'decide', 'demo', 'step-1', '--approve']).code).toBe(0);

    // Run 2 with a resolver: the kept commit conflicts with step-2; the resolver merges it in the same
    // attempt, the reviewer sees the merged change and escalates again: the resolved commit is kept.
    const res = resolverScript('merge');
    const r2 = runJsonl(root, [...base, '--resolver', res.argv]);
    expect(r2.code, r2.stdout + r2.stderr).toBe(4);
    expect(r2.events.at(-1)).toMatchObject({ status: 'error', error: { code: 'NeedsHuman' } });
    expect(lines(join(impl.dir, 'calls'))).toEqual(['step-1 1', 'step-2 1']); // no implementer in run 2
    const tip = git(root, 'rev-parse', 'tugplan/demo').trim();
    const [brief] = res.briefs();
    expect(res.briefs()).toHaveLength(1);
    expect(brief).toMatchObject({
      step_anchor: 'step-1',
      attempt: 2,
      conflict: { onto: tip, files: ['shared.txt'], integrated: [{ step_anchor: 'step-2', commit: tip }] },
    });
    expect(r2.events.filter((e) => e.type === 'conflict_resolved')).toEqual([
      expect.objectContaining({ step_anchor: 'step-1', round: 1 }),
    ]);
    const reviewed = rev.inputs('step-1');
    expect(reviewed).toHaveLength(2);
    expect(reviewed[1].review).toMatchObject({ round: 1, base: tip, previous_verdicts: [] });
    expect(reviewed[1].review.diff).toContain(' middle from step-2\n+middle from step-1\n');
    const kept2 = git(root, 'rev-parse', 'refs/tugplan/review/demo/step-1').trim();
    expect(kept2).not.toBe(kept1);
    expect(git(root, 'rev-parse', `${kept2}~1`).trim()).toBe(tip);
    expect(git(root, 'show', `${kept2}:shared.txt`)).toBe('top\nmiddle from step-2\nmiddle from step-1\nbottom\n');
    const s1 = tugJson(root, ['state', 'show', 'demo']).json.plans[0].steps.find((s: any) => s.anchor === 'step-1');
    expect(s1).toMatchObject({ status: 'needs_human', review_commit: kept2 });
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-2']);

    // Approved again: the resolved commit now rebases cleanly and is integrated as it is.
    expect(tugJson(root, ['state', 'decide', 'demo', 'step-1', '--approve']).code).toBe(0);
    const r3 = runJsonl(root, [...base, '--resolver', res.argv]);
    ok(r3);
    expect(lines(join(impl.dir, 'calls'))).toEqual(['step-1 1', 'step-2 1']);
    expect(rev.inputs('step-1')).toHaveLength(2);
    expect(res.briefs()).toHaveLength(1);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-2', 'step-1']);
    expect(git(root, 'rev-parse', 'tugplan/demo').trim()).toBe(kept2);
    expect(git(root, 'for-each-ref', 'refs/tugplan/review/').trim()).toBe('');
  });
});
