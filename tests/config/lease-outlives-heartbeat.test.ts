/**
 * A claim's lease must outlive the heartbeat interval, or it lapses before its first heartbeat and another
 * worker may take the step mid-work (docs/run.md §2). The config is checked when it loads (ConfigInvalid
 * naming both keys); `run --lease-duration/--heartbeat` when the run starts (InvalidArgument naming both,
 * nothing run). An integer too large for a number names its key too.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempRepo } from '../helpers/repo.js';
import { implementerScript, planText, runJsonl, runRepo, step } from '../run/helpers.js';

const PLAN = planText([step(1, 'Base')]);

describe('lease and heartbeat in config', () => {
  it.each([
    ['heartbeat over the lease', 'state]\nlease_seconds = 300\n[run]\nheartbeat_seconds = 600', '(600 s)', '(300 s)'],
    ['heartbeat equal to the lease', 'state]\nlease_seconds = 90\n[run]\nheartbeat_seconds = 90', '(90 s)', '(90 s)'],
    ['a lease under the default heartbeat', 'state]\nlease_seconds = 30', '(60 s)', '(30 s)'],
  ])('refuses %s with ConfigInvalid naming both keys', (_what, toml, hb, lease) => {
    const root = tempRepo({ '.tugtool/config.toml': `[${toml}\n` });
    const r = runCli(['status', '--json'], { cwd: root });
    expect(r.code).toBe(2);
    expect(r.json.error.code).toBe('ConfigInvalid');
    expect(r.json.error.message).toContain(
      `run.heartbeat_seconds ${hb} must be shorter than state.lease_seconds ${lease}: a lease would lapse before its first heartbeat`,
    );
  });

  it('refuses the same from the environment', () => {
    const root = tempRepo();
    const r = runCli(['status', '--json'], { cwd: root, env: { TUGCODE_STATE_LEASE_SECONDS: '45' } });
    expect(r.code).toBe(2);
    expect(r.json.error.message).toMatch(/run\.heartbeat_seconds \(60 s\) must be shorter than state\.lease_seconds/);
  });

  it('accepts a heartbeat shorter than the lease', () => {
    const root = tempRepo({ '.tugtool/config.toml': '[state]\nlease_seconds = 61\n' });
    expect(runCli(['status', '--json'], { cwd: root }).json?.error?.code).not.toBe('ConfigInvalid');
  });

  it.each([
    ['state', 'lease_seconds', '9223372036854775807'],
    ['run', 'workers', '-9223372036854775808'],
    ['kernel', 'lock_timeout', '18446744073709551616'],
  ])('names %s.%s when its integer is too large for a number', (table, key, value) => {
    const root = tempRepo({ '.tugtool/config.toml': `[${table}]\n${key} = ${value}\n` });
    const r = runCli(['status', '--json'], { cwd: root });
    expect(r.code).toBe(2);
    expect(r.json.error.details.key).toBe(`${table}.${key}`);
    expect(r.json.error.message).toContain(`${table}.${key} must be an integer`);
    expect(r.json.error.message).toContain(value.replace(/^-/, ''));
  });
});

describe('run --lease-duration and --heartbeat', () => {
  it.each([
    [['--lease-duration', '5', '--heartbeat', '60'], '--heartbeat (60 s) must be shorter than --lease-duration (5 s)'],
    [['--lease-duration', '30'], 'run.heartbeat_seconds in config (60 s) must be shorter than --lease-duration (30 s)'],
    [['--heartbeat', '7200'], '--heartbeat (7200 s) must be shorter than state.lease_seconds in config (7200 s)'],
  ])('refuses %j before running anything (InvalidArgument)', (flags, message) => {
    const root = runRepo(PLAN);
    const impl = implementerScript();
    const r = runJsonl(root, ['demo', '--implementer', impl.argv, ...flags]);
    expect(r.code, r.stdout).toBe(2);
    expect(r.events).toHaveLength(1); // the summary alone: nothing was claimed or started
    expect(r.events[0].error.code).toBe('InvalidArgument');
    expect(r.events[0].error.message).toContain(message);
    expect(r.events[0].error.hint).toContain('lower --heartbeat or raise --lease-duration');
    const dry = runCli(['run', 'demo', '--implementer', impl.argv, ...flags, '--dry-run', '--json'], { cwd: root });
    expect([dry.code, dry.json.error.code]).toEqual([2, 'InvalidArgument']);
    expect(dry.json.error.message).toContain(message);
  });

  it('runs with a heartbeat shorter than the lease', () => {
    const root = runRepo(PLAN);
    const impl = implementerScript();
    const r = runJsonl(root, ['demo', '--implementer', impl.argv, '--lease-duration', '5', '--heartbeat', '1']);
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
  });
});
