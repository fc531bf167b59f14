/**
 * `[run] implementer` is split shell-style (docs/run.md §2): a value whose quotes do not balance can never
 * run, so loading the config refuses it with ConfigInvalid naming the key (or the variable that set it),
 * instead of every later step failing on it.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempRepo } from '../helpers/repo.js';
import { planText, runJsonl, runRepo, step } from '../run/helpers.js';

describe('[run] implementer in config', () => {
  it.each([
    ['an unbalanced double quote', "implementer = 'node \"impl.mjs'", 'unterminated double quote'],
    ['an unbalanced single quote', 'implementer = "sh -c \'echo hi"', 'unterminated single quote'],
    ['a trailing backslash', 'implementer = "node impl.mjs \\\\"', 'trailing backslash'],
  ])('refuses %s with ConfigInvalid naming run.implementer', (_what, line, reason) => {
    const root = tempRepo({ '.tugtool/config.toml': `[run]\n${line}\n` });
    const r = runCli(['status', '--json'], { cwd: root });
    expect(r.code).toBe(2);
    expect(r.json.error.code).toBe('ConfigInvalid');
    expect(r.json.error.details.key).toBe('run.implementer');
    expect(r.json.error.message).toContain(`run.implementer: cannot be split shell-style: ${reason}`);
  });

  it('refuses TUGCODE_RUN_IMPLEMENTER with an unbalanced quote, naming the variable', () => {
    const root = tempRepo();
    const r = runCli(['status', '--json'], { cwd: root, env: { TUGCODE_RUN_IMPLEMENTER: 'node "impl.mjs' } });
    expect(r.code).toBe(2);
    expect(r.json.error.details).toMatchObject({ source: 'TUGCODE_RUN_IMPLEMENTER', key: 'run.implementer' });
  });

  it('accepts balanced quotes and escapes', () => {
    const root = tempRepo({
      '.tugtool/config.toml': `[run]\nimplementer = "sh -c \\"node impl.mjs 'a b' \\\\\\"c\\\\\\"\\" d\\\\ e"\n`,
    });
    const r = runCli(['status', '--json'], { cwd: root });
    expect(r.json?.error?.code).not.toBe('ConfigInvalid');
  });
});

describe('run --implementer', () => {
  it('refuses an unbalanced quote before claiming anything (InvalidArgument)', () => {
    const root = runRepo(planText([step(1, 'Base')]));
    const r = runJsonl(root, ['demo', '--implementer', 'node "impl.mjs']);
    expect(r.code).toBe(2);
    expect(r.events).toHaveLength(1); // the summary alone: no step was claimed or failed
    expect(r.events[0].error.message).toBe(
      '--implementer cannot be split shell-style: unterminated double quote in "node \\"impl.mjs"',
    );
  });
});
