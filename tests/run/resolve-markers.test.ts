/**
 * What counts as a conflict marker left by a resolver (docs/run.md §1.9): `<<<<<<<`, `>>>>>>>` and diff3's
 * `|||||||` anywhere, but not a `=======` that underlines a Markdown or RST heading. A real run: two steps
 * rewrite the same line of a README with such a heading; the resolver's correct merge keeps the heading and
 * is integrated in the same attempt. Real git, the built CLI.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../helpers/repo.js';
import { conflictMarkers } from '../../src/gitflow/conflict.js';
import { runJsonl, stepCommits } from './helpers.js';
import { conflictRepo, failures, ok, racingImplementer, resolutionArtifacts } from './resolve-helpers.js';

/** The middle line is the one step-2 and step-3 rewrite (racingImplementer); a heading underlined with 7 `=`. */
const DOC = 'top\nmiddle\nbottom\n\nLicense\n=======\n\nMIT\n';

/** A resolver that keeps both sides of each conflict in shared.txt, whatever surrounds it. */
function keepBothResolver(): string {
  const dir = tempDir('tugcode-resolver-');
  const script = join(dir, 'resolve.mjs');
  writeFileSync(
    script,
    `import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const f = join(process.env.TUG_WORKTREE, 'shared.txt');
const text = readFileSync(f, 'utf8');
writeFileSync(f, text.replace(/^<{7} [^\\n]*\\n([\\s\\S]*?)^(?:\\|{7}[^\\n]*\\n[\\s\\S]*?)?={7}\\n([\\s\\S]*?)^>{7} [^\\n]*\\n/gm, '$1$2'));
console.log('merged');
`,
  );
  chmodSync(script, 0o644);
  return `node ${JSON.stringify(script)}`;
}

describe('conflict markers of a resolution (docs/run.md §1.9)', () => {
  it('a heading underlined with ======= is no marker: the merge integrates in the same attempt', () => {
    const counter = join(tempDir('tugcode-count-'), 'count');
    const root = conflictRepo(counter, { 'shared.txt': DOC });
    const r = runJsonl(root, [
      'demo',
      '--workers',
      '2',
      '--implementer',
      racingImplementer().argv,
      '--resolver',
      keepBothResolver(),
    ]);
    ok(r);
    expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
    expect(r.events.at(-1).conflicts_resolved).toEqual([{ step_anchor: 'step-3', files: ['shared.txt'], round: 1 }]);
    expect(resolutionArtifacts(root).map((a) => a.summary)).toEqual(['round 1: resolved shared.txt']);
    expect(git(root, 'show', 'tugplan/demo:shared.txt')).toBe(
      'top\nmiddle from step-2\nmiddle from step-3\nbottom\n\nLicense\n=======\n\nMIT\n',
    );
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2', 'step-3']);
    expect(failures(root)).toEqual({ 'step-1': 0, 'step-2': 0, 'step-3': 0 });
  });

  it('real leftovers still count, in the merge and diff3 styles, a heading underline before them or not', () => {
    const W = tempDir('tugcode-markers-');
    mkdirSync(join(W, 'd'));
    const files: Record<string, string> = {
      'ok.md': 'Title\n=======\n\ntext\n',
      'ok.rst': 'License\n=======   \r\nMIT\r\n',
      'merge.md': 'Title\n=======\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> b (feat)\n',
      'diff3.txt': 'a\n<<<<<<< HEAD\nours\n||||||| base\nold\n=======\ntheirs\n>>>>>>> b\n',
      'only-base.txt': 'a\nours\n|||||||\nold\n',
      'only-close.txt': 'a\n=======\ntheirs\n>>>>>>> b\n',
      'd/bare-open.txt': '<<<<<<<\nx\n',
    };
    for (const [f, text] of Object.entries(files)) writeFileSync(join(W, f), text);
    expect(conflictMarkers(W, [...Object.keys(files), 'gone.txt'])).toEqual([
      'merge.md:3',
      'diff3.txt:2',
      'only-base.txt:3',
      'only-close.txt:4',
      'd/bare-open.txt:1',
    ]);
  });
});
