/**
 * Helpers of the review-gate tests (docs/run.md §6): a scripted reviewer that answers verdicts on cue and
 * keeps its inputs, a scripted implementer that revises on `review_issues`, and the artifacts of a kind.
 * Shared by tests/run/review-gate.test.ts and tests/run/resolve-review.test.ts.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { tempDir } from '../helpers/repo.js';
import type { UsageOut } from './resolve-helpers.js';

const BILLED = `printf '{"input_tokens":%d,"output_tokens":100,"cost_usd":%s}' "$((n * 1000))" "$(echo "$n" | awk '{printf "%.2f", $1 * 0.25}')" > "$TUG_USAGE_OUT"\n`;

/** `<step>.<n>…` files in the order of their run number n. */
function byRun(a: string, b: string): number {
  return Number(a.split('.')[1]) - Number(b.split('.')[1]);
}

/**
 * A scripted reviewer: per step, the verdicts to give in order (`answer(step, ['REVISE', 'APPROVE'])`; the
 * last one repeats; default APPROVE). Besides the verdicts: `garbage` (a line that is no JSON), `huge` (a
 * verdict line of 70 KB), `window` (one that fills the 64 KiB the driver reads, newline included), `exit` (exit
 * 3), `edit` (changes the step's file, then approves), `hold` (waits until `release`, then approves). Each
 * input is kept as `inputs/<step>.<n>.json` with `TUG_REVIEW_ROUND` in `rounds/<step>.<n>`. With `usage`,
 * each run writes it to TUG_USAGE_OUT (docs/run.md §7.1).
 */
export function reviewerScript(o: { usage?: UsageOut } = {}) {
  const dir = tempDir('tugcode-reviewer-');
  for (const d of ['answers', 'inputs', 'rounds', 'count', 'held']) mkdirSync(join(dir, d));
  const script = join(dir, 'review.sh');
  writeFileSync(
    script,
    `#!/bin/sh
D='${dir}'
s="$TUG_STEP"
n=$(( $(cat "$D/count/$s" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$D/count/$s"
cat > "$D/inputs/$s.$n.json"
echo "$TUG_REVIEW_ROUND" > "$D/rounds/$s.$n"
${o.usage ? `printf '%s' '${JSON.stringify(o.usage)}' > "$TUG_USAGE_OUT"\n` : ''}a=APPROVE
if [ -e "$D/answers/$s" ]; then
  a=$(sed -n "\${n}p" "$D/answers/$s"); [ -n "$a" ] || a=$(tail -n 1 "$D/answers/$s")
fi
echo "reviewing $s round $TUG_REVIEW_ROUND" >&2
case "$a" in
  garbage) echo 'looks fine to me'; exit 0 ;;
  huge) printf '{"verdict":"APPROVE","summary":"%s"}\n' "$(head -c 70000 /dev/zero | tr '\\0' x)"; exit 0 ;;
  window) echo 'reviewed'; printf '{"verdict":"APPROVE","summary":"%s"}\n' "$(head -c 65501 /dev/zero | tr '\\0' x)"; exit 0 ;;
  exit) echo 'reviewer crashed' >&2; exit 3 ;;
  edit) echo tampered > "$TUG_WORKTREE/$s.txt"; a=APPROVE ;;
  hold) echo $$ > "$D/held/.$s"; mv "$D/held/.$s" "$D/held/$s"; i=0; while [ ! -e "$D/release" ] && [ "$i" -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; a=APPROVE ;;
esac
echo "progress line on stdout"
printf '{"verdict":"%s","summary":"%s in round %s","issues":[{"severity":"major","file":"%s.txt","line":1,"message":"say more in %s"}]}\\n' "$a" "$a" "$TUG_REVIEW_ROUND" "$s" "$s"
`,
    { mode: 0o755 },
  );
  return {
    argv: JSON.stringify(script),
    dir,
    answer: (s: string, verdicts: string[]) => writeFileSync(join(dir, 'answers', s), verdicts.join('\n') + '\n'),
    inputs: (s: string): any[] =>
      readdirSync(join(dir, 'inputs'))
        .filter((f) => f.startsWith(`${s}.`))
        .sort(byRun)
        .map((f) => JSON.parse(readFileSync(join(dir, 'inputs', f), 'utf8'))),
    rounds: (s: string) =>
      readdirSync(join(dir, 'rounds'))
        .filter((f) => f.startsWith(`${s}.`))
        .sort(byRun)
        .map((f) => readFileSync(join(dir, 'rounds', f), 'utf8').trim()),
    held: (s: string) => existsSync(join(dir, 'held', s)),
    release: () => writeFileSync(join(dir, 'release'), ''),
  };
}

/**
 * A scripted implementer: writes `<step>.txt` (`<step> revised` when its brief carries `review_issues` or a
 * person's `human_notes`), appends one line per run to `runs/<step>`, and keeps each brief as
 * `briefs/<step>.<n>.json`. With `billed`, its n-th run of a step reports n × 1,000 input and 100 output
 * tokens for $0.25 × n through TUG_USAGE_OUT (docs/run.md §7.1).
 */
export function implementer(o: { billed?: boolean } = {}) {
  const dir = tempDir('tugcode-impl-');
  for (const d of ['runs', 'briefs']) mkdirSync(join(dir, d));
  const script = join(dir, 'impl.sh');
  writeFileSync(
    script,
    `#!/bin/sh
D='${dir}'
s="$TUG_STEP"
echo "attempt $TUG_ATTEMPT" >> "$D/runs/$s"
n=$(wc -l < "$D/runs/$s" | tr -d ' ')
cat > "$D/briefs/$s.$n.json"
if grep -qE '"(review_issues|human_notes)"' "$D/briefs/$s.$n.json"; then echo "$s revised" > "$TUG_WORKTREE/$s.txt"
else echo "$s" > "$TUG_WORKTREE/$s.txt"; fi
${o.billed ? BILLED : ''}echo "done $s"
`,
    { mode: 0o755 },
  );
  return {
    argv: JSON.stringify(script),
    dir,
    runs: (s: string): string[] =>
      existsSync(join(dir, 'runs', s))
        ? readFileSync(join(dir, 'runs', s), 'utf8')
            .trim()
            .split('\n')
        : [],
    briefs: (s: string): any[] =>
      readdirSync(join(dir, 'briefs'))
        .filter((f) => f.startsWith(`${s}.`))
        .sort(byRun)
        .map((f) => JSON.parse(readFileSync(join(dir, 'briefs', f), 'utf8'))),
  };
}

export function artifacts(root: string, kind: string): { step_anchor: string; summary: string; content: string }[] {
  const d = new Database(join(root, '.tugtool', 'state.db'), { readonly: true });
  try {
    return d
      .prepare('SELECT step_anchor, summary, content FROM step_artifacts WHERE kind = ? ORDER BY id')
      .all(kind) as any[];
  } finally {
    d.close();
  }
}
