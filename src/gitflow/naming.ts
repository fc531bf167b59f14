/**
 * Branch and directory names of tugcode worktrees (docs/git.md §3, docs/run.md §1).
 * Slugs never contain `--`, so names of two plans never collide.
 */
import { join } from 'node:path';
import { TugError } from '../contract/errors.js';
import { isValidSlug, SLUG_RULE } from '../plan/anchors.js';
import { slugOfPlanPath } from '../plan/resolve.js';

/** A `--name` value: one path segment, no `--` (reserved), not a worker name of `run`. */
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** `.tugtool/tugplan-foo.md` → `foo`. */
export function slugOfPlan(planPath: string): string {
  const slug = slugOfPlanPath(planPath);
  if (slug === null || !isValidSlug(slug)) {
    throw new TugError('InvalidArgument', {
      reason: `${planPath} is not named .tugtool/tugplan-<slug>.md (${SLUG_RULE}); rename the file`,
      plan_path: planPath,
    });
  }
  return slug;
}

/** `2026-02-23T12:34:56.789Z` → `20260223-123456` (UTC). */
export function timestampName(iso: string): string {
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
}

export function checkName(name: string): void {
  if (
    !NAME_RE.test(name) ||
    name.includes('--') ||
    /^w\d+$/.test(name) ||
    name.endsWith('.lock') ||
    name.includes('..')
  ) {
    throw new TugError('InvalidArgument', {
      reason: `--name ${JSON.stringify(name)} must be one segment of letters, digits, ".", "_" or "-", without "--", and not w<k> (reserved for run workers)`,
    });
  }
}

export const integrationBranch = (slug: string): string => `tugplan/${slug}`;
export const worktreeBranch = (slug: string, suffix: string): string => `tugplan/${slug}--${suffix}`;
export const workerBranch = (slug: string, k: number): string => `tugplan/${slug}--w${k}`;

/** Directory of a branch's worktree: `<main root>/.tugtree/<branch with / → __>`. */
export function worktreeDir(mainRoot: string, branch: string): string {
  return join(mainRoot, '.tugtree', branch.split('/').join('__'));
}

/** True for branches made by `worktree create` (not the integration branch, not a run worker). */
export function isCreateBranch(branch: string, slug?: string): boolean {
  const m = /^tugplan\/([a-z0-9-]+?)--(.+)$/.exec(branch);
  if (!m) return false;
  if (slug !== undefined && m[1] !== slug) return false;
  return !/^w\d+$/.test(m[2]!);
}
