/**
 * The state.db checks of `tugcode doctor` (docs/git.md §7). The database is opened read-only (never
 * created, never migrated); every check reports a `fix` naming the command that repairs it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { DoctorCheck } from './doctor.js';
import type { RepoCtx } from './flow-context.js';
import type { Conn } from '../state/sql/conn.js';
import { gitRunner } from '../git/exec.js';
import { gitWorktrees } from '../git/repo.js';
import { shellArg } from '../util/shell-arg.js';

export const pass = (name: string, message: string, fix: string): DoctorCheck => ({
  name,
  status: 'pass',
  message,
  fix,
});
export const warn = (name: string, message: string, fix: string): DoctorCheck => ({
  name,
  status: 'warn',
  message,
  fix,
});
export const failed = (name: string, message: string, fix: string): DoctorCheck => ({
  name,
  status: 'fail',
  message,
  fix,
});

export async function stateChecks(ctx: RepoCtx): Promise<DoctorCheck[]> {
  const { stateDbPath, openRead, isNewerSchema } = await import('../state/db.js');
  const { LATEST_SCHEMA_VERSION } = await import('../state/migrate.js');
  const mainRoot = ctx.repo.mainRoot;
  const path = stateDbPath(mainRoot, ctx.env);
  const rel = path.startsWith(mainRoot + '/') ? path.slice(mainRoot.length + 1) : path;
  const recover = `move ${rel} aside (mv ${rel} ${rel}.bad), then tugcode state init <plan> and tugcode state reconcile <plan> for each plan`;
  const names = [
    'state-db-integrity',
    'state-db-schema',
    'state-db-wal',
    'orphaned-plans',
    'expired-leases',
    'failed-steps',
  ];
  const skipped = (why: string): DoctorCheck[] => names.map((n) => pass(n, `skipped: ${why}`, 'none needed'));

  if (!existsSync(path)) {
    return [
      warn(
        'state-db-opens',
        `no state database at ${rel} yet`,
        'tugcode state init <plan> (or tugcode worktree create <plan>) creates it',
      ),
      ...skipped('no state.db'),
    ];
  }
  let store;
  try {
    store = openRead(path, { env: ctx.env });
  } catch (e) {
    return [
      failed('state-db-opens', `${rel} cannot be read: ${(e as Error).message}`, recover),
      ...skipped('state.db does not open'),
    ];
  }
  if (!store)
    return [
      warn('state-db-opens', `no state database at ${rel}`, 'tugcode state init <plan>'),
      ...skipped('no state.db'),
    ];
  const checks: DoctorCheck[] = [pass('state-db-opens', `${rel} opens read-only`, 'none needed')];
  try {
    const db = store.raw;
    let integrity: string;
    try {
      integrity = String(db.pragma('integrity_check', { simple: true }));
    } catch (e) {
      integrity = (e as Error).message;
    }
    checks.push(
      integrity === 'ok'
        ? pass('state-db-integrity', 'PRAGMA integrity_check: ok', 'none needed')
        : failed('state-db-integrity', `PRAGMA integrity_check: ${integrity}`, recover),
    );
    if (isNewerSchema(store.version)) {
      checks.push(
        failed(
          'state-db-schema',
          `schema version ${store.version} is newer than this tugcode (${LATEST_SCHEMA_VERSION})`,
          'upgrade tugcode (npm install tugcode@latest)',
        ),
      );
    } else if (store.version < LATEST_SCHEMA_VERSION) {
      checks.push(
        warn(
          'state-db-schema',
          `schema version ${store.version}; ${LATEST_SCHEMA_VERSION} is current`,
          'any state-changing tugcode command migrates it (e.g. tugcode state init <plan>)',
        ),
      );
    } else checks.push(pass('state-db-schema', `schema version ${store.version} (current)`, 'none needed'));
    const mode = String(db.pragma('journal_mode', { simple: true }));
    checks.push(
      mode === 'wal'
        ? pass('state-db-wal', 'journal_mode = wal', 'none needed')
        : warn('state-db-wal', `journal_mode = ${mode}`, 'any state-changing tugcode command switches it to WAL'),
    );

    checks.push(...(await planChecks(ctx, store, ctx.clock.now())));
  } finally {
    await store.close();
  }
  return checks;
}

/**
 * The fix of a plan's failed steps, its plan and steps filled in: why each failed (its reason, attempts and
 * artifacts), then, once the cause is fixed, the reset that makes each claimable again (a failed step stays
 * failed until reset, docs/state.md §3.6) and the run that takes them up.
 */
function failedStepsFix(planPath: string, anchors: string[]): string {
  const p = shellArg(planPath);
  const why = anchors.map((a) => `tugcode state show ${p} --step ${shellArg(a)}`).join(', ');
  const reset = anchors.map((a) => `tugcode state reset ${p} ${shellArg(a)}`).join(' && ');
  return `why: ${why}; once the cause is fixed: ${reset} && tugcode run ${p}`;
}

/**
 * The checks of the plans in a state store, on either backend: orphaned plans (file gone), expired leases,
 * failed steps. `now` is the store's time (the server's clock on PostgreSQL).
 */
export async function planChecks(ctx: RepoCtx, c: Conn, now: string): Promise<DoctorCheck[]> {
  const { listPlans } = await import('../state/queries/plans.js');
  const { stepsOfPlan } = await import('../state/queries/steps.js');
  const { isExpired, isHeld } = await import('../state/status.js');
  const checks: DoctorCheck[] = [];
  const plans = await listPlans(c);
  const roots = (await gitWorktrees(gitRunner(ctx.env), ctx.repo)).filter((w) => !w.bare).map((w) => w.path);
  const orphaned = plans
    .filter((p) => p.status !== 'archived' && !roots.some((r) => existsSync(join(r, p.plan_path))))
    .map((p) => p.plan_path);
  checks.push(
    orphaned.length
      ? warn(
          'orphaned-plans',
          `plan file gone for: ${orphaned.join(', ')}`,
          'tugcode state prune   (archives them; --purge deletes their rows)',
        )
      : pass('orphaned-plans', `${plans.length} plan(s), every file present`, 'none needed'),
  );
  const expired: string[] = [];
  const failedSteps: string[] = [];
  const failedFixes: string[] = [];
  for (const p of plans.filter((x) => x.status !== 'archived')) {
    const failedHere: string[] = [];
    for (const s of await stepsOfPlan(c, p.plan_path)) {
      if (s.parent_anchor !== null) continue;
      if (isHeld(s.status) && isExpired(s.lease_expires_at, now))
        expired.push(`${p.plan_path} ${s.anchor} (${s.claimed_by}, expired ${s.lease_expires_at})`);
      if (s.status === 'failed') {
        failedSteps.push(`${p.plan_path} ${s.anchor}${s.fail_reason ? ` (${s.fail_reason})` : ''}`);
        failedHere.push(s.anchor);
      }
    }
    if (failedHere.length) failedFixes.push(failedStepsFix(p.plan_path, failedHere));
  }
  checks.push(
    expired.length
      ? warn(
          'expired-leases',
          `expired claims: ${expired.join('; ')}`,
          'the next tugcode state claim takes them over; or release them: tugcode state reset <plan> <step>',
        )
      : pass('expired-leases', 'no expired claims', 'none needed'),
  );
  checks.push(
    failedSteps.length
      ? warn('failed-steps', `failed steps: ${failedSteps.join('; ')}`, failedFixes.join('; '))
      : pass('failed-steps', 'no failed steps', 'none needed'),
  );
  return checks;
}
