/**
 * `tugcode init` (docs/git.md §2): the `.tugtool/` skeleton, config, log index and ignore lines.
 * Idempotent: existing files are left alone unless `force`. Every target is checked before anything is
 * written: init writes only inside the repository, through no symlink that leads out of it, and refuses a
 * `.tugtool` that is not a directory.
 */
import { existsSync, lstatSync, mkdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import type { Clock } from '../clock.js';
import { TugError } from '../contract/errors.js';
import { shellArg } from '../util/shell-arg.js';
import type { Repo } from '../git/repo.js';
import {
  CONFIG_FILE,
  IMPLEMENTATION_LOG_INDEX_PATH,
  RUNTIME_IGNORE_LINES,
  SKELETON_PLAN,
  TUGTOOL_DIR,
} from '../contract/layout.js';
import { ensureGitignoreLines } from '../util/gitignore.js';
import { configTemplate, IMPLEMENTATION_LOG_INDEX, skeletonPlan } from './templates.js';

export interface InitResult {
  initialized: boolean;
  created: string[];
  skipped: string[];
  gitignore_added: string[];
  exclude_added: string[];
}

function inside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * Refuse `abs` (an existing `.tugtool`, a file init writes, `.gitignore`) when it is not of the `kind`
 * expected, or when it is a symlink whose target lies outside every root of the repository. A missing
 * path is fine: init creates it.
 */
function checkTarget(abs: string, kind: 'dir' | 'file', roots: string[]): void {
  let link;
  try {
    link = lstatSync(abs);
  } catch {
    return;
  }
  const refuse = (reason: string, hint: string) => {
    throw new TugError('InvalidArgument', { reason, path: abs }, { hint });
  };
  const what = kind === 'dir' ? 'a directory' : 'a regular file';
  if (link.isSymbolicLink()) {
    let real: string;
    try {
      real = realpathSync.native(abs);
    } catch {
      return refuse(`${abs} is a symlink to nothing`, `remove it (rm ${shellArg(abs)}), then run tugcode init again`);
    }
    if (!roots.some((r) => inside(r, real)))
      return refuse(
        `${abs} is a symlink to ${real}, outside the repository; tugcode init writes only inside the repository`,
        `replace the symlink with ${what} (rm ${shellArg(abs)}), then run tugcode init again`,
      );
    link = statSync(real);
  }
  if (kind === 'dir' ? !link.isDirectory() : !link.isFile())
    refuse(
      `${abs} is not ${what}`,
      `move it aside (mv ${shellArg(abs)} ${shellArg(`${abs}.bak`)}), then run tugcode init again`,
    );
}

export function initProject(repo: Repo, clock: Clock, opts: { force?: boolean } = {}): InitResult {
  const today = clock.now().slice(0, 10);
  const files: { root: string; rel: string; text: string }[] = [
    { root: repo.worktreeRoot, rel: SKELETON_PLAN, text: skeletonPlan(today) },
    { root: repo.worktreeRoot, rel: IMPLEMENTATION_LOG_INDEX_PATH, text: IMPLEMENTATION_LOG_INDEX },
    // config.toml is read only from the main root, so it always goes there (also from a linked worktree).
    { root: repo.mainRoot, rel: CONFIG_FILE, text: configTemplate() },
  ];
  const roots = [...new Set([repo.worktreeRoot, repo.mainRoot])];
  for (const root of roots) checkTarget(join(root, TUGTOOL_DIR), 'dir', roots);
  for (const f of files) checkTarget(join(f.root, f.rel), 'file', roots);
  const gitignore = join(repo.worktreeRoot, '.gitignore');
  checkTarget(gitignore, 'file', roots);
  // info/exclude is written last: a directory in its place (or a file in place of info/) failed only after
  // the files above were written.
  const exclude = join(repo.commonDir, 'info', 'exclude');
  checkTarget(dirname(exclude), 'dir', [...roots, repo.commonDir]);
  checkTarget(exclude, 'file', [...roots, repo.commonDir]);

  const created: string[] = [];
  const skipped: string[] = [];
  for (const f of files) {
    const abs = join(f.root, f.rel);
    if (existsSync(abs) && !opts.force) {
      skipped.push(f.rel);
      continue;
    }
    mkdirSync(join(f.root, TUGTOOL_DIR), { recursive: true });
    writeFileSync(abs, f.text);
    created.push(f.rel);
  }
  const gitignore_added = ensureGitignoreLines(gitignore, RUNTIME_IGNORE_LINES);
  // info/exclude is shared by all worktrees: runtime files stay out of step commits even before
  // .gitignore is committed.
  const exclude_added = ensureGitignoreLines(exclude, RUNTIME_IGNORE_LINES);
  return {
    initialized: created.length > 0 || gitignore_added.length > 0 || exclude_added.length > 0,
    created,
    skipped,
    gitignore_added,
    exclude_added,
  };
}
