/**
 * The one anchor rule and the one slug rule of the package. Step arguments accept `step-2` or `#step-2`
 * (docs/output.md §5); anchors in plans and in JSON are bare (docs/plan-format.md §2). A slug names a plan
 * (`.tugtool/tugplan-<slug>.md`) and its branches and worktrees (docs/git.md §3). Pure and cheap to import:
 * hot state commands use it.
 */
import { TugError } from '../contract/errors.js';

/** A valid anchor name: lowercase letters, digits and `-`, starting with a letter or digit. */
export const ANCHOR_RE = /^[a-z0-9][a-z0-9-]*$/;

/** A plan slug: `^[a-z0-9][a-z0-9-]{0,63}$`; see `isValidSlug` for the `--` rule. */
export const SLUG_RE = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** True for a valid anchor name (bare, without `#`). */
export function isAnchor(s: string): boolean {
  return ANCHOR_RE.test(s);
}

/** The slug rule in words, for every message that refuses a slug (SLUG_RE and isValidSlug). */
export const SLUG_RULE =
  'a slug is 1 to 64 lowercase letters, digits and "-", starting with a letter or digit, without "--"';

/** `SLUG_RE` without `--` (reserved as the separator of worktree and branch names). */
export function isValidSlug(s: string): boolean {
  return SLUG_RE.test(s) && !s.includes('--');
}

/** A step argument as given → the bare anchor: whitespace trimmed, one leading `#` removed (`#step-2` → `step-2`). */
export function normalizeAnchor(arg: string): string {
  const t = arg.trim();
  return t.startsWith('#') ? t.slice(1) : t;
}

/** `normalizeAnchor`, then `InvalidArgument` unless the result is a valid anchor name. */
export function requireAnchor(arg: string): string {
  const a = normalizeAnchor(arg);
  if (!isAnchor(a)) throw new TugError('InvalidArgument', { reason: `${JSON.stringify(arg)} is not a step anchor` });
  return a;
}
