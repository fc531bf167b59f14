/**
 * The checks on the names tugcode worktrees get (docs/git.md §3, docs/run.md §1): the plan's slug, a `--name`.
 * The names themselves (branches, directories) are contract/layout.ts's.
 */
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
