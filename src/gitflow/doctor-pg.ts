/**
 * The state checks of `tugcode doctor` when the state lives on PostgreSQL (docs/git.md §7, docs/state.md §8):
 * the connection (a failure names host, port and database, never the password), the schema version, and
 * the clock skew between this machine and the server (leases run on the server's clock), then the plan
 * checks both backends share. Read-only: the project's schema is never created here.
 */
import { TugError } from '../contract/errors.js';
import type { StateStore } from '../state/store.js';
import type { PgStateStore } from '../state/pg-store.js';
import { failed, pass, PLAN_CHECKS, planChecks, skip, warn } from './doctor-state.js';
import type { DoctorCheck, DoctorCtx } from './doctor.js';

/** Above this, `state-pg-clock` warns (leases and heartbeats are compared with the server's time). */
export const MAX_CLOCK_SKEW_MS = 2000;

const NONE = 'none needed';
const LATER = ['state-pg-schema', 'state-pg-clock', ...PLAN_CHECKS];
const skipped = (why: string): DoctorCheck[] => LATER.map((n) => skip(n, why));

function unreachable(e: unknown): DoctorCheck[] {
  const err = e instanceof TugError ? e : null;
  const message = err ? err.message : `cannot open the PostgreSQL state store: ${(e as Error).message}`;
  const fix = err?.hint ?? 'check [state] url (or TUGCODE_STATE_URL) and that the server accepts connections';
  return [failed('state-pg-connection', message, fix), ...skipped('no connection to PostgreSQL')];
}

/** `open` gives the process's store for this repository (the ops layer picks the backend). */
export async function pgStateChecks(ctx: DoctorCtx, open: () => Promise<StateStore>): Promise<DoctorCheck[]> {
  let store: StateStore;
  try {
    store = await open();
  } catch (e) {
    return unreachable(e);
  }
  try {
    if (store.backend !== 'postgres')
      throw new TugError('InternalError', { reason: 'doctor expected the PostgreSQL store' });
    const pg = store as PgStateStore;
    const { LATEST_SCHEMA_VERSION } = await import('../state/migrate.js');
    let db;
    try {
      db = await pg.open('read');
    } catch (e) {
      return unreachable(e);
    }
    const where = `${pg.target.host}:${pg.target.port} (database ${pg.target.database}, schema ${pg.schema})`;
    const checks: DoctorCheck[] = [pass('state-pg-connection', `connected to PostgreSQL at ${where}`, NONE)];
    if (!db) {
      checks.push(
        warn(
          'state-pg-schema',
          `no state schema ${pg.schema} on the server yet`,
          'tugcode state init <plan> (or tugcode state import <file>) creates it',
        ),
        ...skipped('no state schema yet').slice(1),
      );
      return checks;
    }
    const v = db.version;
    checks.push(
      v > LATEST_SCHEMA_VERSION
        ? failed(
            'state-pg-schema',
            `schema version ${v} is newer than this tugcode (${LATEST_SCHEMA_VERSION})`,
            'upgrade tugcode (npm install tugcode@latest)',
          )
        : v < LATEST_SCHEMA_VERSION
          ? warn(
              'state-pg-schema',
              `schema version ${v}; ${LATEST_SCHEMA_VERSION} is current`,
              'any state-changing tugcode command migrates it',
            )
          : pass('state-pg-schema', `schema version ${v} (current)`, NONE),
    );
    const skew = db.serverOffsetMs;
    const ahead = skew >= 0 ? 'ahead of' : 'behind';
    checks.push(
      Math.abs(skew) > MAX_CLOCK_SKEW_MS
        ? warn(
            'state-pg-clock',
            `the server's clock is ${Math.abs(skew)} ms ${ahead} this machine's (more than ${MAX_CLOCK_SKEW_MS} ms)`,
            "leases use the server's clock, so claims stay correct; sync this machine's clock (NTP) so times in logs and text agree",
          )
        : pass('state-pg-clock', `clock skew ${Math.abs(skew)} ms (at most ${MAX_CLOCK_SKEW_MS} ms)`, NONE),
    );
    // The server's time, unless TUGCODE_NOW fixed the process's (as the store does).
    const now = await pg.now();
    checks.push(...(await planChecks(ctx, db, now, { version: v, self: pg.owner(ctx.repo.mainRoot), shared: true })));
    return checks;
  } finally {
    await store.close();
  }
}
