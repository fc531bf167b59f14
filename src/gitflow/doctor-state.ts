/**
 * The state.db checks of `tugcode doctor` (docs/git.md §7). The database is opened read-only (never
 * created, never migrated); every check reports a `fix` naming the command that repairs it.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { DoctorCheck, DoctorCtx } from './doctor.js';
import type { RepoCtx } from './flow-context.js';
import type { Conn } from '../state/sql/conn.js';
import { gitRunner } from '../git/exec.js';
import { writeRefusals } from '../state/sql/sqlite.js';
import { gitWorktrees } from '../git/repo.js';
import { shellArg } from '../util/shell-arg.js';
import { slugOfPlanPath } from '../plan/resolve.js';
import { runCommandFor, runDriverOf } from './run-driver.js';
import { sqlitePermission, toTugError, tugcodeIn } from '../contract/errors.js';

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
/** Why the checks that run git were skipped: git is missing or cannot run (the `git-version` failure). */
export const NO_GIT = 'git does not run';

/** A check that did not run, and why (`skipped: true`, docs/git.md §7). */
export const skip = (name: string, why: string): DoctorCheck => ({
  name,
  status: 'pass',
  message: `skipped: ${why}`,
  fix: 'none needed',
  skipped: true,
});

export async function stateChecks(ctx: DoctorCtx): Promise<DoctorCheck[]> {
  const { stateDbPath, openRead, isNewerSchema } = await import('../state/db.js');
  const { LATEST_SCHEMA_VERSION } = await import('../state/migrate.js');
  const mainRoot = ctx.repo.mainRoot;
  const path = stateDbPath(mainRoot, ctx.env);
  const rel = path.startsWith(mainRoot + '/') ? path.slice(mainRoot.length + 1) : path;
  const recover = `move ${rel} aside (mv ${rel} ${rel}.bad), then tugcode state init <plan> and tugcode state reconcile <plan> for each plan`;
  const relOf = (p: string) => (p.startsWith(mainRoot + '/') ? p.slice(mainRoot.length + 1) : p);
  // Checked whether or not state.db opens: a store no write can reach fails every state command.
  const writable = writableCheck(path, relOf);
  const skipped = (why: string): DoctorCheck[] => STATE_DB_CHECKS.slice(2).map((n) => skip(n, why));

  if (!existsSync(path)) {
    // A -wal/-shm without its db (a crash, or state.db deleted): its pages belong to a db that is gone, and
    // the next state init would start a new db beside them. Said before that happens.
    const strays = [`${path}-wal`, `${path}-shm`].filter((p) => existsSync(p)).map(relOf);
    if (strays.length)
      return [
        warn(
          'state-db-opens',
          `no state database at ${rel}, but ${strays.join(' and ')} ${strays.length > 1 ? 'are' : 'is'} left over: the data in ${strays.length > 1 ? 'them' : 'it'} belongs to a state.db that is gone`,
          `move ${strays.length > 1 ? 'them' : 'it'} aside (${strays.map((p) => `mv ${shellArg(p)} ${shellArg(`${p}.stray`)}`).join(' && ')}), then tugcode state init <plan> and tugcode state reconcile <plan> for each plan`,
        ),
        writable,
        ...skipped('no state.db'),
      ];
    return [
      warn(
        'state-db-opens',
        `no state database at ${rel} yet`,
        'tugcode state init <plan> (or tugcode worktree create <plan>) creates it',
      ),
      writable,
      ...skipped('no state.db'),
    ];
  }
  let store;
  try {
    store = openRead(path, { env: ctx.env });
  } catch (e) {
    // Only a damaged database is moved aside: a full disk, a permission or a lock leaves it whole, and moving
    // it would lose the live claims, failure counts and events that no reconcile rebuilds.
    const t = toTugError(e);
    const damaged = t.code === 'DatabaseError' && !sqlitePermission(String(t.details.sqlite_code ?? ''));
    const fix = damaged
      ? recover
      : `keep ${rel} (it holds the live claims): ${t.hint ?? 'fix what the message says'}, then tugcode doctor again`;
    return [
      failed('state-db-opens', `${rel} cannot be read: ${damaged ? (e as Error).message : t.message}`, fix),
      writable,
      ...skipped('state.db does not open'),
    ];
  }
  if (!store)
    return [
      warn('state-db-opens', `no state database at ${rel}`, 'tugcode state init <plan>'),
      writable,
      ...skipped('no state.db'),
    ];
  const checks: DoctorCheck[] = [pass('state-db-opens', `${rel} opens read-only`, 'none needed'), writable];
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
        : writable.status === 'fail'
          ? // SQLite cannot switch a store it cannot write: no command will until state-db-writable passes.
            warn(
              'state-db-wal',
              `journal_mode = ${mode} (the state store is not writable)`,
              'make it writable first (state-db-writable); then any state-changing tugcode command switches it to WAL',
            )
          : warn('state-db-wal', `journal_mode = ${mode}`, 'any state-changing tugcode command switches it to WAL'),
    );

    checks.push(
      ...(await planChecks(ctx, store, ctx.clock.now(), {
        version: store.version,
        self: ctx.repo.mainRoot,
        shared: false,
      })),
    );
  } finally {
    await store.close();
  }
  return checks;
}

/** Why this process cannot write `p`, as a user reads it, and the fix naming `rel`. */
function notWritable(code: string, p: string, rel: string, isDir: boolean): { why: string; fix: string } {
  const what = isDir ? `the directory ${rel}` : rel;
  if (code === 'EROFS')
    return {
      why: `${what} is on a read-only file system`,
      fix: `remount the file system holding ${rel} read-write (findmnt -T ${shellArg(p)} shows it)`,
    };
  if (code === 'EPERM')
    return {
      why: `${what} may not be written (immutable or append-only)`,
      fix: `lsattr -d ${shellArg(p)} shows the flag; remove it: chattr -i -a ${shellArg(p)} (as root)`,
    };
  let owner = '';
  try {
    owner = ` (owner uid ${statSync(p).uid})`;
  } catch {
    owner = '';
  }
  return {
    why: `${what} is not writable by this user${owner}`,
    fix: `give this user write access: chmod u+w ${shellArg(p)} as its owner, or chown it; or run tugcode as the owner`,
  };
}

/**
 * `state-db-writable`: every state-changing command writes state.db and creates its -wal/-shm beside it, so
 * state.db (and those files when present) and its directory must be writable by this user. access(W_OK)
 * reports a read-only mount (EROFS), an immutable file (EPERM) and the permission bits (EACCES) alike,
 * without writing anything (doctor changes nothing, docs/git.md §7).
 */
function writableCheck(path: string, relOf: (p: string) => string): DoctorCheck {
  const name = 'state-db-writable';
  const dir = dirname(path);
  if (!existsSync(dir)) return skip(name, `no ${relOf(dir)}/ directory`);
  const found = writeRefusals(path).map((r) => notWritable(r.errno, r.path, relOf(r.path), r.path === dir));
  if (found.length === 0)
    return pass(name, `${relOf(path)} and ${relOf(dir)}/ are writable by this user`, 'none needed');
  return failed(
    name,
    `every state change will fail: ${found.map((f) => f.why).join('; ')}`,
    [...new Set(found.map((f) => f.fix))].join('; '),
  );
}

/**
 * The fix of a plan's failed steps, its plan and steps filled in: why each failed (its reason, attempts and
 * artifacts), then, once the cause is fixed, the reset that makes each claimable again (a failed step stays
 * failed until reset, docs/state.md §3.6) and the run that takes them up.
 */
function failedStepsFix(ctx: RepoCtx, planPath: string, anchors: string[], last: string[] | undefined): string {
  const p = shellArg(planPath);
  // The run names its implementer (a bare `tugcode run` would run none, docs/run.md §2): the flags of the
  // plan's run while its lock records them, else those of its last run that ended (`last`, the state's,
  // docs/state.md §2), else the configured one, else a placeholder.
  const slug = slugOfPlanPath(planPath);
  const flags = (slug === null ? null : runDriverOf(ctx.repo.mainRoot, slug))?.run_flags ?? last;
  // A run started with `tugcode -C DIR run`: every command keeps its -C DIR, as the run's own does, so the
  // fix works pasted where that run was started (docs/run.md §1.2).
  const tugcode = tugcodeIn({ run_flags: flags });
  const why = anchors.map((a) => `${tugcode} state show ${p} --step ${shellArg(a)}`).join(', ');
  const reset = anchors.map((a) => `${tugcode} state reset ${p} ${shellArg(a)}`).join(' && ');
  return `why: ${why}; once the cause is fixed: ${reset} && ${runCommandFor(planPath, { run_flags: flags, run: ctx.config.run })}`;
}

/**
 * `dead-runs` (docs/run.md §1.8): a plan whose run lock names a pid on this host that is gone while the plan
 * still has claimed steps. Those claims hold until their leases expire; a new run takes them over at once: the
 * fix's run has the dead run's flags, else (a lock without them) those of the plan's last run that ended.
 */
function deadRunCheck(
  ctx: RepoCtx,
  dead: {
    plan_path: string;
    pid: number;
    started_at: string;
    run_flags?: string[];
    claimed: string[];
    expires: string | null;
  }[],
  now: string,
): DoctorCheck {
  if (dead.length === 0) return pass('dead-runs', 'no run of a plan died holding claims', 'none needed');
  const message = dead
    .map(
      (d) =>
        `${d.plan_path}: driver pid ${d.pid} (started ${d.started_at}) is gone, holding ${d.claimed.join(', ')}` +
        // Past its last lease, the claims have expired: say when, not "until" a time gone by.
        (d.expires ? (d.expires <= now ? ` (its claims expired at ${d.expires})` : ` until ${d.expires}`) : ''),
    )
    .join('; ');
  const fix = dead
    .map(
      (d) =>
        `${runCommandFor(d.plan_path, { run_flags: d.run_flags, run: ctx.config.run })} (takes its lock and claims over)`,
    )
    .join('; ');
  return warn('dead-runs', message, fix);
}

/**
 * The claimed step's commit at HEAD of its worktree `W` that the plan's integration branch lacks: a
 * `tugcode commit --integrate` blocked or killed after its `git commit` (or that commit's process outliving
 * it), which nothing else reports. One git process per claimed step (docs/git.md §4.2, §7).
 */
async function unintegratedHead(
  ctx: RepoCtx,
  planPath: string,
  step: string,
  W: string,
  attempt: number,
): Promise<{ text: string; fix: string }[]> {
  if (!W.startsWith('/') || !existsSync(W)) return [];
  const slug = slugOfPlanPath(planPath);
  if (!slug) return [];
  const [{ integrationBranch }, { unintegratedStepHead }] = await Promise.all([
    import('../contract/layout.js'),
    import('./commit.js'),
  ]);
  // commit's own rule: a plan with no integration branch yet has nothing to be left off.
  const head = await unintegratedStepHead(gitRunner(ctx.env), W, {
    planPath,
    step,
    integ: integrationBranch(slug),
    integrate: false,
  });
  if (head === null) return [];
  return [
    {
      text: `${planPath} ${step}: ${head.slice(0, 12)} in ${W}`,
      fix: `tugcode commit --worktree ${shellArg(W)} --plan ${shellArg(planPath)} --step ${shellArg(step)} --attempt ${attempt} --integrate`,
    },
  ];
}

/** The checks planChecks makes, in its order: both backends list them as skipped when they cannot run. */
export const PLAN_CHECKS = [
  'orphaned-plans',
  'unintegrated-step-commits',
  'expired-leases',
  'failed-steps',
  'dead-runs',
  'integration-targets',
];

/** The checks stateChecks makes, in its order: doctor outside a repository lists them as skipped. */
export const STATE_DB_CHECKS = [
  'state-db-opens',
  'state-db-writable',
  'state-db-integrity',
  'state-db-schema',
  'state-db-wal',
  ...PLAN_CHECKS,
];

/**
 * The checks of the plans in a state store, on either backend: orphaned plans (file gone), expired leases,
 * failed steps, integration targets. `now` is the store's time (the server's clock on PostgreSQL); `store`:
 * its schema version and this clone's owner name (its main checkout, as the store names owners).
 */
export async function planChecks(
  ctx: DoctorCtx,
  c: Conn,
  now: string,
  store: { version: number; self: string; shared: boolean },
): Promise<DoctorCheck[]> {
  const { listPlans } = await import('../state/queries/plans.js');
  const { stepsOfPlan } = await import('../state/queries/steps.js');
  const { isExpired, isHeld } = await import('../state/status.js');
  const checks: DoctorCheck[] = [];
  const plans = await listPlans(c);
  // Without git the checks that read the repository are skipped; the state's own still run (docs/git.md §7).
  const roots = ctx.gitRuns
    ? (await gitWorktrees(gitRunner(ctx.env), ctx.repo)).filter((w) => !w.bare).map((w) => w.path)
    : null;
  const orphaned = plans
    .filter((p) => p.status !== 'archived' && !roots?.some((r) => existsSync(join(r, p.plan_path))))
    .map((p) => p.plan_path);
  checks.push(
    roots === null
      ? skip('orphaned-plans', NO_GIT)
      : orphaned.length
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
  const dead: Parameters<typeof deadRunCheck>[1] = [];
  const unintegrated: { text: string; fix: string }[] = [];
  for (const p of plans.filter((x) => x.status !== 'archived')) {
    const failedHere: string[] = [];
    const claimed: string[] = [];
    const leases: string[] = [];
    const steps = await stepsOfPlan(c, p.plan_path);
    for (const s of steps) {
      if (s.parent_anchor !== null) continue;
      if (isHeld(s.status) && isExpired(s.lease_expires_at, now))
        expired.push(`${p.plan_path} ${s.anchor} (${s.claimed_by}, expired ${s.lease_expires_at})`);
      if (isHeld(s.status)) {
        claimed.push(s.anchor);
        if (s.lease_expires_at) leases.push(s.lease_expires_at);
      }
      if (s.status === 'failed') {
        failedSteps.push(`${p.plan_path} ${s.anchor}${s.fail_reason ? ` (${s.fail_reason})` : ''}`);
        failedHere.push(s.anchor);
      }
    }
    // The plan's last run that ended (docs/state.md §2): read only for a fix that may name its flags.
    const lastFlags = async () =>
      (await (await import('../state/last-run.js')).lastRunOn(c, store.version, p.plan_path))?.run_flags;
    if (failedHere.length) failedFixes.push(failedStepsFix(ctx, p.plan_path, failedHere, await lastFlags()));
    const slug = claimed.length ? slugOfPlanPath(p.plan_path) : null;
    const driver = slug === null ? null : runDriverOf(ctx.repo.mainRoot, slug);
    // A dead run's lock without flags (an older tugcode's) takes the last run's (docs/run.md §1.2).
    if (driver?.alive === false)
      dead.push({
        ...driver,
        run_flags: driver.run_flags ?? (await lastFlags()),
        plan_path: p.plan_path,
        claimed,
        expires: leases.sort().at(-1) ?? null,
      });
    // A running driver integrates its own commits: only the steps nothing is integrating now.
    if (claimed.length && driver?.alive !== true && ctx.gitRuns)
      for (const s of steps)
        if (s.parent_anchor === null && isHeld(s.status) && s.claimed_by)
          unintegrated.push(...(await unintegratedHead(ctx, p.plan_path, s.anchor, s.claimed_by, s.attempt)));
  }
  checks.push(
    !ctx.gitRuns
      ? skip('unintegrated-step-commits', NO_GIT)
      : unintegrated.length
        ? warn(
            'unintegrated-step-commits',
            `claimed steps whose commit is on their worktree's branch only: ${unintegrated.map((u) => u.text).join('; ')}`,
            unintegrated.map((u) => u.fix).join('; '),
          )
        : pass('unintegrated-step-commits', "no claimed step's commit waits for integration", 'none needed'),
  );
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
  checks.push(deadRunCheck(ctx, dead, now));
  checks.push(ctx.gitRuns ? await targetCheck(ctx, c, plans, store) : skip('integration-targets', NO_GIT));
  return checks;
}

/**
 * `integration-targets` (docs/run.md §1.11): where each plan integrates, and a plan whose steps were also
 * integrated somewhere else, as far as this clone's refs tell without a fetch: with a remote target, its
 * own `tugplan/<slug>` holding commits the remote-tracking branch lacks; with this clone as the target, a
 * remote-tracking `tugplan/<slug>` holding commits the local branch lacks.
 */
async function targetCheck(
  ctx: RepoCtx,
  c: Conn,
  plans: { plan_path: string; status: string }[],
  store: { version: number; self: string; shared: boolean },
): Promise<DoctorCheck> {
  const name = 'integration-targets';
  const { INTEGRATION_TARGET_SCHEMA_VERSION } = await import('../state/migrate.js');
  if (store.version < INTEGRATION_TARGET_SCHEMA_VERSION)
    return skip(name, 'the state predates recorded integration targets');
  const { getIntegrationTarget } = await import('../state/queries/plans.js');
  const { targetSeenBy } = await import('../state/integration-target.js');
  const { integrationBranch, targetPlace } = await import('../contract/layout.js');
  const { slugOfPlan } = await import('./naming.js');
  const g = gitRunner(ctx.env);
  const root = ctx.repo.mainRoot;
  const refs = await g.tryRun(['for-each-ref', '--format=%(refname)', 'refs/heads', 'refs/remotes'], root);
  const have = new Set(refs.status === 0 ? refs.stdout.split('\n').filter(Boolean) : []);
  /** Commits on `a` that `b` lacks (0 when either is missing). */
  const ahead = async (a: string, b: string) => {
    if (!have.has(a) || !have.has(b)) return 0;
    const r = await g.tryRun(['rev-list', '--count', `${b}..${a}`], root);
    return r.status === 0 ? Number(r.stdout.trim()) : 0;
  };
  const said: string[] = [];
  const split: string[] = [];
  const fixes: string[] = [];
  for (const p of plans.filter((x) => x.status !== 'archived')) {
    const target = targetSeenBy(await getIntegrationTarget(c, p.plan_path), store);
    const integ = integrationBranch(slugOfPlan(p.plan_path));
    if (!target) {
      said.push(`${p.plan_path}: nothing recorded yet`);
      continue;
    }
    const where = target.where;
    if (target.kind === 'remote') {
      said.push(`${p.plan_path}: ${targetPlace(target, integ)}`);
      const n = await ahead(`refs/heads/${integ}`, `refs/remotes/${where}/${integ}`);
      if (n > 0) {
        split.push(`${p.plan_path}: ${integ} has ${n} commit(s) that ${where}/${integ} lacks`);
        fixes.push(
          `git log ${where}/${integ}..${integ} shows them; bring them onto ${where}/${integ} ` +
            `(git switch ${shellArg(integ)} && git rebase ${shellArg(`${where}/${integ}`)} && git push ${shellArg(where)} ${shellArg(integ)}), ` +
            `then tugcode state reconcile ${shellArg(p.plan_path)} --ref ${shellArg(`${where}/${integ}`)}`,
        );
      }
      continue;
    }
    const mine = where === store.self;
    said.push(`${p.plan_path}: ${mine ? `${integ} of this clone` : targetPlace(target, integ)}`);
    if (!mine) continue;
    for (const ref of have) {
      if (!ref.startsWith('refs/remotes/') || !ref.endsWith(`/${integ}`)) continue;
      const short = ref.slice('refs/remotes/'.length);
      const n = await ahead(ref, `refs/heads/${integ}`);
      if (n > 0) {
        split.push(`${p.plan_path}: ${short} has ${n} commit(s) that ${integ} lacks`);
        fixes.push(
          `git log ${integ}..${short} shows them; bring them into ${integ} (git switch ${shellArg(integ)} && git merge ${shellArg(short)}), ` +
            `then tugcode state reconcile ${shellArg(p.plan_path)}`,
        );
      }
    }
  }
  if (split.length > 0)
    return warn(
      name,
      `steps integrated in two places: ${split.join('; ')} (recorded: ${said.join('; ')})`,
      fixes.join('; '),
    );
  return pass(name, said.length ? said.join('; ') : 'no plans', 'none needed');
}
