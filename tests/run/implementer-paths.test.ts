/**
 * The run's programs as a user names them (docs/run.md §2): a program path with a slash given by a flag is
 * resolved where tugcode runs, one from config at the repository root, and checked before the first claim
 * (also by `--dry-run`); a program that cannot be started at a step stops the run instead of burning every
 * attempt. A run without an implementer says so. The hints of a stopped run repeat its flags (§1.2).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, checkSchema } from '../helpers/cli.js';
import { git, tempDir } from '../helpers/repo.js';
import { runDryRunSchema, runEventSchema } from '../../src/contract/schemas/run.js';
import { agentCommandLine } from '../../src/run/agents.js';
import { runAgain, TugError } from '../../src/contract/errors.js';
import { redactCommand, runFlags } from '../../src/run/run-flags.js';
import { shellArg } from '../../src/util/shell-arg.js';
import { dbPathOf, dump } from '../state/helpers.js';
import { gitSnapshot, planText, runJsonl, runRepo, step, stepCommits, tugJson } from './helpers.js';
import { implementer, reviewerScript } from './review-helpers.js';

const PLAN = planText([step(1, 'Base'), step(2, 'Next', { deps: [1] })]);

/** A script that writes `<step>.txt`; `extra` runs after it (e.g. removing itself). */
const IMPL = (extra = '') => `#!/bin/sh\necho "$TUG_STEP" > "$TUG_WORKTREE/$TUG_STEP.txt"\n${extra}`;

function writeScript(path: string, text: string, mode = 0o755): void {
  writeFileSync(path, text);
  chmodSync(path, mode);
}

/** `tugcode run …` in text mode (off a TTY: one line per event), as a user runs it. */
function runText(cwd: string, args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, 'run', ...args], {
    cwd,
    env: { ...process.env, NODE_ENV: 'test', NO_COLOR: '1', ...env },
    encoding: 'utf8',
    timeout: 180_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Everything a refused run must leave as it was. */
function untouched(root: string) {
  return { ...gitSnapshot(root), state: dump(dbPathOf(root)), status: git(root, 'status', '--porcelain') };
}

describe('program paths (docs/run.md §2)', () => {
  it("README's `--implementer ./impl.sh`: an uncommitted script, resolved where tugcode runs, works with 2 workers", () => {
    const root = runRepo(PLAN, 'rel');
    writeScript(join(root, 'impl.sh'), IMPL());
    const r = runJsonl(root, ['rel', '--workers', '2', '--implementer', './impl.sh']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
    expect(stepCommits(root, 'tugplan/rel')).toEqual(['step-1', 'step-2']);
    // From a subdirectory, `./x` is that directory's.
    const sub = runRepo(PLAN, 'sub');
    mkdirSync(join(sub, 'tools'));
    writeScript(join(sub, 'tools', 'impl.sh'), IMPL());
    const s = runJsonl(join(sub, 'tools'), ['sub', '--implementer', './impl.sh --fast']);
    expect(s.code, s.stdout + s.stderr).toBe(0);
  });

  it('--dry-run names the absolute program; a missing one is refused before any claim, changing nothing', () => {
    const root = runRepo(PLAN, 'dry');
    writeScript(join(root, 'impl.sh'), IMPL());
    const d = runText(root, ['dry', '--dry-run', '--implementer', './impl.sh']);
    expect(d.code, d.stdout + d.stderr).toBe(0);
    expect(d.stdout).toContain(`implementer:  ${join(root, 'impl.sh')}`);

    const before = untouched(root);
    const dry = runText(root, ['dry', '--dry-run', '--implementer', './nope.sh']);
    expect(dry.code).toBe(2);
    expect(dry.stderr).toContain(
      `ProgramNotRunnable: --implementer names ./nope.sh, which does not exist (${join(root, 'nope.sh')})`,
    );
    expect(dry.stderr).toContain(`resolved against ${root}`);
    const r = runJsonl(root, ['dry', '--workers', '2', '--implementer', './nope.sh']);
    expect(r.code).toBe(2);
    for (const e of r.events) checkSchema(runEventSchema, e);
    expect(r.events.map((e) => e.type)).toEqual(['summary']);
    expect(r.events[0].error).toMatchObject({ code: 'ProgramNotRunnable', details: { argument: '--implementer' } });
    expect(untouched(root)).toEqual(before);
  });

  it('not executable, not on PATH, and every command of the run (reviewer, resolver, config values) is checked', () => {
    const root = runRepo(PLAN, 'chk');
    writeScript(join(root, 'impl.sh'), IMPL());
    writeScript(join(root, 'plain.sh'), IMPL(), 0o644);
    const before = untouched(root);
    const x = runJsonl(root, ['chk', '--implementer', './impl.sh', '--reviewer', 'plain.sh']);
    // A bare name is looked up on PATH, as the spawn does.
    expect(x.events.at(-1).error).toMatchObject({
      code: 'ProgramNotRunnable',
      details: { argument: '--reviewer', reason: 'is not on PATH' },
    });
    const p = runJsonl(root, ['chk', '--implementer', './impl.sh', '--resolver', './plain.sh --merge']);
    expect(p.code).toBe(2);
    expect(p.events.at(-1).error).toMatchObject({
      code: 'ProgramNotRunnable',
      details: { argument: '--resolver', reason: 'is not executable' },
      hint: `chmod +x ${join(root, 'plain.sh')}`,
    });
    // A config value is the repository root's, wherever tugcode runs; an unused one is not checked.
    writeFileSync(
      join(root, '.tugtool', 'config.toml'),
      '[run]\nimplementer = "scripts/impl.sh"\nnotify = "./no-notify.sh"\n',
    );
    mkdirSync(join(root, 'deep'));
    const c = runJsonl(join(root, 'deep'), ['chk', '--implementer', './../impl.sh']);
    expect(c.events.at(-1).error).toMatchObject({
      code: 'ProgramNotRunnable',
      details: { argument: 'run.notify', path: join(root, 'no-notify.sh') },
    });
    expect(c.events.at(-1).error.hint).toContain('the repository root, for a config value');
    writeFileSync(join(root, '.tugtool', 'config.toml'), '[run]\nimplementer = "scripts/impl.sh"\n');
    const cfg = runJsonl(join(root, 'deep'), ['chk']);
    expect(cfg.events.at(-1).error).toMatchObject({
      code: 'ProgramNotRunnable',
      details: { argument: 'run.implementer', path: join(root, 'scripts', 'impl.sh') },
    });
    // Nothing of those refusals changed anything (the config file aside, which the test wrote).
    const { status: _s, ...rest } = untouched(root);
    const { status: _b, ...was } = before;
    expect(rest).toEqual(was);
    mkdirSync(join(root, 'scripts'));
    writeScript(join(root, 'scripts', 'impl.sh'), IMPL());
    const ok = runJsonl(join(root, 'deep'), ['chk']);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
  });

  it.each([
    ['removed', 'rm -f "$0"', 'does not exist'],
    ['made unexecutable', 'chmod -x "$0"', 'is not executable'],
  ])('an implementer %s after the check stops the run at once, burning no attempt', (_what, extra, reason) => {
    const root = runRepo(PLAN, 'gone');
    const dir = tempDir('tugcode-gone-');
    writeScript(join(dir, 'impl.sh'), IMPL(extra));
    const r = runJsonl(root, ['gone', '--implementer', join(dir, 'impl.sh')]);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    for (const e of r.events) checkSchema(runEventSchema, e);
    expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
    expect(r.events.filter((e) => e.type === 'step_completed').map((e) => e.step_anchor)).toEqual(['step-1']);
    expect(r.events.at(-1).error).toMatchObject({
      code: 'ProgramNotRunnable',
      details: { argument: 'the implementer', reason, program: join(dir, 'impl.sh') },
    });
    // The claim was handed back with its attempt unspent: step-2 is ready, never failed.
    const show = tugJson(root, ['state', 'show', 'gone']);
    const s2 = show.json.plans[0].steps.find((x: any) => x.anchor === 'step-2');
    expect(s2, JSON.stringify(s2)).toMatchObject({ status: 'pending', claimed_by: null, fail_reason: null });
  });
});

/**
 * The PATH of the tests without any directory holding `names` (the machine may have them installed), git
 * kept reachable through a directory of its own.
 */
function pathWithout(names: string[]): string {
  const dirs = (process.env.PATH ?? '').split(':').filter((d) => d && !names.some((n) => existsSync(join(d, n))));
  const gitBin = tempDir('tugcode-git-bin-');
  const found = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
  symlinkSync(found, join(gitBin, 'git'));
  return [gitBin, ...dirs].join(':');
}

describe('agent presets whose CLI is not installed (docs/run.md §2)', () => {
  it.each([
    [['--implementer', 'IMPL', '--review-agent', 'codex'], '', '--review-agent', 'codex'],
    [['--agent', 'codex'], '', '--agent', 'codex'],
    [['--implementer', 'IMPL'], '[run]\nreview_agent = "claude"\n', 'run.review_agent', 'claude'],
    [[], '[run]\nagent = "claude"\n', 'run.agent', 'claude'],
  ])(
    '%j (config %j): refused before any claim, run and dry run, nothing changed',
    (flags, config, argument, program) => {
      const root = runRepo(PLAN, 'noagent', config ? { '.tugtool/config.toml': config } : {});
      writeScript(join(root, 'impl.sh'), IMPL());
      const args = flags.map((f) => (f === 'IMPL' ? './impl.sh' : f));
      const env = { PATH: pathWithout(['claude', 'codex']) };
      const before = untouched(root);
      const r = runJsonl(root, ['noagent', '--workers', '2', ...args], env);
      expect(r.code, r.stdout + r.stderr).toBe(2);
      expect(r.events.map((e) => e.type)).toEqual(['summary']);
      const error = {
        code: 'ProgramNotRunnable',
        message: `${argument} names ${program}, which is not on PATH`,
        details: { argument, program, reason: 'is not on PATH' },
        hint: `install ${program}: the agent preset runs it by that name, found on PATH`,
      };
      expect(r.events[0].error).toMatchObject(error);
      const dry = runText(root, ['noagent', '--dry-run', ...args], env);
      expect(dry.code, dry.stdout + dry.stderr).toBe(2);
      expect(dry.stderr).toContain(`ProgramNotRunnable: ${error.message}\nhint: ${error.hint}`);
      expect(untouched(root)).toEqual(before);
    },
  );

  it('a bare program gone from PATH at a step: not on PATH, the hint says install it', () => {
    const root = runRepo(PLAN, 'bare');
    const bin = tempDir('tugcode-bare-');
    writeScript(join(bin, 'tug-impl-once'), IMPL('rm -f "$0"'));
    const r = runJsonl(root, ['bare', '--implementer', 'tug-impl-once'], { PATH: `${bin}:${process.env.PATH ?? ''}` });
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.events.at(-1).error).toMatchObject({
      code: 'ProgramNotRunnable',
      details: { argument: 'the implementer', program: 'tug-impl-once', reason: 'is not on PATH' },
      hint: 'install tug-impl-once, or name it by a path (./tug-impl-once or an absolute one)',
    });
  });
});

describe('a run without an implementer (docs/run.md §2)', () => {
  it('completes the steps by their checkpoints alone, and says so in text and in the event stream', () => {
    const root = runRepo(PLAN, 'noimpl');
    const r = runJsonl(root, ['noimpl']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const warning = r.events.findIndex((e) => e.type === 'warning' && e.code === 'NoImplementer');
    expect(warning).toBeGreaterThan(-1);
    expect(warning).toBeLessThan(r.events.findIndex((e) => e.type === 'claimed'));
    const t = runText(runRepo(PLAN, 'noimpl'), ['noimpl']);
    expect(t.code, t.stdout + t.stderr).toBe(0);
    expect(t.stdout.split('\n').slice(0, 3).join('\n')).toContain('warning: NoImplementer: no implementer');
    expect(t.stderr).toContain('tugcode: warning: NoImplementer');
    const d = runText(runRepo(PLAN, 'noimpl'), ['noimpl', '--dry-run']);
    expect(d.stderr).toContain('NoImplementer');
    // A rerun with every step completed has no step the warning could be about.
    const again = runJsonl(root, ['noimpl']);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.events.filter((e) => e.type === 'warning')).toEqual([]);
    expect(runText(root, ['noimpl', '--dry-run']).stderr).not.toContain('NoImplementer');
    const withOne = runJsonl(root, ['noimpl', '--implementer', 'true']);
    expect(withOne.events.filter((e) => e.type === 'warning')).toEqual([]);
  });

  it.each(['', '   '])('an empty --implementer %j (an unset variable) is refused before anything runs', (empty) => {
    const root = runRepo(PLAN, 'noimpl');
    const r = runJsonl(root, ['noimpl', '--implementer', empty]);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.events.at(-1).error).toMatchObject({ code: 'InvalidArgument', details: { implementer: empty } });
    // Blanks are as empty as '': the same refusal, with the way to run without an implementer.
    const message = '--implementer is empty (an unset variable?); to run without an implementer, leave the flag out';
    expect(r.events.at(-1).error.message).toBe(message);
    const dry = tugJson(root, ['run', 'noimpl', '--implementer', empty, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(2);
    expect(dry.json.error).toMatchObject({ code: 'InvalidArgument', message, details: { implementer: empty } });
    expect(existsSync(join(root, '.tugtree'))).toBe(false);
    expect(tugJson(root, ['state', 'show', 'noimpl']).code).not.toBe(0); // never initialised
  });

  it.each([
    ['--reviewer', '', 'a reviewer, leave the flag out and run.reviewer unset'],
    ['--reviewer', '   ', 'a reviewer, leave the flag out and run.reviewer unset'],
    ['--resolver', '', 'a resolver (the implementer resolves), leave the flag out'],
    ['--resolver', ' ', 'a resolver (the implementer resolves), leave the flag out'],
  ])(
    'an empty %s %j (an unset variable) is refused, run and dry run, even with one in config',
    (flag, empty, without) => {
      // The config's reviewer and resolver: an empty flag must not silently turn them off.
      const root = runRepo(PLAN, 'noimpl', {
        '.tugtool/config.toml': '[run]\nreviewer = "true"\nresolver = "true"\n',
      });
      const key = flag.slice(2);
      const message = `${flag} is empty (an unset variable?); to run without ${without}`;
      const r = runJsonl(root, ['noimpl', '--implementer', 'true', flag, empty]);
      expect(r.code, r.stdout + r.stderr).toBe(2);
      expect(r.events.map((e) => e.type)).toEqual(['summary']);
      expect(r.events.at(-1).error).toMatchObject({ code: 'InvalidArgument', message, details: { [key]: empty } });
      const dry = tugJson(root, ['run', 'noimpl', '--implementer', 'true', flag, empty, '--dry-run']);
      expect(dry.code, dry.stderr).toBe(2);
      expect(dry.json.error).toMatchObject({ code: 'InvalidArgument', message, details: { [key]: empty } });
      expect(existsSync(join(root, '.tugtree'))).toBe(false);
      expect(tugJson(root, ['state', 'show', 'noimpl']).code).not.toBe(0); // never initialised
    },
  );

  it('--dry-run shows the review gate (reviewer or review agent, rounds), or that there is none', () => {
    const root = runRepo(PLAN, 'gate');
    const none = runText(root, ['gate', '--dry-run', '--implementer', 'true']);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toContain('\nreview gate: none\n');
    expect(tugJson(root, ['run', 'gate', '--dry-run', '--implementer', 'true']).json.review).toBeNull();
    const flag = runText(root, [
      'gate',
      '--dry-run',
      '--implementer',
      'true',
      '--reviewer',
      'true --x',
      '--review-rounds',
      '1',
    ]);
    expect(flag.stdout).toContain('\nreview gate: true --x, at most 1 round a step\n');
    // From config, as the real run takes it; a preset by its name, its command line in the JSON.
    writeFileSync(join(root, '.tugtool', 'config.toml'), '[run]\nreview_agent = "codex"\nreview_rounds = 4\n');
    const bin = tempDir('tugcode-fake-codex-');
    writeScript(join(bin, 'codex'), '#!/bin/sh\nexit 0\n');
    const env = { PATH: `${bin}:${process.env.PATH ?? ''}` };
    const cfg = runText(root, ['gate', '--dry-run', '--implementer', 'true'], env);
    expect(cfg.code, cfg.stderr).toBe(0);
    expect(cfg.stdout).toContain('\nreview gate: codex (review agent), at most 4 rounds a step\n');
    const j = tugJson(root, ['run', 'gate', '--dry-run', '--implementer', 'true'], env);
    expect(j.code, j.stderr).toBe(0);
    checkSchema(runDryRunSchema, j.json);
    expect(j.json.review).toEqual({
      reviewer: agentCommandLine('codex', 'reviewer'),
      review_agent: 'codex',
      rounds: 4,
    });
  });
});

describe("the hints of a stopped run repeat the run's flags (docs/run.md §1.2)", () => {
  it('PlanIncomplete: reset, then the same run', () => {
    const root = runRepo(PLAN, 'inc');
    const dir = join(root, 'tools');
    mkdirSync(dir);
    writeScript(join(dir, 'fail me.sh'), '#!/bin/sh\necho no >&2\nexit 1\n');
    // -C: as if started in that directory (git's rule), so `./` is the directory -C names.
    const args = ['inc', '--workers', '2', '--implementer', `'./fail me.sh' --x`, '--max-attempts', '1'];
    const r = runJsonl(root, [...args, '-C', 'tools']);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    const err = r.events.at(-1).error;
    const impl = `'${join(dir, 'fail me.sh').replace(/'/g, "'\\''")}' --x`;
    // The -C the user gave, made absolute, comes first: the hint's commands name it too.
    expect(err.details.run_flags).toEqual(['-C', dir, '--workers', '2', '--implementer', impl, '--max-attempts', '1']);
    expect(err.hint).toBe(
      `tugcode -C ${dir} state reset .tugtool/tugplan-inc.md step-1 && tugcode -C ${dir} run ` +
        `.tugtool/tugplan-inc.md --workers 2 --implementer '${impl.replace(/'/g, "'\\''")}' --max-attempts 1`,
    );
  });

  it('after tugcode -C DIR run, the hints pasted in the same shell (outside the repo) work', () => {
    const outside = tempDir('tugcode-shell-');
    const root = runRepo(PLAN, 'paste');
    writeScript(join(root, 'fail.sh'), '#!/bin/sh\nexit 1\n');
    const rel = relative(outside, root);
    const r = spawnSync(
      process.execPath,
      [CLI, '-C', rel, 'run', 'paste', '--implementer', './fail.sh', '--max-attempts', '1'],
      { cwd: outside, env: { ...process.env, NODE_ENV: 'test', NO_COLOR: '1' }, encoding: 'utf8' },
    );
    expect(r.status, r.stdout + r.stderr).toBe(4);
    const hint = /^hint: (.*)$/m.exec(r.stderr)![1]!;
    expect(hint).toBe(
      `tugcode -C ${root} state reset .tugtool/tugplan-paste.md step-1 && ` +
        `tugcode -C ${root} run .tugtool/tugplan-paste.md --implementer ${join(root, 'fail.sh')} --max-attempts 1`,
    );
    // Pasted where the user ran tugcode: the reset works, and the run runs the plan again (failing alike).
    const sh = (cmd: string) =>
      spawnSync('sh', ['-c', `tugcode() { ${shellArg(process.execPath)} ${shellArg(CLI)} "$@"; }\n${cmd}`], {
        cwd: outside,
        env: { ...process.env, NODE_ENV: 'test', NO_COLOR: '1' },
        encoding: 'utf8',
      });
    const again = sh(hint);
    expect(again.status, again.stdout + again.stderr).toBe(4);
    expect(again.stderr).toContain('PlanIncomplete');
    const s1 = tugJson(root, ['state', 'show', 'paste']).json.plans[0].steps.find((x: any) => x.anchor === 'step-1');
    expect(s1).toMatchObject({ status: 'failed', attempt: 2, failures: 1 }); // reset, then claimed again
    // The NeedsHuman hint's decide commands name it as well.
    const d = { plan_path: '.tugtool/tugplan-x.md', steps: [{ step_anchor: 'step-1' }], run_flags: ['-C', '/a b'] };
    expect(new TugError('NeedsHuman', d).hint).toBe(
      `tugcode -C '/a b' state decide .tugtool/tugplan-x.md step-1 --approve (or --revise "<notes>", or ` +
        `--reject "<reason>"); then tugcode -C '/a b' run .tugtool/tugplan-x.md`,
    );
  });

  it('NeedsHuman: the stderr hint and the text summary name the same run, reviewer included', () => {
    const root = runRepo(planText([step(1, 'One')]), 'esc');
    const impl = implementer();
    const rev = reviewerScript();
    rev.answer('step-1', ['ESCALATE']);
    const t = runText(root, ['esc', '--implementer', impl.argv, '--reviewer', rev.argv, '--review-rounds', '2']);
    expect(t.code, t.stdout + t.stderr).toBe(4);
    // Each command string re-quoted word by word: the JSON-quoted script path becomes a plain word.
    const word = (argv: string) => shellArg(JSON.parse(argv) as string);
    const again =
      `tugcode run .tugtool/tugplan-esc.md --implementer ${word(impl.argv)} ` +
      `--reviewer ${word(rev.argv)} --review-rounds 2`;
    expect(t.stdout).toContain(`then: ${again}`);
    expect(t.stderr).toContain(`; then ${again}`);
  });

  it('BudgetExhausted replaces the budget it names; secrets in a command are never repeated', () => {
    const d = {
      plan_path: '.tugtool/tugplan-b.md',
      budget_usd: 1,
      run_flags: ['--workers', '3', '--budget-usd', '1', '--merge'],
    };
    expect(new TugError('BudgetExhausted', d).hint).toBe(
      'tugcode state show .tugtool/tugplan-b.md (its usage), then raise the budget: ' +
        'tugcode run .tugtool/tugplan-b.md --workers 3 --merge --budget-usd <more>',
    );
    expect(runAgain({ plan_path: 'p.md' })).toBe('tugcode run p.md');
    expect(redactCommand('env API_KEY=sk-1 agent --token abc --password=x https://u:pw@h/x ok')).toBe(
      "env 'API_KEY=<redacted>' agent --token <redacted> '--password=<redacted>' 'https://u:<redacted>@h/x' ok",
    );
    expect(redactCommand('node impl.mjs "a b"')).toBe('node impl.mjs "a b"');
    const flags = runFlags(
      { plan: 'x', dry_run: true, board: true, workers: 2, implementer: './a.sh', no_checkpoints: true },
      '/w',
    );
    expect(flags).toEqual(['--workers', '2', '--implementer', '/w/a.sh', '--no-checkpoints']);
  });
});
