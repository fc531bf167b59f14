/**
 * The review gate's flags and config keys (docs/run.md §6), refused like the implementer's before anything
 * runs; and a run without a reviewer is the run it always was.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempRepo } from '../helpers/repo.js';
import { planText, runJsonl, runRepo, step } from './helpers.js';

describe('--reviewer, --review-agent, --review-rounds and [run] reviewer|review_agent|review_rounds', () => {
  it.each([
    ["reviewer = 'sh -c \"x'", 'run.reviewer', 'cannot be split shell-style: unterminated double quote'],
    ['review_agent = "gemini"', 'run.review_agent', ''],
    ['review_rounds = 0', 'run.review_rounds', ''],
    ['review_rounds = 21', 'run.review_rounds', ''],
  ])('config %s is ConfigInvalid naming the key', (line, key, reason) => {
    const root = tempRepo({ '.tugtool/config.toml': `[run]\n${line}\n` });
    const r = runCli(['status', '--json'], { cwd: root });
    expect(r.code).toBe(2);
    expect(r.json.error).toMatchObject({ code: 'ConfigInvalid', details: { key } });
    expect(r.json.error.message).toContain(reason);
  });

  it.each([
    [['--reviewer', 'sh "x'], /--reviewer cannot be split shell-style/],
    [['--reviewer', 'true', '--review-agent', 'claude'], /--reviewer and --review-agent cannot be used together/],
    [['--review-agent', 'gemini'], /Allowed choices are claude, codex/],
    [['--review-rounds', '21'], /review-rounds/],
  ])('run %j is refused before anything runs (exit 2)', (flags, why) => {
    const root = runRepo(planText([step(1, 'One')]), 'demo');
    const r = runJsonl(root, ['demo', '--implementer', 'true', ...flags]);
    expect(r.code, r.stdout).toBe(2);
    expect(JSON.stringify(r.events.at(-1))).toMatch(why);
    expect(existsSync(join(root, '.tugtree'))).toBe(false); // no worker worktree: nothing ran
  });

  it('config both reviewer and review_agent: refused, keep one', () => {
    const root = runRepo(planText([step(1, 'One')]), 'demo', {
      '.tugtool/config.toml': '[run]\nreviewer = "true"\nreview_agent = "codex"\n',
    });
    const r = runJsonl(root, ['demo', '--implementer', 'true']);
    expect(r.code).toBe(2);
    expect(r.events.at(-1).error.message).toMatch(/config sets both run.reviewer and run.review_agent/);
    const dry = runCli(['run', 'demo', '--dry-run', '--json'], { cwd: root });
    expect(dry.code).toBe(2);
  });

  it('without a reviewer: no review phase, no review event, no review field in the summary', () => {
    const root = runRepo(planText([step(1, 'One')]), 'demo');
    const r = runJsonl(root, ['demo', '--implementer', 'true']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.events.some((e) => e.type === 'review' || (e.type === 'phase' && e.phase === 'review'))).toBe(false);
    expect(Object.keys(r.events.at(-1)).sort()).toEqual([
      'at',
      'blocked_steps',
      'commits',
      'failed_steps',
      'plan_done',
      'plan_steps',
      'plan_usage',
      'status',
      'steps_completed',
      'type',
      'usage',
      'wall_ms',
      'workers',
    ]);
  });
});
