/**
 * agents/coder.md followed literally. A Claude Code subagent's Bash starts in the session's directory, the
 * main checkout, not in the step's worktree: every command the file gives the coder must act on
 * `worktree_path` from there, and leave the main checkout alone (its rule: "Never touch the main checkout").
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { git, tempDir, tempRepo } from '../helpers/repo.js';

const coder = readFileSync(join(ROOT, 'agents', 'coder.md'), 'utf8');

/** The `tug …` command the coder is told to rename with, placeholders filled in. */
function renameCommand(fill: Record<string, string>): string {
  const spans = [...coder.matchAll(/`(tug run [^`]*)`/g)].map((m) => m[1]!);
  expect(spans.length, 'agents/coder.md names one `tug run … rename-symbol` command').toBe(1);
  return spans[0]!.replace(/<(\w+)>/g, (all, name: string) => fill[name] ?? all);
}

describe('agents/coder.md', () => {
  it('renames in the worktree, not in the main checkout, when run from the main checkout', () => {
    const root = tempRepo({
      'tsconfig.json': '{ "compilerOptions": { "strict": true, "module": "nodenext", "target": "es2022" } }\n',
      'src/a.ts': 'export function oldName(x: number): number {\n  return x + 1;\n}\n',
      'src/b.ts': "import { oldName } from './a.js';\nexport const y = oldName(1);\n",
    });
    const wt = join(tempDir(), 'wt');
    git(root, 'worktree', 'add', '-q', '-b', 'step', wt);
    const cmd = renameCommand({ file: 'src/a.ts', Name: 'oldName', NewName: 'newName', worktree_path: wt });
    expect(cmd).not.toMatch(/<\w+>/);
    // `tug` as the plugin's user has it: the package's bin on PATH.
    const bin = tempDir('tug-bin-');
    spawnSync('ln', ['-s', join(ROOT, 'bin', 'tug.js'), join(bin, 'tug')]);
    const r = spawnSync('sh', ['-c', cmd], {
      cwd: root,
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
      encoding: 'utf8',
    });
    expect(r.status, `${cmd}\n${r.stdout}\n${r.stderr}`).toBe(0);
    expect(readFileSync(join(wt, 'src/b.ts'), 'utf8')).toContain('newName(1)');
    expect(readFileSync(join(root, 'src/b.ts'), 'utf8')).toContain('oldName(1)');
    expect(git(root, 'status', '--porcelain')).toBe('');
  });
});
