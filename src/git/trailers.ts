/**
 * The `Tug-Step` / `Tug-Plan` trailer syntax (docs/git.md §4; docs/state.md §6), in one place.
 * Parsing relies on git's own trailer parser through `%(trailers:…)` in a log format; this module only
 * builds that format and splits its output. Pure: no git is spawned here.
 */

export const TUG_STEP = 'Tug-Step';
export const TUG_PLAN = 'Tug-Plan';
export const TUG_REFACTOR = 'Tug-Refactor';
/** Every trailer of a step commit, in the order written. */
export const TUG_TRAILER_KEYS = [TUG_STEP, TUG_PLAN, TUG_REFACTOR] as const;

/** Whether a trailer key is tugcode's (`Tug-*`; git compares trailer keys without case). */
export function isTugTrailerKey(key: string): boolean {
  return /^tug-/i.test(key);
}

/** `%(trailers:…)` for a log format: the trailers of these keys (only their values, if said), `separator`-joined. */
export function trailersFormat(keys: readonly string[], o: { valueOnly?: boolean; separator: string }): string {
  return `%(trailers:${keys.map((k) => `key=${k}`).join(',')}${o.valueOnly ? ',valueonly' : ''},separator=${o.separator})`;
}

/**
 * `git log -E --grep` pattern of a commit whose message has `Tug-Step: <anchor>` (a leading `#` allowed).
 * Anchors are [a-z0-9-] (docs/plan-format.md): nothing to escape.
 */
export function stepTrailerGrep(anchor: string): string {
  return `^${TUG_STEP}: *#?${anchor} *$`;
}

export interface TrailerCommit {
  /** Full object name. */
  hash: string;
  /** Committer time, seconds since the epoch. */
  committer_time: number;
  /** `Tug-Step` values, bare anchors (a leading `#` removed), in trailer order. */
  steps: string[];
  /** `Tug-Plan` values, trimmed. */
  plans: string[];
  /** `Tug-Refactor` values (`<op_hash> <snapshot_before>..<snapshot_after>`, docs/kernel.md §7.4), trimmed. */
  refactors: string[];
}

const FS = '%x00';
const RS = '%x1e';

/** `git log --format=…`: hash, committer time, the three trailer lists (unit-separated), one record each. */
export const TRAILER_LOG_FORMAT = `%H${FS}%ct${FS}${TUG_TRAILER_KEYS.map((k) =>
  trailersFormat([k], { valueOnly: true, separator: '%x1f' }),
).join(FS)}${RS}`;

function values(field: string | undefined): string[] {
  return (field ?? '')
    .split('\x1f')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/**
 * Splits `git log --format=TRAILER_LOG_FORMAT` output. Returns every record scanned and the commits that
 * carry at least one Tug-Step trailer, in git's order.
 */
export function parseTrailerLog(stdout: string): { scanned: number; commits: TrailerCommit[] } {
  let scanned = 0;
  const commits: TrailerCommit[] = [];
  for (const raw of stdout.split('\x1e')) {
    const rec = raw.replace(/^\n+/, '');
    if (rec === '') continue;
    scanned++;
    const [hash, ct, steps, plans, refactors] = rec.split('\0');
    if (!hash) continue;
    const s = values(steps).map((v) => v.replace(/^#/, ''));
    if (s.length === 0) continue;
    commits.push({
      hash,
      committer_time: Number(ct) || 0,
      steps: s,
      plans: values(plans),
      refactors: values(refactors),
    });
  }
  return { scanned, commits };
}
