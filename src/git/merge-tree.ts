/**
 * Merges computed without touching any work tree (`git merge-tree --write-tree`, git >= 2.38), and tree
 * edits through a temporary index. A conflict check can run in a quarantine object directory, so a refused
 * merge does not even leave objects behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TugError } from '../contract/errors.js';
import type { GitRunner } from './exec.js';
import type { Repo } from './repo.js';

export type MergeTreeResult = { clean: true; tree: string } | { clean: false; files: string[] };

async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'tugcode-merge-'));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runMergeTree(
  g: GitRunner,
  repo: Repo,
  ours: string,
  theirs: string,
  env?: Record<string, string>,
): Promise<MergeTreeResult> {
  const args = ['merge-tree', '--write-tree', '--name-only', '--no-messages', ours, theirs];
  const r = await g.tryRun(args, repo.mainRoot, env ? { env } : {});
  if (r.status === 0) return { clean: true, tree: r.stdout.split('\n')[0]!.trim() };
  if (r.status === 1) {
    const lines = r.stdout.split('\n');
    const files: string[] = [];
    for (const l of lines.slice(1)) {
      if (l === '') break;
      if (!files.includes(l)) files.push(l);
    }
    return { clean: false, files };
  }
  throw new TugError('GitError', { args, stderr: r.stderr, exit_code: r.status });
}

/** Extra variables of the git calls that run in a quarantine object directory. */
export type Quarantine = Record<string, string> | undefined;

/**
 * Runs `fn` with a quarantine: new objects go to a temporary directory (removed afterwards), the
 * repository's are read through it. Nothing is written into the repository.
 */
export function withQuarantine<T>(repo: Repo, fn: (q: Record<string, string>) => Promise<T>): Promise<T> {
  return withTempDir((dir) =>
    fn({ GIT_OBJECT_DIRECTORY: dir, GIT_ALTERNATE_OBJECT_DIRECTORIES: join(repo.commonDir, 'objects') }),
  );
}

/** Would merging `theirs` into `ours` conflict? Writes nothing into the repository. */
export function checkMerge(g: GitRunner, repo: Repo, ours: string, theirs: string): Promise<MergeTreeResult> {
  return withQuarantine(repo, (q) => runMergeTree(g, repo, ours, theirs, q));
}

/** The merged tree (objects written to the repository, or to the quarantine `q`). */
export function mergeTree(
  g: GitRunner,
  repo: Repo,
  ours: string,
  theirs: string,
  q?: Quarantine,
): Promise<MergeTreeResult> {
  return runMergeTree(g, repo, ours, theirs, q);
}

/** `tree` with `path` set to `content` (regular file), via a temporary index. */
export async function treeWithFile(
  g: GitRunner,
  repo: Repo,
  tree: string,
  path: string,
  content: string,
  q?: Quarantine,
): Promise<string> {
  const blob = (await g.run(['hash-object', '-w', '--stdin'], repo.mainRoot, { input: content, env: q })).trim();
  return withTempDir(async (dir) => {
    const env = { ...q, GIT_INDEX_FILE: join(dir, 'index') };
    await g.run(['read-tree', tree], repo.mainRoot, { env });
    await g.run(['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], repo.mainRoot, { env });
    return (await g.run(['write-tree'], repo.mainRoot, { env })).trim();
  });
}

/** Files under `dir` in `tree` with their text. */
export async function readTreeFiles(
  g: GitRunner,
  repo: Repo,
  tree: string,
  dir: string,
  q?: Quarantine,
): Promise<{ path: string; text: string }[]> {
  const names = (await g.run(['ls-tree', '-r', '-z', '--name-only', tree, '--', dir], repo.mainRoot, { env: q }))
    .split('\0')
    .filter(Boolean);
  if (names.length === 0) return [];
  // Batch output: "<oid> blob <size>\n<content>\n" per object; sizes are in bytes.
  const buf = await g.bytes(['cat-file', '--batch'], repo.mainRoot, {
    input: names.map((n) => `${tree}:${n}`).join('\n') + '\n',
    env: q,
  });
  const files: { path: string; text: string }[] = [];
  let pos = 0;
  for (const name of names) {
    const nl = buf.indexOf(10, pos);
    const header = buf.subarray(pos, nl).toString('utf8').split(' ');
    const size = Number(header[2]);
    files.push({ path: name, text: buf.subarray(nl + 1, nl + 1 + size).toString('utf8') });
    pos = nl + 1 + size + 1;
  }
  return files;
}

/** The text of `path` in `tree`, or null. */
export async function fileAt(
  g: GitRunner,
  repo: Repo,
  tree: string,
  path: string,
  q?: Quarantine,
): Promise<string | null> {
  const r = await g.tryRun(['cat-file', 'blob', `${tree}:${path}`], repo.mainRoot, { env: q });
  return r.status === 0 ? r.stdout : null;
}
