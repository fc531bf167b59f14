/**
 * Which plan and base a tugcode branch belongs to (04-git.md §3): `branch.<b>.tugplan` and
 * `branch.<b>.tugbase` in the repository config. `worktree list`, `worktree remove` and `merge` read the
 * plan from here, never from the branch name.
 */
import { git, gitTry } from './exec.js';

export interface BranchPlan {
  branch: string;
  plan_path: string;
  base_branch: string | null;
}

export function setBranchPlan(cwd: string, branch: string, planPath: string, base: string): void {
  git(['config', `branch.${branch}.tugplan`, planPath], cwd);
  git(['config', `branch.${branch}.tugbase`, base], cwd);
}

export function getBranchPlan(cwd: string, branch: string): BranchPlan | null {
  const plan = gitTry(['config', '--get', `branch.${branch}.tugplan`], cwd);
  if (plan.status !== 0) return null;
  const base = gitTry(['config', '--get', `branch.${branch}.tugbase`], cwd);
  return { branch, plan_path: plan.stdout.trim(), base_branch: base.status === 0 ? base.stdout.trim() || null : null };
}

/** Every branch that has a `tugplan` entry, sorted by branch name. */
export function listBranchPlans(cwd: string): BranchPlan[] {
  const r = gitTry(['config', '-z', '--get-regexp', '^branch\\..*\\.tug(plan|base)$'], cwd);
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

/** Remove the tug keys of a branch (git also drops the section when the branch is deleted). */
export function clearBranchPlan(cwd: string, branch: string): void {
  gitTry(['config', '--unset', `branch.${branch}.tugplan`], cwd);
  gitTry(['config', '--unset', `branch.${branch}.tugbase`], cwd);
}
