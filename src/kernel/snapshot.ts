/**
 * The file universe and snapshots (docs/kernel.md §10): workspace listing (git or a .gitignore-aware walk),
 * the source set, the content-derived `snapshot_id`, and its storage in the session.
 */
import { lstatSync, readdirSync, readFileSync, type Dirent } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import picomatch from 'picomatch';
import { KernelError } from './errors.js';
import { gitOutput } from './exec.js';
import { insideGit } from './repo-layout.js';
import { compareUtf8, sha256Hex } from './ids.js';

import { languageOf } from './language.js';

export { languageOf, type Language } from './language.js';
const CONFIG_NAMES = new Set([
  'package.json',
  'jsconfig.json',
  'pyproject.toml',
  'setup.cfg',
  'setup.py',
  'pytest.ini',
  'tox.ini',
  'pyrightconfig.json',
  'Cargo.toml',
  'Cargo.lock',
  'rust-toolchain',
  'rust-toolchain.toml',
]);
const EXCLUDED_DIRS = new Set([
  '.git',
  'node_modules',
  '.tug',
  '__pycache__',
  '.venv',
  'venv',
  'target',
  '.mypy_cache',
  '.pytest_cache',
  '.tox',
  '.nox',
]);

function baseName(p: string): string {
  const i = p.lastIndexOf('/');
  return i === -1 ? p : p.slice(i + 1);
}

export function isConfigPath(p: string): boolean {
  const b = baseName(p);
  return (
    CONFIG_NAMES.has(b) ||
    /^tsconfig.*\.json$/.test(b) ||
    p === '.cargo/config.toml' ||
    p.endsWith('/.cargo/config.toml')
  );
}

export function isSourcePath(p: string): boolean {
  return languageOf(p) !== null || isConfigPath(p);
}

export function languageBucket(p: string): 'typescript' | 'javascript' | 'python' | 'rust' | 'config' {
  if (/\.(js|jsx|mjs|cjs)$/.test(p)) return 'javascript';
  return languageOf(p) ?? 'config';
}

/** What a listing leaves out besides the always-excluded directories: the session and the host's own files. */
export interface Exclusions {
  /** Workspace-relative session dir, if inside the workspace. */
  sessionRel?: string | null;
  /** The host's directory names, skipped at any depth (KernelOptions.hostDirs). */
  hostDirs?: readonly string[];
  /** The host's workspace-relative files (KernelOptions.hostFiles). */
  hostFiles?: readonly string[];
}

/**
 * The bounds of a listing (docs/kernel.md §10.1, §11.1): the `[kernel]` keys `max_workspace_files` and
 * `max_sandbox_mb`. Exceeding one is WorkspaceTooLarge, raised while listing (the walk stops at the first
 * file over the bound), before anything is read or copied.
 */
export interface ListBounds {
  maxFiles?: number;
  /** Bytes of the listed files (the full sandbox copies them); checked as each file is stat-ed. */
  maxBytes?: number;
  /** What the listing is for, which decides the remedy the error names. */
  purpose?: 'snapshot' | 'sandbox';
}

export interface ListOptions extends Exclusions, ListBounds {
  include?: string[];
  exclude?: string[];
  /** The kernel's environment (git's own settings); the kernel never reads process.env. Default: empty. */
  env?: Record<string, string | undefined>;
}

const MIB = 1024 * 1024;

/**
 * WorkspaceTooLarge (exit 2, docs/kernel.md §5.2): a workspace over a bound is refused, not listed to the end
 * or copied (`--workspace /tmp` or `$HOME` would otherwise snapshot and copy everything). `at_least`: the
 * listing stopped at the first file over the bound, so the count is a lower bound.
 */
export function workspaceTooLarge(
  ws: string,
  o: ListBounds,
  found: { files: number; bytes?: number; atLeast: boolean },
): KernelError {
  const byBytes = found.bytes !== undefined;
  const key = byBytes ? 'max_sandbox_mb' : 'max_workspace_files';
  const limit = byBytes ? Math.round(o.maxBytes! / MIB) : o.maxFiles!;
  const what = byBytes
    ? `more than ${limit} MiB of files to copy into a full sandbox`
    : found.atLeast
      ? `more than ${limit} files`
      : `${found.files} files, more than the limit of ${limit}`;
  const narrow =
    o.purpose === 'sandbox'
      ? 'leave bulky files out of the workspace (.gitignore)'
      : 'exclude paths (--exclude GLOB, [kernel] exclude, .gitignore)';
  const hint = `narrow --workspace to the project, ${narrow}, or raise [kernel] ${key} in .tugtool/config.toml`;
  return new KernelError('WorkspaceTooLarge', `workspace ${ws} has ${what} (${key}); ${hint}`, {
    path: ws,
    key,
    limit,
    files: found.files,
    ...(byBytes ? { bytes: found.bytes } : {}),
    at_least: found.atLeast,
    hint,
  });
}

/**
 * `--include`/`--exclude` globs (picomatch, `dot: true`). A glob matching a directory covers everything
 * below it, so `--exclude gen` and `--exclude 'gen/**'` agree. Null when there are no globs.
 */
export function globMatcher(globs: string[] | undefined): ((path: string) => boolean) | null {
  if (!globs || globs.length === 0) return null;
  const m = picomatch(globs, { dot: true });
  return (p: string) => {
    if (m(p)) return true;
    for (let i = p.lastIndexOf('/'); i > 0; i = p.lastIndexOf('/', i - 1)) if (m(p.slice(0, i))) return true;
    return false;
  };
}

/** Whether a directory name is skipped wherever it occurs. */
function excludedDir(name: string, x: Exclusions): boolean {
  return EXCLUDED_DIRS.has(name) || name.endsWith('.egg-info') || !!x.hostDirs?.includes(name);
}

function excluded(p: string, x: Exclusions): boolean {
  const parts = p.split('/');
  for (let i = 0; i < parts.length - 1; i++) if (excludedDir(parts[i]!, x)) return true;
  if (x.hostFiles?.includes(p)) return true;
  const s = x.sessionRel;
  if (s && (p === s || p.startsWith(s + '/'))) return true;
  return false;
}

async function gitListing(ws: string, env: Record<string, string | undefined>): Promise<string[] | null> {
  // No `.git` entry at or above the workspace: not a repository, and git is not spawned at all.
  if (!insideGit(ws)) return null;
  const out = await gitOutput(['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ws,
    env,
    timeoutMs: 120_000,
  });
  if (!out) return null;
  return [
    ...new Set(
      out
        .toString('utf8')
        .split('\0')
        .filter((p) => p !== ''),
    ),
  ];
}

/** A directory's `.gitignore`, or null when it cannot be read (a dangling symlink, no permission). */
function readIgnoreFile(dir: string): string | null {
  try {
    return readFileSync(join(dir, '.gitignore'), 'utf8');
  } catch {
    return null;
  }
}

/**
 * The files of a workspace outside git. `counts` says whether a path is one the listing keeps; the walk
 * throws WorkspaceTooLarge at the first such file over `o.maxFiles`, so a huge tree is never walked to its
 * end, and skips directories `prune` leaves out entirely (an `--exclude` glob matching the directory).
 */
function walkListing(
  ws: string,
  x: Exclusions & ListBounds,
  counts: (path: string) => boolean,
  prune: ((dir: string) => boolean) | null,
): string[] {
  const out: string[] = [];
  const bound = x.maxFiles ?? Infinity;
  let n = 0;
  const walk = (rel: string, rules: { base: string; ig: Ignore }[]) => {
    const abs = rel ? join(ws, rel) : ws;
    let entries: Dirent[];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch {
      return;
    }
    if (rel && entries.some((e) => e.name === '.git')) return; // nested repo or linked worktree
    const gi = entries.some((e) => e.name === '.gitignore' && !e.isDirectory()) ? readIgnoreFile(abs) : null;
    const here = gi !== null ? [...rules, { base: rel, ig: ignore().add(gi) }] : rules;
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      // The directory entry's type (no lstat); a file system that does not report it gets an lstat.
      let isDir = e.isDirectory();
      if (!isDir && !e.isFile() && !e.isSymbolicLink()) {
        try {
          isDir = lstatSync(join(ws, r)).isDirectory();
        } catch {
          continue;
        }
      }
      if (isDir && excludedDir(e.name, x)) continue;
      if (here.length > 0) {
        const ignored = here.some(({ base, ig }) => {
          const sub = base ? r.slice(base.length + 1) : r;
          return ig.ignores(isDir ? sub + '/' : sub);
        });
        if (ignored) continue;
      }
      if (isDir) {
        if (!prune?.(r)) walk(r, here);
        continue;
      }
      out.push(r);
      if (counts(r) && ++n > bound) throw workspaceTooLarge(ws, x, { files: n, atLeast: true });
    }
  };
  walk('', []);
  return out;
}

/**
 * The workspace's paths (git's listing or the walk) and which of them the listing keeps (§10.1: the
 * always-excluded directories, the session, the host's files, `--include`/`--exclude`). Throws
 * WorkspaceTooLarge when more than `o.maxFiles` are kept.
 */
async function listPaths(ws: string, o: ListOptions): Promise<{ paths: string[]; counts: (p: string) => boolean }> {
  const inc = globMatcher(o.include);
  const exc = globMatcher(o.exclude);
  const counts = (p: string) => !p.endsWith('/') && !excluded(p, o) && (!inc || inc(p)) && !exc?.(p);
  const git = await gitListing(ws, o.env ?? {});
  if (!git) return { paths: walkListing(ws, o, counts, exc), counts };
  if (o.maxFiles !== undefined && git.length > o.maxFiles) {
    let n = 0;
    for (const p of git) if (counts(p)) n++;
    if (n > o.maxFiles) throw workspaceTooLarge(ws, o, { files: n, atLeast: false });
  }
  return { paths: git, counts };
}

/**
 * Refuse a workspace over `o.maxFiles` (WorkspaceTooLarge) without stat-ing or reading anything: what
 * `openKernel` checks before it creates the session directory, so a refused workspace gets no `.tug/`.
 */
export async function assertWorkspaceBounded(ws: string, o: ListOptions): Promise<void> {
  await listPaths(ws, o);
}

/**
 * Every workspace file (§10.1), sorted by UTF-8 bytes; symlinks included (callers filter them). `keep`
 * filters paths before they are stat-ed (the snapshot keeps source files only). Bounded by `o.maxFiles`
 * (counting every file kept, source or not) and `o.maxBytes` (WorkspaceTooLarge).
 */
export async function listWorkspaceFiles(
  ws: string,
  o: ListOptions = {},
  keep?: (path: string) => boolean,
): Promise<{ path: string; symlink: boolean; stat: FileStat }[]> {
  const { paths, counts } = await listPaths(ws, o);
  const maxBytes = o.maxBytes ?? Infinity;
  let bytes = 0;
  const out: { path: string; symlink: boolean; stat: FileStat }[] = [];
  for (const p of paths) {
    if (!counts(p) || (keep && !keep(p))) continue;
    let st;
    try {
      st = lstatSync(join(ws, p));
    } catch {
      continue;
    }
    // Regular files and symlinks only: a FIFO, socket or device is no project content, and reading or copying
    // one could block (a FIFO) or fail.
    if (!st.isFile() && !st.isSymbolicLink()) continue;
    if (!st.isSymbolicLink() && (bytes += st.size) > maxBytes)
      throw workspaceTooLarge(ws, o, { files: out.length + 1, bytes, atLeast: true });
    out.push({
      path: p,
      symlink: st.isSymbolicLink(),
      stat: { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino },
    });
  }
  out.sort((a, b) => compareUtf8(a.path, b.path));
  return out;
}

export interface FileStat {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

export interface Snapshot {
  id: string;
  files: Map<string, { sha256: string; size: number }>;
  bytes: Map<string, Uint8Array>;
  total_bytes: number;
  /** lstat of each file when it was read, and when the snapshot was taken (for `prev` reuse). */
  stats?: Map<string, FileStat>;
  takenAt?: number;
}

/** Files changed less than this before a snapshot are re-read even when their stat looks unchanged. */
const RACY_MS = 2000;

export function sessionRelative(ws: string, sessionDir: string): string | null {
  const r = relative(ws, sessionDir);
  return r.startsWith('..') || r === '' ? null : r.split(sep).join('/');
}

/**
 * Hash the source set: `snap_` + 12 hex of sha256 over `path\nsha\n` records. With `prev` (a warm
 * kernel's last snapshot), a file whose (size, mtime, ctime, inode) are unchanged and that was not
 * modified within RACY_MS of `prev` is not read again (§10.1 allows this content-hash cache).
 */
export async function takeSnapshot(
  ws: string,
  o: ListOptions = {},
  prev?: Snapshot | null,
  racyMs = RACY_MS,
): Promise<Snapshot> {
  const takenAt = Date.now();
  const files = new Map<string, { sha256: string; size: number }>();
  const bytes = new Map<string, Uint8Array>();
  const stats = new Map<string, FileStat>();
  let record = '';
  let total = 0;
  for (const f of await listWorkspaceFiles(ws, o, isSourcePath)) {
    if (f.symlink) continue;
    const old = prev?.stats?.get(f.path);
    const same =
      !!old &&
      !!prev?.takenAt &&
      old.size === f.stat.size &&
      old.mtimeMs === f.stat.mtimeMs &&
      old.ctimeMs === f.stat.ctimeMs &&
      old.ino === f.stat.ino &&
      Math.max(f.stat.mtimeMs, f.stat.ctimeMs) < prev.takenAt - racyMs;
    let b: Uint8Array;
    let h: string;
    if (same && prev!.bytes.has(f.path) && prev!.files.has(f.path)) {
      b = prev!.bytes.get(f.path)!;
      h = prev!.files.get(f.path)!.sha256;
    } else {
      try {
        b = readFileSync(join(ws, f.path));
      } catch {
        continue;
      }
      h = sha256Hex(b);
    }
    files.set(f.path, { sha256: h, size: b.length });
    bytes.set(f.path, b);
    stats.set(f.path, f.stat);
    total += b.length;
    record += `${f.path}\n${h}\n`;
  }
  return { id: 'snap_' + sha256Hex(record).slice(0, 12), files, bytes, total_bytes: total, stats, takenAt };
}

/** Files whose hash differs between two inventories (added, removed or changed), sorted. */
export function changedFiles(a: Map<string, { sha256: string }>, b: Map<string, { sha256: string }>): string[] {
  const out = new Set<string>();
  for (const [p, v] of a) if (b.get(p)?.sha256 !== v.sha256) out.add(p);
  for (const p of b.keys()) if (!a.has(p)) out.add(p);
  return [...out].sort(compareUtf8);
}

export function filesByLanguage(
  s: Snapshot,
): Record<'typescript' | 'javascript' | 'python' | 'rust' | 'config', number> {
  const r = { typescript: 0, javascript: 0, python: 0, rust: 0, config: 0 };
  for (const p of s.files.keys()) r[languageBucket(p)]++;
  return r;
}
