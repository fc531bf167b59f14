/**
 * Where a plan integrates (docs/run.md §1.11, docs/state.md §8.4) on the embedded state: the first run records
 * its target (a remote, or this clone's own branch); a run or `tugcode commit` that would integrate elsewhere
 * is refused (IntegrationTargetMismatch) before anything changes, its hint the command that integrates in
 * the same place; `--move-integration` moves the plan on purpose; a state.db from before the recorded target
 * (schema 3) still runs, and its next integration records one; doctor names the target and a plan whose
 * steps went to two places; merge's CommitNotIntegrated says where the commit is.
 */
import Database from 'better-sqlite3';
import { realpathSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LATEST_SCHEMA_VERSION } from '../../src/state/migrate.js';
import { runCli } from '../helpers/cli.js';
import { git, tempDir } from '../helpers/repo.js';
import {
  gitSnapshot,
  implementerScript,
  planText,
  remoteWithClones,
  runJsonl,
  runRepo,
  step,
  tugJson,
} from './helpers.js';

const PLAN = planText([step(1, 'Base'), step(2, 'Next', { deps: [1] }), step(3, 'Side', { deps: [1] })]);
const PLAN_PATH = '.tugtool/tugplan-demo.md';

/** A bare remote seeded from a repository with the plan, and a clone of it. */
const cloned = () => remoteWithClones(runRepo(PLAN), ['clone']);

/** What a refused command must leave as it was: the clone's refs and worktrees, the remote's refs, the events. */
function world(clone: string, remote: string) {
  const log = tugJson(clone, ['state', 'log', 'demo', '--limit', '1000']);
  return {
    clone: gitSnapshot(clone),
    remote: git(remote, 'for-each-ref', '--format=%(refname) %(objectname)'),
    events: log.json?.events?.length ?? 0,
  };
}

/** The one JSON document of a refused run: its summary, with the error. */
function refusal(r: { code: number | null; events: any[]; stdout: string; stderr: string }) {
  expect(r.code, r.stdout + r.stderr).toBe(4);
  expect(r.events, r.stdout).toHaveLength(1);
  expect(r.events[0].type).toBe('summary');
  expect(r.events[0].error.code).toBe('IntegrationTargetMismatch');
  return r.events[0].error;
}

describe('the plan integrates where its first run did (SQLite)', () => {
  it('a run without --remote after a run with --remote origin is refused, nothing changed; the hint reruns with --remote origin', () => {
    const { remote, clone } = cloned();
    const impl = implementerScript();
    const first = runJsonl(clone, ['demo', '--implementer', impl.argv, '--remote', 'origin']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const before = world(clone, remote);
    const r = runJsonl(clone, ['demo', '--workers', '2', '--implementer', impl.argv]);
    const err = refusal(r);
    expect(err.details).toMatchObject({
      plan_path: PLAN_PATH,
      recorded_kind: 'remote',
      recorded_where: 'origin',
      kind: 'local',
      command: 'run',
    });
    expect(err.message).toContain('integrates into origin/tugplan/demo');
    // The exact command: this run's own flags, and --remote origin.
    expect(err.hint).toContain(
      `tugcode run ${PLAN_PATH} --workers 2 --implementer ${impl.argv.replace(/"/g, '')} --remote origin`,
    );
    expect(err.hint).toContain('--move-integration');
    expect(world(clone, remote)).toEqual(before);
    // Text mode: the one error line and its hint, nothing on stdout.
    const text = runCli(['run', 'demo', '--implementer', impl.argv], { cwd: clone });
    expect(text.code).toBe(4);
    expect(text.stdout).toBe('');
    expect(text.stderr).toMatch(/^tugcode: IntegrationTargetMismatch: /m);
    expect(text.stderr).toMatch(/^hint: tugcode run .* --remote origin/m);
    // The dry run says it too; the run as the hint says goes on.
    const dry = tugJson(clone, ['run', 'demo', '--dry-run', '--implementer', impl.argv]);
    expect(dry.code).toBe(4);
    expect(dry.json.error.code).toBe('IntegrationTargetMismatch');
    const again = runJsonl(clone, ['demo', '--implementer', impl.argv, '--remote', 'origin']);
    expect(again.code, again.stdout + again.stderr).toBe(0);
  });

  it('the reverse: a run with --remote origin after a local run is refused, the remote untouched; so is [run] remote from the config', () => {
    const { remote, clone } = cloned();
    const impl = implementerScript();
    const first = runJsonl(clone, ['demo', '--implementer', impl.argv]);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const before = world(clone, remote);
    const err = refusal(runJsonl(clone, ['demo', '--implementer', impl.argv, '--remote', 'origin']));
    expect(err.details).toMatchObject({
      recorded_kind: 'local',
      recorded_where: clone,
      kind: 'remote',
      where: 'origin',
    });
    expect(err.hint).toMatch(/^tugcode run \S+ --implementer \S+ {3}\(this clone's own branch; without --remote\)/);
    expect(git(remote, 'branch', '--list', 'tugplan/demo').trim()).toBe('');
    expect(world(clone, remote)).toEqual(before);
    // The remote named by the configuration ([run] remote, here its variable): the hint's command turns it off.
    const env = { TUGCODE_RUN_REMOTE: 'origin' };
    const viaConfig = refusal(runJsonl(clone, ['demo', '--implementer', impl.argv], env));
    expect(viaConfig.details.remote_from).toBe('config');
    expect(viaConfig.hint).toContain(`--remote ''`);
    expect(runJsonl(clone, ['demo', '--implementer', impl.argv, '--remote', ''], env).code).toBe(0);
    expect(world(clone, remote)).toEqual(before);
  });

  it('tugcode commit in a plan that integrates on a remote is refused before anything is written', () => {
    const { remote, clone } = cloned();
    const impl = implementerScript();
    expect(runJsonl(clone, ['demo', '--implementer', impl.argv, '--remote', 'origin']).code).toBe(0);
    const wt = tugJson(clone, ['worktree', 'create', 'demo']);
    expect(wt.code, wt.stderr).toBe(0);
    const W = wt.json.worktree_path as string;
    writeFileSync(join(W, 'extra.txt'), 'x\n');
    const head = git(W, 'rev-parse', 'HEAD').trim();
    const before = world(clone, remote);
    const r = tugJson(clone, ['commit', '--worktree', W, '--plan', 'demo', '--step', 'step-3', '--message', 'more']);
    expect(r.code, r.stderr).toBe(4);
    expect(r.json.error).toMatchObject({
      code: 'IntegrationTargetMismatch',
      details: { recorded_kind: 'remote', recorded_where: 'origin', kind: 'local', command: 'commit' },
    });
    // The run that integrates there, with the flags of the plan's last run (the state keeps them, docs/state.md
    // §2), its `--remote` given once.
    const script = JSON.parse(impl.argv) as string;
    expect(r.json.error.hint).toMatch(
      new RegExp(`^tugcode run ${PLAN_PATH} --implementer ${script} --remote origin {3}\\(tugcode commit`),
    );
    expect(git(W, 'rev-parse', 'HEAD').trim()).toBe(head);
    expect(git(W, 'status', '--porcelain')).toBe('?? extra.txt\n');
    expect(world(clone, remote)).toEqual(before);
  });

  it('--move-integration moves the plan on purpose: the target is recorded anew, with an event', () => {
    const { clone } = cloned();
    const impl = implementerScript();
    expect(runJsonl(clone, ['demo', '--implementer', impl.argv, '--remote', 'origin']).code).toBe(0);
    // This clone's branch mirrors the remote: nothing is lost by integrating here from now on.
    const moved = runJsonl(clone, ['demo', '--implementer', impl.argv, '--move-integration']);
    expect(moved.code, moved.stdout + moved.stderr).toBe(0);
    const events = tugJson(clone, ['state', 'log', 'demo', '--limit', '1000']).json.events;
    const targets = events.filter((e: any) => e.details?.integration_target).map((e: any) => e.details);
    expect(targets).toEqual([
      { integration_target: { kind: 'remote', where: 'origin' } },
      { integration_target: { kind: 'local', where: clone }, previous_target: { kind: 'remote', where: 'origin' } },
    ]);
    refusal(runJsonl(clone, ['demo', '--implementer', impl.argv, '--remote', 'origin']));
  });

  it('a clone moved on disk (its worker trees inside) goes on: same target, git links mended', () => {
    const repo = runRepo(PLAN);
    const impl = implementerScript();
    writeFileSync(join(impl.failDir, 'step-2'), '1');
    const first = runJsonl(repo, ['demo', '--implementer', impl.argv, '--max-attempts', '1']);
    expect(first.code, first.stdout + first.stderr).toBe(4);
    const moved = join(tempDir('tugcode-moved-'), 'elsewhere');
    renameSync(repo, moved);
    // Before anything rewrites the record, readers name the clone as it is now, not its old path.
    const before = tugJson(moved, ['state', 'show', 'demo']).json.plans[0].integration_target;
    expect(before).toEqual({ kind: 'local', where: realpathSync(moved) });
    const check = tugJson(moved, ['doctor']).json.checks.find((c: any) => c.name === 'integration-targets');
    expect(check.message).toContain('tugplan/demo of this clone');
    expect(tugJson(moved, ['state', 'reset', 'demo', 'step-2']).code).toBe(0);
    const r = runJsonl(moved, ['demo', '--implementer', impl.argv]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.events.at(-1)).toMatchObject({ type: 'summary', status: 'ok', plan_done: true });
    expect(git(moved, 'worktree', 'list', '--porcelain')).not.toContain('prunable');
    // The record followed the clone: show names where it is now.
    const shown = tugJson(moved, ['state', 'show', 'demo']).json.plans[0].integration_target;
    expect(shown).toEqual({ kind: 'local', where: realpathSync(moved) });
  });

  it('a state.db from before the recorded target (schema 3) still works: its next run records the target', () => {
    const { remote, clone } = cloned();
    const impl = implementerScript();
    expect(runJsonl(clone, ['demo', '--implementer', impl.argv]).code).toBe(0);
    // The same store as tugcode before the columns left it: schema 3, no target.
    const dbPath = join(clone, '.tugtool', 'state.db');
    const db = new Database(dbPath);
    db.exec('ALTER TABLE plans DROP COLUMN integration_kind; ALTER TABLE plans DROP COLUMN integration_where;');
    db.exec('ALTER TABLE plans DROP COLUMN last_run_flags; ALTER TABLE plans DROP COLUMN last_run_ended_at;');
    db.exec('DELETE FROM schema_version; INSERT INTO schema_version (version) VALUES (3);');
    db.exec("DELETE FROM events WHERE details_json LIKE '%integration_target%'");
    db.close();
    // Readers do not migrate: doctor and status read it as it is.
    const doctor = tugJson(clone, ['doctor']);
    const check = doctor.json.checks.find((c: any) => c.name === 'integration-targets');
    expect(check).toMatchObject({ status: 'pass', message: expect.stringContaining('predates') });
    expect(tugJson(clone, ['status', 'demo']).code).toBe(0);
    // Nothing recorded: the next run integrates where it says (publishing this clone's branch) and records it.
    const r = runJsonl(clone, ['demo', '--implementer', impl.argv, '--remote', 'origin']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(git(remote, 'rev-parse', 'tugplan/demo').trim()).toBe(git(clone, 'rev-parse', 'tugplan/demo').trim());
    const version = new Database(dbPath, { readonly: true });
    expect(version.prepare('SELECT version FROM schema_version').get()).toEqual({ version: LATEST_SCHEMA_VERSION });
    expect(version.prepare('SELECT integration_kind, integration_where FROM plans').get()).toEqual({
      integration_kind: 'remote',
      integration_where: 'origin',
    });
    version.close();
    refusal(runJsonl(clone, ['demo', '--implementer', impl.argv]));
  });

  it('doctor names the target and warns about steps integrated in two places; merge says where a commit is', () => {
    const { clone } = cloned();
    const impl = implementerScript();
    expect(runJsonl(clone, ['demo', '--implementer', impl.argv, '--remote', 'origin']).code).toBe(0);
    const ok = tugJson(clone, ['doctor']).json.checks.find((c: any) => c.name === 'integration-targets');
    expect(ok).toMatchObject({ status: 'pass', message: `${PLAN_PATH}: origin/tugplan/demo` });
    // Something integrated into the clone's own branch behind tugcode's back (an older tugcode, a hand merge).
    git(clone, 'switch', '-q', 'tugplan/demo');
    writeFileSync(join(clone, 'stray.txt'), 'stray\n');
    git(clone, 'add', 'stray.txt');
    git(clone, '-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-qm', 'stray');
    git(clone, 'switch', '-q', 'main');
    const split = tugJson(clone, ['doctor']).json.checks.find((c: any) => c.name === 'integration-targets');
    expect(split.status).toBe('warn');
    expect(split.message).toContain('tugplan/demo has 1 commit(s) that origin/tugplan/demo lacks');
    expect(split.fix).toContain('git rebase origin/tugplan/demo');
    // The remote moved on (another host) while this clone's branch stayed behind: merge names the fetch.
    git(clone, 'branch', '-f', 'tugplan/demo', 'origin/tugplan/demo~1');
    const dry = tugJson(clone, ['merge', 'demo', '--dry-run']);
    expect(dry.code).toBe(4);
    expect(dry.json.error.code).toBe('CommitNotIntegrated');
    expect(dry.json.error.details.found_on).toContain('origin/tugplan/demo');
    expect(dry.json.error.hint).toContain('git fetch origin tugplan/demo:tugplan/demo');
  });
});
