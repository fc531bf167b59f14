/**
 * The other plans' live runs in the repository, as the outside check needs them (docs/agents.md §1.6): each
 * plan has its own run lock (docs/run.md §1.8), so another plan's run may make and move its branches,
 * their config and its worktrees while this run's agents run. Read from the lock files alone, never taking
 * a lock and with no git process: one readdir of `.tugtool/`, one holder read per other lock.
 */
import { readdir, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import {
  BRANCH_PREFIX,
  integrationBranch,
  PLAN_FILE_RE,
  RESERVED_PLAN_FILES,
  runLockName,
  slugOfRunLock,
  TUGTOOL_DIR,
  TUGTREE_DIR,
  workerOfBranch,
  workerOfDir,
} from '../contract/layout.js';
import { isValidSlug as isSlug } from '../plan/anchors.js';
import { pidAlive, readHolder } from '../util/dir-lock.js';
import { RUN_LOCK_STALE_MS } from './lock.js';

/**
 * The slugs of the other plans whose run lock is held by a live run now: a holder on this host whose
 * process runs (not this process: it runs one plan), or one on another host, and the lock refreshed within
 * RUN_LOCK_STALE_MS — a lock no restart may take over. The plan's file must be in `.tugtool/` as well: an
 * agent that plants a lock cannot name a plan that is not there without the new plan file showing as an
 * outside write itself.
 */
export async function otherLiveRuns(mainRoot: string, ownSlug: string): Promise<Set<string>> {
  const dir = join(mainRoot, TUGTOOL_DIR);
  const names = await readdir(dir).catch(() => [] as string[]);
  const plans = new Set(
    names.filter((n) => !RESERVED_PLAN_FILES.includes(n)).map((n) => PLAN_FILE_RE.exec(n)?.[1] ?? ''),
  );
  const slugs = names.map((n) => slugOfRunLock(n) ?? '').filter((s) => isSlug(s) && s !== ownSlug && plans.has(s));
  const live = new Set<string>();
  const here = hostname();
  await Promise.all(
    slugs.map(async (slug) => {
      const lock = join(dir, runLockName(slug));
      const [holder, st] = [readHolder(lock), await stat(lock).catch(() => null)];
      if (!holder || !st || st.mtimeMs < Date.now() - RUN_LOCK_STALE_MS) return;
      if (holder.host === here && (holder.pid === process.pid || !pidAlive(holder.pid))) return;
      live.add(slug);
    }),
  );
  return live;
}

/** The plan of a run's branch: `tugplan/<slug>` (its integration branch) or `tugplan/<slug>--w<k>` (a worker's). */
export function planOfRunBranch(branch: string): string | null {
  if (!branch.startsWith(BRANCH_PREFIX)) return null;
  // A slug holds no `--` (isValidSlug): what is left of a worker's suffix is the slug, or no plan's.
  const slug = branch.slice(BRANCH_PREFIX.length).replace(/--w\d+$/, '');
  return isSlug(slug) && (branch === integrationBranch(slug) || workerOfBranch(branch, slug) !== null) ? slug : null;
}

/** The plan of a run's worker tree `<…>/.tugtree/tugplan__<slug>--w<k>`, by its path. */
export function planOfRunTree(path: string): string | null {
  if (basename(dirname(path)) !== TUGTREE_DIR) return null;
  const slug = planOfRunBranch(basename(path).split('__').join('/'));
  return slug !== null && workerOfDir(basename(path), slug) !== null ? slug : null;
}
