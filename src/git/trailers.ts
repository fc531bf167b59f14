/**
 * The `Tug-Step` / `Tug-Plan` trailer syntax (docs/git.md §4; docs/state.md §6), in one place.
 * Parsing relies on git's own trailer parser through `%(trailers:…)` in a log format; this module only
 * builds that format and splits its output. Pure: no git is spawned here.
 */

export const TUG_STEP = 'Tug-Step';
export const TUG_PLAN = 'Tug-Plan';
export const TUG_REFACTOR = 'Tug-Refactor';

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
export const TRAILER_LOG_FORMAT =
  `%H${FS}%ct${FS}%(trailers:key=${TUG_STEP},valueonly,separator=%x1f)${FS}%(trailers:key=${TUG_PLAN},valueonly,separator=%x1f)` +
  `${FS}%(trailers:key=${TUG_REFACTOR},valueonly,separator=%x1f)${RS}`;

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

/** The trailer block appended to a step commit message. */
export function formatTugTrailers(step: string, planPath: string): string {
  return `${TUG_STEP}: ${step.replace(/^#/, '')}\n${TUG_PLAN}: ${planPath}`;
}
