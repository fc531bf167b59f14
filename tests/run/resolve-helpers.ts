/**
 * Helpers of the conflict-resolution tests (docs/run.md §1.9): a plan whose steps 2 and 3 rewrite the same
 * line of `shared.txt`, an implementer that makes step-3 work from the older tip (so its rebase conflicts),
 * and a resolver script. Shared by tests/run/resolve.test.ts and tests/run/resolve-review.test.ts.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { checkSchema } from '../helpers/cli.js';
import { tempDir } from '../helpers/repo.js';
import { runEventSchema } from '../../src/contract/schemas/run.js';
import { sql } from '../state/helpers.js';
import { nodeImplementer, planText, runRepo, step, type RunResult } from './helpers.js';

export const SHARED = 'top\nmiddle\nbottom\n';

/** A usage report as a script writes it to TUG_USAGE_OUT (docs/run.md §7.1). */
export type UsageOut = Partial<
  Record<'input_tokens' | 'output_tokens' | 'cache_read_tokens' | 'cache_write_tokens' | 'cost_usd', number>
>;

/** step-2 and step-3 both rewrite the middle line of shared.txt; step-3's checkpoint counts its runs. */
export function conflictRepo(counter: string, files: Record<string, string> = {}): string {
  return runRepo(
    planText([
      step(1, 'Base'),
      step(2, 'Left', { deps: [1] }),
      step(3, 'Right', { deps: [1], checkpoint: `echo run >> ${counter} && grep -q step-3 shared.txt` }),
    ]),
    'demo',
    { 'shared.txt': SHARED, ...files },
  );
}

/**
 * The implementer: each step writes its own file; step-2 and step-3 rewrite shared.txt's middle line, and
 * step-3 (first attempt) waits until step-2's commit is on `ref` (polling git in `gitDir`), so it works
 * from the older tip and its rebase conflicts. In a REVISE round (`review_issues` in its brief) it only
 * writes `<step> revised` to its own file. Calls are logged to `<dir>/calls`; with `usage`, each run writes
 * it to TUG_USAGE_OUT.
 */
export function racingImplementer(o: { gitDir?: string; ref?: string; usage?: UsageOut } = {}) {
  const gitArgs = o.gitDir ? ['--git-dir', o.gitDir] : ['-C', '__ROOT__'];
  return nodeImplementer(`
const brief = JSON.parse(readFileSync(process.env.TUG_STEP_JSON, 'utf8'));
${o.usage ? `writeFileSync(process.env.TUG_USAGE_OUT, ${JSON.stringify(JSON.stringify(o.usage))});` : ''}
const what = brief.conflict ? ' resolve' : brief.review_issues ? ' revise' : ' implement';
appendFileSync(join(dir, 'calls'), step + ' ' + attempt + what + '\\n');
if (brief.review_issues) {
  writeFileSync(join(wt, step + '.txt'), step + ' revised\\n');
} else {
writeFileSync(join(wt, step + '.txt'), step + '\\n');
if (step === 'step-2' || step === 'step-3') {
  if (step === 'step-3' && attempt === 1) {
    const { execFileSync } = await import('node:child_process');
    const args = ${JSON.stringify(gitArgs)}.map((a) => a === '__ROOT__' ? process.env.TUG_REPO_ROOT : a);
    const ref = ${JSON.stringify(o.ref ?? 'tugplan/demo')};
    const until = Date.now() + 60000;
    for (;;) {
      const r = (() => { try { return execFileSync('git', [...args, 'log', '--format=%(trailers:key=Tug-Step,valueonly)', ref], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }); } catch { return ''; } })();
      if (r.includes('step-2') || Date.now() > until) break;
      await sleep(50);
    }
  }
  const lines = readFileSync(join(wt, 'shared.txt'), 'utf8').split('\\n');
  lines[1] = 'middle from ' + step;
  writeFileSync(join(wt, 'shared.txt'), lines.join('\\n'));
}
}
`);
}

/**
 * A resolver script: records its brief in `<dir>/briefs/<n>.json`, then (mode `merge`) writes shared.txt
 * with both sides' middle lines, or (mode `leave`) exits 0 with the markers left, or (mode `continue`) merges,
 * then runs git itself (`git add`, `git rebase --continue`), which a resolver must not. With a `hold` file it
 * first writes its pid to `<dir>/started` and waits while `hold` exists. With `usage`, it writes it to
 * TUG_USAGE_OUT.
 */
export function resolverScript(mode: 'merge' | 'leave' | 'continue', o: { hold?: boolean; usage?: UsageOut } = {}) {
  const dir = tempDir('tugcode-resolver-');
  mkdirSync(join(dir, 'briefs'));
  const hold = join(dir, 'hold');
  if (o.hold) writeFileSync(hold, '');
  const script = join(dir, 'resolve.mjs');
  writeFileSync(
    script,
    `import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const dir = ${JSON.stringify(dir)};
const stdin = readFileSync(0, 'utf8');
const brief = JSON.parse(stdin);
const n = readdirSync(join(dir, 'briefs')).length + 1;
writeFileSync(join(dir, 'briefs', n + '.json'), stdin);
${o.usage ? `writeFileSync(process.env.TUG_USAGE_OUT, ${JSON.stringify(JSON.stringify(o.usage))});` : ''}
if (existsSync(${JSON.stringify(hold)})) {
  writeFileSync(join(dir, 'started'), String(process.pid));
  const until = Date.now() + 120000;
  while (existsSync(${JSON.stringify(hold)}) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
}
const wt = process.env.TUG_WORKTREE;
if (${JSON.stringify(mode)} !== 'leave') {
  const text = readFileSync(join(wt, 'shared.txt'), 'utf8');
  const theirs = /^=======\\n([^\\n]*)\\n>>>>>>> /m.exec(text)[1];
  const ours = /^<<<<<<< [^\\n]*\\n([^\\n]*)\\n/m.exec(text)[1];
  writeFileSync(join(wt, 'shared.txt'), 'top\\n' + ours + '\\n' + theirs + '\\nbottom\\n');
  console.log('merged ' + brief.conflict.files.join(','));
  if (${JSON.stringify(mode)} === 'continue') {
    const { execFileSync } = await import('node:child_process');
    execFileSync('git', ['add', 'shared.txt'], { cwd: wt });
    execFileSync('git', ['rebase', '--continue'], { cwd: wt, env: { ...process.env, GIT_EDITOR: 'true' }, stdio: 'ignore' });
  }
} else {
  console.log('left it');
}
`,
  );
  return {
    argv: `node ${JSON.stringify(script)}`,
    dir,
    hold,
    briefs: (): any[] =>
      readdirSync(join(dir, 'briefs'))
        .sort((a, b) => parseInt(a) - parseInt(b))
        .map((f) => JSON.parse(readFileSync(join(dir, 'briefs', f), 'utf8'))),
  };
}

export function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : [];
}

/** The `conflict_resolution` artifacts, in order. */
export function resolutionArtifacts(root: string) {
  return sql<{ step_anchor: string; summary: string; content: string | null }>(
    root,
    `SELECT step_anchor, summary, content FROM step_artifacts WHERE kind = 'conflict_resolution' ORDER BY id`,
  );
}

export function failures(root: string): Record<string, number> {
  const rows = sql<{ anchor: string; failures: number }>(
    root,
    'SELECT anchor, failures FROM steps ORDER BY step_index',
  );
  return Object.fromEntries(rows.map((r) => [r.anchor, r.failures]));
}

/** The run ended ok, exit 0, every event valid against its schema. */
export function ok(r: RunResult): void {
  expect(r.events.at(-1), r.stderr + r.stdout).toMatchObject({ type: 'summary', status: 'ok' });
  expect(r.code).toBe(0);
  for (const e of r.events) checkSchema(runEventSchema, e);
}
