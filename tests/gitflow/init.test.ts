/**
 * `tugcode init` refuses a `.tugtool` it cannot use — a regular file, a symlink out of the repository —
 * clearly, writing nothing (issue 11: it crashed with InternalError, or wrote outside the repository).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectError, runJson } from '../helpers/cli.js';
import { tempDir, tempRepo } from '../helpers/repo.js';
import { snapshot } from './helpers.js';

describe('tugcode init refusals', () => {
  it('refuses .tugtool as a regular file with InvalidArgument, changing nothing', () => {
    const root = tempRepo();
    writeFileSync(join(root, '.tugtool'), 'not a directory\n');
    const before = snapshot(root);
    const r = runJson('init', ['init'], { cwd: root });
    expectError(r, 'InvalidArgument', 2);
    expect(r.json.error.message).toBe(`${join(root, '.tugtool')} is not a directory`);
    expect(r.json.error.hint).toContain('mv ');
    expect(snapshot(root)).toBe(before);
    expect(readFileSync(join(root, '.tugtool'), 'utf8')).toBe('not a directory\n');
  });

  it('refuses .tugtool as a symlink out of the repository, writing nothing there', () => {
    const root = tempRepo();
    const outside = tempDir();
    symlinkSync(outside, join(root, '.tugtool'));
    const before = snapshot(root);
    for (const args of [['init'], ['init', '--force']]) {
      const r = runJson('init', args, { cwd: root });
      expectError(r, 'InvalidArgument', 2);
      expect(r.json.error.message).toContain('outside the repository');
      expect(readdirSync(outside)).toEqual([]);
      expect(snapshot(root)).toBe(before);
    }
  });

  it('refuses a file inside .tugtool that is a symlink out of the repository (with --force)', () => {
    const root = tempRepo();
    const outside = tempDir();
    writeFileSync(join(outside, 'config.toml'), '# mine\n');
    mkdirSync(join(root, '.tugtool'));
    symlinkSync(join(outside, 'config.toml'), join(root, '.tugtool', 'config.toml'));
    const r = runJson('init', ['init', '--force'], { cwd: root });
    expectError(r, 'InvalidArgument', 2);
    expect(readFileSync(join(outside, 'config.toml'), 'utf8')).toBe('# mine\n');
    expect(existsSync(join(root, '.tugtool', 'tugplan-skeleton.md'))).toBe(false);
  });

  it('accepts .tugtool as a symlink to a directory inside the repository', () => {
    const root = tempRepo();
    mkdirSync(join(root, 'meta'));
    symlinkSync(join(root, 'meta'), join(root, '.tugtool'));
    const r = runJson('init', ['init'], { cwd: root });
    expect(r.json.status).toBe('ok');
    expect(existsSync(join(root, 'meta', 'config.toml'))).toBe(true);
  });

  it('refuses .git/info/exclude as a directory, or .git/info as a file, changing nothing', () => {
    for (const [path, make] of [
      ['info/exclude', (abs: string) => mkdirSync(abs, { recursive: true })],
      ['info', (abs: string) => writeFileSync(abs, 'x\n')],
    ] as const) {
      const root = tempRepo();
      rmSync(join(root, '.git', 'info'), { recursive: true, force: true });
      make(join(root, '.git', path));
      const before = snapshot(root);
      const r = runJson('init', ['init'], { cwd: root });
      expectError(r, 'InvalidArgument', 2);
      expect(r.json.error.message).toContain(join(root, '.git', path));
      expect(snapshot(root)).toBe(before);
    }
  });
});
