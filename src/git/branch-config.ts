/**
 * Which plan and base a tugcode branch belongs to (docs/git.md §3): `branch.<b>.tugplan` and
 * `branch.<b>.tugbase` in the repository config. `worktree list`, `worktree remove` and `merge` read the
 * plan from here, never from the branch name.
 */
import type { GitRunner } from './exec.js';

export interface BranchPlan {
  branch: string;
  plan_path: string;
  base_branch: string | null;
}

export async function setBranchPlan(
  g: GitRunner,
  cwd: string,
  branch: string,
  planPath: string,
  base: string,
): Promise<void> {
  await g.run(['config', `branch.${branch}.tugplan`, planPath], cwd);
  await g.run(['config', `branch.${branch}.tugbase`, base], cwd);
}

export async function getBranchPlan(g: GitRunner, cwd: string, branch: string): Promise<BranchPlan | null> {
  const plan = await g.tryRun(['config', '--get', `branch.${branch}.tugplan`], cwd);
  if (plan.status !== 0) return null;
  const base = await g.tryRun(['config', '--get', `branch.${branch}.tugbase`], cwd);
  return { branch, plan_path: plan.stdout.trim(), base_branch: base.status === 0 ? base.stdout.trim() || null : null };
}

/** Every branch that has a `tugplan` entry, sorted by branch name. */
export async function listBranchPlans(g: GitRunner, cwd: string): Promise<BranchPlan[]> {
  const r = await g.tryRun(['config', '-z', '--get-regexp', '^branch\\..*\\.tug(plan|base)$'], cwd);
  if (r.status !== 0) return [];
  const map = new Map<string, { plan?: string; base?: string }>();
  for (const entry of r.stdout.split('\0')) {
    if (!entry) continue;
    const nl = entry.indexOf('\n');
    const key = nl < 0 ? entry : entry.slice(0, nl);
    const value = nl < 0 ? '' : entry.slice(nl + 1);
    const m = /^branch\.(.+)\.(tugplan|tugbase)$/.exec(key);
    if (!m) continue;
    const rec = map.get(m[1]!) ?? {};
    if (m[2] === 'tugplan') rec.plan = value;
    else rec.base = value;
    map.set(m[1]!, rec);
  }
  return [...map.entries()]
    .filter(([, v]) => v.plan !== undefined)
    .map(([branch, v]) => ({ branch, plan_path: v.plan!, base_branch: v.base || null }))
    .sort((a, b) => (a.branch < b.branch ? -1 : a.branch > b.branch ? 1 : 0));
}
