/**
 * `tugcode init` (04-git.md §2): the `.tugtool/` skeleton, config, log index and ignore lines.
 * Idempotent: existing files are left alone unless `force`.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import type { Repo } from '../git/repo.js';
import { ensureGitignoreLines, RUNTIME_IGNORE_LINES } from '../util/gitignore.js';
import { configTemplate, IMPLEMENTATION_LOG_INDEX, skeletonPlan } from './templates.js';

export interface InitResult {
  initialized: boolean;
  created: string[];
  skipped: string[];
  gitignore_added: string[];
  exclude_added: string[];
}

export function initProject(repo: Repo, clock: Clock, opts: { force?: boolean } = {}): InitResult {
  const today = clock.now().slice(0, 10);
  const files: { root: string; rel: string; text: string }[] = [
    { root: repo.worktreeRoot, rel: '.tugtool/tugplan-skeleton.md', text: skeletonPlan(today) },
    { root: repo.worktreeRoot, rel: '.tugtool/tugplan-implementation-log.md', text: IMPLEMENTATION_LOG_INDEX },
    // config.toml is read only from the main root, so it always goes there (also from a linked worktree).
    { root: repo.mainRoot, rel: '.tugtool/config.toml', text: configTemplate() },
  ];
  const created: string[] = [];
  const skipped: string[] = [];
  for (const f of files) {
    const abs = join(f.root, f.rel);
    if (existsSync(abs) && !opts.force) {
      skipped.push(f.rel);
      continue;
    }
    mkdirSync(join(f.root, '.tugtool'), { recursive: true });
    writeFileSync(abs, f.text);
    created.push(f.rel);
  }
  const gitignore_added = ensureGitignoreLines(join(repo.worktreeRoot, '.gitignore'), RUNTIME_IGNORE_LINES);
  // info/exclude is shared by all worktrees: runtime files stay out of step commits even before
  // .gitignore is committed.
  const exclude_added = ensureGitignoreLines(join(repo.commonDir, 'info', 'exclude'), RUNTIME_IGNORE_LINES);
  return {
    initialized: created.length > 0 || gitignore_added.length > 0 || exclude_added.length > 0,
    created,
    skipped,
    gitignore_added,
    exclude_added,
  };
}
