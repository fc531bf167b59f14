/**
 * The driver's own checks around an implementer, agent or script (docs/agents.md §1.6–1.7), the second
 * line behind the agents' own confinement (confine.ts):
 *
 * - **OutsideWrite**: a snapshot of everything outside the worker's worktree that a step must not change —
 *   the main checkout's HEAD, index and working tree status (with the content of each path status lists,
 *   so a further edit of an already-modified file shows), `.tugtool/` except its runtime files, the
 *   repository's other worktrees (HEAD and status), every ref except the worker's own branch, and what in
 *   the common git directory runs code or steers git (`hooks/`, `info/`, the config files key by key:
 *   gitDirFiles) — taken before each phase that runs code an agent could have written (the implementer,
 *   reviewer, resolver, a checkpoint, the setup, the refactors' verification: OutsideSpan) and compared
 *   after it. Not compared: what the run itself moves meanwhile (the integration branch, the other
 *   workers' branches, worktrees and their branch config, notes, `refs/tugplan/`, remote-tracking refs
 *   under `--remote`: other workers change them while this one runs), what another plan's live run moves
 *   (its integration and worker branches, their branch config, its worker trees: other-runs.ts), and where
 *   the base branch points (the user may commit to it during a run: OutsideScope.baseRef). Nothing is undone. A change in the git directory also stops the run claiming
 *   (as PlanDrift does): a planted hook or config would run in each of the run's later git calls.
 * - **StepCompletedElsewhere**: a claim that ended because the step became `completed` while held keeps the
 *   worktree's work as a commit on the worker branch, under `refs/tugplan/kept/<slug>/<step>/attempt<N>`
 *   (the worker's next reset moves its branch), and is reported instead of a silent `claim_lost`.
 */
import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import { outsideWriteText, TugError } from '../contract/errors.js';
import {
  isRuntimeEntry,
  keptRef,
  TUGPLAN_REFS,
  TUGTOOL_DIR,
  TUGTREE_DIR,
  workerOfBranch,
  workerOfDir,
} from '../contract/layout.js';
import { gitDirsOf } from '../git/dot-git.js';
import type { GitRunner } from '../git/exec.js';
import { parseWorktreeList } from '../git/fast.js';
import { allRefs, worktreeBranches } from '../git/ref-files.js';
import { ALL_BUT_RUNTIME } from '../git/runtime-files.js';
import { canonicalPath } from '../kernel/light.js';
import { stateDbPath } from '../state/context.js';
import { announceChange, stateCallIn, type FileId, type RunCtx } from './context.js';
import { besideSince, childMark } from './child.js';
import { otherLiveRuns, planOfRunBranch, planOfRunTree } from './other-runs.js';
import { StepFailure } from './failure.js';
import type { ChildOutcome } from './types.js';
import type { WorkerTree } from './worktrees.js';

/** What a snapshot covers and what it leaves to the run. */
export interface OutsideScope {
  mainRoot: string;
  /**
   * The common git directory: refs and worktrees are read from its files, the tracked files kept while the
   * index is unchanged (git when the files cannot say). Without it, git answers all.
   */
  commonDir?: string;
  /** The worker's worktree (absolute): never compared. */
  worktree: string;
  /** Refs the run itself moves (full names), and ref prefixes. */
  runRefs: (ref: string) => boolean;
  /** Worktrees the run itself changes (the other workers'). */
  runWorktrees: (path: string) => boolean;
  /**
   * The slugs of the other plans whose runs are live now (other-runs.ts): what such a run moves (its
   * integration and worker branches, their `branch.<b>.*` config, its worker trees) is left out as the run's
   * own is, in a span where it was live at either end (outsideChanges). Without it, none.
   */
  otherRuns?: () => Promise<ReadonlySet<string>>;
  /**
   * The base branch (`refs/heads/<base>`): the user may commit to it during a run (a plan change there is
   * PlanDrift, and the steps in flight finish: docs/run.md §1 item 4.1), so where it moves is not compared.
   */
  baseRef: string;
  /**
   * The state database the run uses (TUGCODE_STATE_DB may put it anywhere, even in the main checkout): the
   * implementer's own `tugcode state update` writes it, with its -wal/-shm/-journal files.
   */
  stateDb?: string;
  /** The files the run's own output goes to (RunHooks.ownOutput): they grow as it runs, so never compared. */
  ownOutput?: readonly FileId[];
}

/** Signature per item: `main HEAD`, `main <path>`, `.tugtool/<path>`, `worktree <path> …`, `ref <name>`. */
export type OutsideSnapshot = Map<string, string>;

async function sig(path: string, own: readonly FileId[] = []): Promise<string> {
  try {
    const s = await lstat(path);
    if (own.some((f) => f.dev === s.dev && f.ino === s.ino)) return 'the run output';
    if (!s.isFile() || s.size > 1024 * 1024) return `${s.mode}:${s.size}:${s.mtimeMs}`;
    return `${s.mode}:${createHash('sha1')
      .update(await readFile(path))
      .digest('hex')}`;
  } catch {
    return 'missing';
  }
}

/** Every file under `dir` (recursively) as `<label>/<path>` → its signature. */
async function walk(
  dir: string,
  rel: string,
  out: OutsideSnapshot,
  skipTop: (n: string) => boolean,
  own: readonly FileId[],
  label = TUGTOOL_DIR,
): Promise<void> {
  let names: string[];
  try {
    names = await readdir(join(dir, rel));
  } catch {
    return;
  }
  for (const n of names) {
    if (rel === '' && skipTop(n)) continue;
    const r = rel ? `${rel}/${n}` : n;
    const p = join(dir, r);
    const s = await lstat(p).catch(() => null);
    if (s?.isDirectory()) await walk(dir, r, out, skipTop, own, label);
    else out.set(`${label}/${r}`, await sig(p, own));
  }
}

/**
 * HEAD (branch and commit) and status of one checkout in one `git status --porcelain=v2 --branch`: each
 * listed path with its entry (which holds the index's object id, so a staged change shows) and its content.
 */
async function checkout(
  g: GitRunner,
  root: string,
  label: string,
  out: OutsideSnapshot,
  scope: OutsideScope,
): Promise<void> {
  const st = await g.tryRun(
    ['status', '--porcelain=v2', '--branch', '-z', '--untracked-files=all', '--', ...ALL_BUT_RUNTIME],
    root,
  );
  const parts = st.stdout.split('\0');
  let branch = '';
  let oid = '';
  for (let i = 0; i < parts.length; i++) {
    const e = parts[i]!;
    if (e.startsWith('# branch.head ')) branch = e.slice('# branch.head '.length);
    if (e.startsWith('# branch.oid ')) oid = e.slice('# branch.oid '.length);
    if (e === '' || e.startsWith('#')) continue;
    // `1 XY sub mH mI mW hH hI path`, `2 … X<score> path` + the source, `u …` (10 fields), `? path`.
    const fields = e[0] === '1' ? 8 : e[0] === '2' ? 9 : e[0] === 'u' ? 10 : 1;
    const path = e.split(' ').slice(fields).join(' ');
    if (e[0] === '2') i++;
    out.set(
      `${label} ${path}`,
      `${e.slice(0, e.length - path.length)}:${await sig(join(root, path), scope.ownOutput)}`,
    );
  }
  // On the base branch only the branch counts (see OutsideScope.baseRef); elsewhere the commit too.
  out.set(`${label} HEAD`, `refs/heads/${branch}` === scope.baseRef ? branch : `${branch} ${oid}`);
}

/** Each snapshot's mark of the run's children when it was taken: who else ran before the next (child.ts). */
const marks = new WeakMap<OutsideSnapshot, ReturnType<typeof childMark>>();

/**
 * Each snapshot's other live runs (OutsideScope.otherRuns) and the plan of each item that is another
 * plan's run's (its branch, branch config, worker tree), left out of the snapshot or not: a run that
 * started or ended within a span is live at one end only, and its items then show at the other.
 */
const othersOf = new WeakMap<OutsideSnapshot, { live: ReadonlySet<string>; owners: Map<string, string> }>();

/** Everything outside the worktree that a step must leave alone, as signatures. */
export async function snapshotOutside(g: GitRunner, scope: OutsideScope): Promise<OutsideSnapshot> {
  const out: OutsideSnapshot = new Map();
  marks.set(out, childMark());
  const walked: OutsideSnapshot = new Map();
  const owners = new Map<string, string>();
  // Independent reads, side by side. Snapshots per attempt: two around each agent run (implementer,
  // reviewer, resolver), K+1 more for K checkpoints (each starts from the one before's end), two per setup
  // and per refactors' verification. Each is one git process as a rule, the `git status` of the main
  // checkout (~3–5 ms of the driver's CPU to spawn); refs and worktrees come from git's files, the tracked
  // files from the last ls-files while the index is unchanged — git when the files cannot say.
  const [, tracked, refs, trees, , , live] = await Promise.all([
    checkout(g, scope.mainRoot, 'main', out, scope),
    // Tracked files of .tugtool/ (plans, config) are covered by the status and HEAD: a commit of a plan
    // change to the base branch by the user is PlanDrift, not an outside write.
    trackedTugtool(g, scope),
    refsOf(g, scope),
    worktreesOf(g, scope),
    walk(join(scope.mainRoot, TUGTOOL_DIR), '', walked, isRuntimeEntry, scope.ownOutput ?? []),
    gitDirFiles(g, scope, out, owners),
    scope.otherRuns?.() ?? new Set<string>(),
  ]);
  for (const [k, v] of walked) if (!tracked.has(k)) out.set(k, v);
  if (scope.stateDb) {
    const db = scope.stateDb;
    const isDb = (abs: string) => abs === db || [`-wal`, `-shm`, `-journal`].some((x) => abs === db + x);
    for (const k of [...out.keys()]) {
      const abs = k.startsWith('main ')
        ? join(scope.mainRoot, k.slice('main '.length))
        : k.startsWith(`${TUGTOOL_DIR}/`)
          ? join(scope.mainRoot, k)
          : null;
      if (abs && isDb(abs)) out.delete(k);
    }
  }
  for (const [name, oid] of refs) {
    if (name === scope.baseRef || scope.runRefs(name)) continue;
    out.set(`ref ${name}`, oid);
    const plan = name.startsWith('refs/heads/') ? planOfRunBranch(name.slice('refs/heads/'.length)) : null;
    if (plan !== null) owners.set(`ref ${name}`, plan);
  }
  for (const path of trees) {
    if (path === scope.mainRoot || path === scope.worktree || scope.runWorktrees(path)) continue;
    const plan = planOfRunTree(path);
    // A live run's tree is not even read (no git process); one of no live run is, as any other worktree.
    if (plan !== null && live.has(plan)) continue;
    const tree: OutsideSnapshot = new Map();
    await checkout(g, path, `worktree ${path}:`, tree, scope);
    for (const [k, v] of tree) {
      out.set(k, v);
      if (plan !== null) owners.set(k, plan);
    }
  }
  for (const [k, plan] of owners) if (live.has(plan)) out.delete(k);
  othersOf.set(out, { live, owners });
  return out;
}

/** How the common git directory shows in a change: `.git/hooks/post-commit`, `.git/config: alias.zz`. */
export const GIT_DIR_LABEL = '.git';

/** Whether a change (outsideChanges) is one in the common git directory: hooks, config, info/. */
export function inGitDir(change: string): boolean {
  return change.startsWith(`${GIT_DIR_LABEL}/`);
}

/**
 * What in the common git directory makes git run code or read the repository differently in every later
 * call, the run's own included: `hooks/` and `info/` (attributes, exclude, sparse-checkout; not the derived
 * `refs` and `packs`) file by file,
 * and the config files (`config`, `config.worktree`, each work tree's `worktrees/<id>/config.worktree`) key
 * by key. Read from the files (no git process), the config parsed as git reads it. Left out: the branch
 * sections of the run's own branches (it writes `branch.<b>.tugplan`/`tugbase` when it makes a branch,
 * and `git branch -D` drops the section), and the other workers' `config.worktree` (`git worktree add`
 * copies the main one into a new tree).
 */
async function gitDirFiles(
  g: GitRunner,
  scope: OutsideScope,
  out: OutsideSnapshot,
  owners: Map<string, string>,
): Promise<void> {
  const common =
    scope.commonDir ?? resolve(scope.mainRoot, (await g.run(['rev-parse', '--git-common-dir'], scope.mainRoot)).trim());
  const skip = (key: string): boolean => {
    const m = /^branch\.(.+)\.[^.]+$/.exec(key);
    return m !== null && scope.runRefs(`refs/heads/${m[1]!}`);
  };
  await Promise.all([
    // git never runs a `*.sample` hook (one renamed to run shows under its new name): not read.
    walk(join(common, 'hooks'), '', out, (n) => n.endsWith('.sample'), [], `${GIT_DIR_LABEL}/hooks`),
    // `info/refs` and `info/packs` are derived listings (`git update-server-info`, which gc and a push run):
    // they steer nothing.
    walk(join(common, 'info'), '', out, (n) => n === 'refs' || n === 'packs', [], `${GIT_DIR_LABEL}/info`),
    configEntries(join(common, 'config'), `${GIT_DIR_LABEL}/config`, out, skip, owners),
    configEntries(join(common, 'config.worktree'), `${GIT_DIR_LABEL}/config.worktree`, out, skip, owners),
    readdir(join(common, 'worktrees'))
      .catch(() => [] as string[])
      .then((ids) =>
        Promise.all(
          ids.map(async (id) => {
            const admin = join(common, 'worktrees', id);
            const gitdir = (await readFile(join(admin, 'gitdir'), 'utf8').catch(() => '')).trim();
            // One being added has no gitdir yet (git does not list it either).
            if (gitdir === '') return;
            const path = canonicalPath(dirname(resolve(admin, gitdir)));
            if (scope.runWorktrees(path) && basename(path) !== basename(scope.worktree)) return;
            const label = `${GIT_DIR_LABEL}/worktrees/${id}/config.worktree`;
            // Another plan's worker tree: its config is that run's (owners), as its status is.
            await configEntries(join(admin, 'config.worktree'), label, out, skip, owners, planOfRunTree(path));
          }),
        ),
      ),
  ]);
}

/**
 * A config file's entries as `<label>: <key>` → its values; the whole file's signature when git could not
 * read it. `owners` gets the plan of each entry that is another plan's run's: the file's `plan` (a worker
 * tree's), or the key's own branch section (`branch.tugplan/<slug>--w<k>.*`).
 */
async function configEntries(
  file: string,
  label: string,
  out: OutsideSnapshot,
  skip: (key: string) => boolean,
  owners: Map<string, string>,
  plan: string | null = null,
): Promise<void> {
  const set = (k: string, v: string, key?: string): void => {
    out.set(k, v);
    const branch = key === undefined ? undefined : /^branch\.(.+)\.[^.]+$/.exec(key)?.[1];
    const owner = (branch === undefined ? null : planOfRunBranch(branch)) ?? plan;
    if (owner !== null) owners.set(k, owner);
  };
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    // A missing file has no entries: one that appears shows by its keys.
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') set(label, 'unreadable');
    return;
  }
  const entries = parseGitConfig(text);
  if (entries === null) {
    set(label, `unparsed:${createHash('sha1').update(text).digest('hex')}`);
    return;
  }
  for (const [key, values] of entries) if (!skip(key)) set(`${label}: ${key}`, JSON.stringify(values), key);
}

const SPACE = new Set([' ', '\t', '\v', '\f', '\r']);
const KEY_CHAR = /^[A-Za-z0-9-]$/;
const ESCAPES: Record<string, string> = { t: '\t', b: '\b', n: '\n', '\\': '\\', '"': '"' };

/**
 * A git config file's entries named as `git config --list` names them (`section[.subsection].key`, the
 * section and key lower-cased) → their values in order (null: a key without `=`), or null when git would
 * refuse the file. The syntax of git-config(1) "CONFIGURATION FILE" as git's own parser reads it: section
 * headers, comments, quotes, escapes, continuation lines.
 */
export function parseGitConfig(text: string): Map<string, (string | null)[]> | null {
  const src = text.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
  const out = new Map<string, (string | null)[]>();
  let section: string | null = null;
  let i = 0;
  const next = (): string => (i < src.length ? src[i++]! : '\n');
  const add = (name: string, value: string | null): void => {
    const k = `${section}.${name}`;
    const list = out.get(k);
    if (list) list.push(value);
    else out.set(k, [value]);
  };
  while (i < src.length) {
    const c = src[i++]!;
    if (c === '\n' || SPACE.has(c)) continue;
    if (c === '#' || c === ';') {
      const nl = src.indexOf('\n', i);
      i = nl < 0 ? src.length : nl;
      continue;
    }
    if (c === '[') {
      // `[section]`, `[section.sub]` (lower-cased whole), `[section "sub"]` (sub as written, `\x` is x).
      let name = '';
      for (;;) {
        if (i >= src.length) return null;
        const d = src[i++]!;
        if (d === ']') {
          section = name;
          break;
        }
        if (d === ' ' || d === '\t') {
          while (src[i] === ' ' || src[i] === '\t') i++;
          if (src[i++] !== '"') return null;
          let sub = '';
          for (;;) {
            const e = src[i++];
            if (e === undefined || e === '\n') return null;
            if (e === '"') break;
            if (e !== '\\') sub += e;
            else {
              const f = src[i++];
              if (f === undefined || f === '\n') return null;
              sub += f;
            }
          }
          if (src[i++] !== ']') return null;
          section = `${name}.${sub}`;
          break;
        }
        if (!KEY_CHAR.test(d) && d !== '.') return null;
        name += d.toLowerCase();
      }
      continue;
    }
    if (section === null || !/^[A-Za-z]$/.test(c)) return null;
    let name = c.toLowerCase();
    while (i < src.length && KEY_CHAR.test(src[i]!)) name += src[i++]!.toLowerCase();
    while (src[i] === ' ' || src[i] === '\t') i++;
    if (i >= src.length || src[i] === '\n' || src[i] === '#' || src[i] === ';') {
      add(name, null);
      continue;
    }
    if (src[i++] !== '=') return null;
    // The value: whitespace outside quotes dropped at its ends, a comment ends it, `\` then a newline joins lines.
    let value = '';
    let quote = false;
    let comment = false;
    let space = 0;
    for (;;) {
      const d = next();
      if (d === '\n') {
        if (quote) return null;
        break;
      }
      if (comment) continue;
      if (!quote && SPACE.has(d)) {
        if (value !== '') space++;
        continue;
      }
      if (!quote && (d === '#' || d === ';')) {
        comment = true;
        continue;
      }
      value += ' '.repeat(space);
      space = 0;
      if (d === '"') quote = !quote;
      else if (d !== '\\') value += d;
      else {
        const e = next();
        if (e === '\n') continue;
        const esc = ESCAPES[e];
        if (esc === undefined) return null;
        value += esc;
      }
    }
    add(name, value);
  }
  return out;
}

/** Every ref and its object: from the ref files, or `git for-each-ref` when they cannot say (ref-files.ts). */
async function refsOf(g: GitRunner, scope: OutsideScope): Promise<Map<string, string>> {
  const files = scope.commonDir === undefined ? null : await allRefs(scope.commonDir);
  if (files) return files;
  const out = new Map<string, string>();
  for (const line of (await g.run(['for-each-ref', '--format=%(refname) %(objectname)'], scope.mainRoot)).split('\n')) {
    const [name, oid] = line.split(' ');
    if (name && oid) out.set(name, oid);
  }
  return out;
}

/**
 * The work trees' roots (canonical) as `git worktree list` has them: from the admin files, else from git (`-z`:
 * a path holding a newline stays one path).
 */
async function worktreesOf(g: GitRunner, scope: OutsideScope): Promise<string[]> {
  const files = scope.commonDir === undefined ? null : worktreeBranches(scope.commonDir, scope.mainRoot);
  if (files) return files.map((t) => t.path);
  return parseWorktreeList(await g.run(['worktree', 'list', '--porcelain', '-z'], scope.mainRoot)).map((t) => t.path);
}

/** The last `git ls-files` of `.tugtool/` per index file, with the index file's identity when it ran. */
const trackedByIndex = new Map<string, { key: string; files: Set<string> }>();

/** The index file's identity: git replaces the file on every write (a lock file renamed over it). */
async function indexKey(index: string): Promise<string | null> {
  const s = await stat(index, { bigint: true }).catch(() => null);
  return s && `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}

/**
 * The tracked files of the main checkout's `.tugtool/` (`git ls-files`, which reads the index only): the last
 * answer while the index file is the same file, else git again. An answer is kept only when the index did
 * not change while git read it.
 */
async function trackedTugtool(g: GitRunner, scope: OutsideScope): Promise<Set<string>> {
  const { mainRoot } = scope;
  const dirs = scope.commonDir === undefined ? null : gitDirsOf(mainRoot);
  const index = dirs ? join(dirs.gitDir, 'index') : null;
  const key = index ? await indexKey(index) : null;
  const last = index ? trackedByIndex.get(index) : undefined;
  if (key !== null && last?.key === key) return last.files;
  const r = await g.tryRun(['ls-files', '-z', '--', TUGTOOL_DIR], mainRoot);
  const files = new Set(r.stdout.split('\0'));
  if (index && key !== null && r.status === 0 && (await indexKey(index)) === key)
    trackedByIndex.set(index, { key, files });
  return files;
}

/** What changed between two snapshots: paths, refs and checkouts, sorted. */
export function outsideChanges(before: OutsideSnapshot, after: OutsideSnapshot): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  // Another plan's run live at either end of the span moved its own things meanwhile (othersOf).
  const [a, b] = [othersOf.get(before), othersOf.get(after)];
  const theirs = (k: string): boolean => {
    const plan = a?.owners.get(k) ?? b?.owners.get(k);
    return plan !== undefined && (a?.live.has(plan) === true || b?.live.has(plan) === true);
  };
  // A path under .tugtool/ may show twice (in the main checkout's status and in the walk): once is enough.
  const changed = new Set<string>();
  for (const k of keys) if (before.get(k) !== after.get(k) && !theirs(k)) changed.add(k.replace(/^main /, ''));
  return [...changed].sort();
}

/**
 * The OutsideWrite reason: the first 20 changes, worded as the run's error is (outsideWriteText: `who`
 * the implementer, the reviewer; `during`: a command of the step's own, named by when the change came).
 */
function outsideReason(anchor: string, changed: string[], who: string, beside: number, during: boolean): string {
  const more = changed.length > 20 ? ` and ${changed.length - 20} more` : '';
  const what = `${changed.length} thing(s) outside its worktree`;
  return `${anchor}: ${outsideWriteText({ who, what, shown: changed.slice(0, 20).join(', ') + more, beside, during })}`;
}

/**
 * Keeps what the worktree holds as a commit on the worker branch (StepCompletedElsewhere) and under
 * `refs/tugplan/kept/<slug>/<step>/attempt<N>`; returns the commit, or null when there was nothing to keep.
 */
export async function keepWork(
  g: GitRunner,
  o: { worktree: string; base: string | undefined; slug: string; step: string; attempt: number },
): Promise<string | null> {
  await g.run(['add', '-A', '--', ...ALL_BUT_RUNTIME], o.worktree);
  const staged = await g.tryRun(['diff', '--cached', '--quiet'], o.worktree);
  if (staged.status !== 0)
    await g.run(
      [
        'commit',
        '--quiet',
        '--no-verify',
        '-m',
        `tugcode: work of ${o.step} attempt ${o.attempt}, kept (the step was completed elsewhere)`,
      ],
      o.worktree,
    );
  const head = (await g.run(['rev-parse', 'HEAD'], o.worktree)).trim();
  if (o.base && head === o.base) return null;
  await g.run(['update-ref', keptRef(o.slug, o.step, o.attempt), head], o.worktree);
  return head;
}

/** The scope of a worker's snapshot in a run: what the run itself moves is left out. */
function runScope(rc: RunCtx, tree: WorkerTree): OutsideScope {
  const slug = rc.prep.slug;
  return {
    mainRoot: rc.flow.repo.mainRoot,
    commonDir: rc.flow.repo.commonDir,
    worktree: tree.path,
    runRefs: (ref) =>
      ref === `refs/heads/${rc.prep.integration}` ||
      (ref.startsWith('refs/heads/') && workerOfBranch(ref.slice('refs/heads/'.length), slug) !== null) ||
      ref.startsWith('refs/notes/') ||
      ref.startsWith(TUGPLAN_REFS) ||
      (rc.remote !== undefined && rc.remote !== null && ref.startsWith('refs/remotes/')),
    runWorktrees: (path) => basename(dirname(path)) === TUGTREE_DIR && workerOfDir(basename(path), slug) !== null,
    otherRuns: () => otherLiveRuns(rc.flow.repo.mainRoot, slug),
    baseRef: `refs/heads/${rc.prep.base}`,
    stateDb: stateDbPath(rc.flow.repo.mainRoot, rc.ops.env),
    ownOutput: rc.ownOutput,
  };
}

/**
 * After an OutsideWrite: the run's summary is an error even when a later attempt succeeds, since the change
 * stays (docs/agents.md §1.6); `runError` false when the phase's own failure ends the run with another error
 * that names the change (a failed setup: InvalidArgument).
 */
function noteOutsideWrite(rc: RunCtx, o: SpanOwner & { changed: string[]; beside: number; runError: boolean }): void {
  const { step, attempt, changed, by } = o;
  if (o.runError)
    rc.tally.fatal ??= new TugError('OutsideWrite', {
      step_anchor: step,
      attempt,
      by,
      changed: changed.slice(0, 20),
      beside: o.beside,
      ...(o.command ? { command: o.command } : {}),
    });
  // A hook or config planted in the git directory runs in every later git call of the run (its commits,
  // rebases, statuses): the run claims no further step, as after PlanDrift; the steps in flight finish.
  const inGit = changed.filter(inGitDir);
  if (inGit.length === 0) return;
  // Said each time, even when the run already drains (a budget, a plan change, an earlier one): the run's
  // error may be another's, and this change must not show in one attempt's reason only.
  drainRun(rc);
  const list = `${inGit.slice(0, 5).join(', ')}${inGit.length > 5 ? ', …' : ''}`;
  // Worded as the OutsideWrite is (outsideWriteText): a command of the step's is named by when.
  const what = o.command ? `the git directory changed during ${by}` : `${by} changed the git directory`;
  rc.warn(
    'GitDirChanged',
    `${step}: ${what} (${list}): hooks and config run in every later git call, so the run claims no ` +
      'further step; inspect them' +
      (o.command === 'setup'
        ? ' (a setup that sets git config or hooks, such as husky, pre-commit or git lfs install: run it once ' +
          'in the main checkout, then run again)'
        : '') +
      ' (docs/agents.md §1.6)',
    { step_anchor: step, attempt, by, changed: inGit.slice(0, 20) },
  );
}

/**
 * Who ran inside a span and what its failure records: the step and attempt, `by` (the implementer, the
 * reviewer, the resolver, "the checkpoint `…`", "the setup command `…`"), its own output files when it is
 * not the implementer, and the artifact its output becomes.
 */
export interface SpanOwner {
  step: string;
  attempt: number;
  by: string;
  logs?: string[];
  artifact?: 'coder_report' | 'verification_report';
  /**
   * `by` is one of the step's commands, not an agent: the change is named by when it came (outsideWriteText),
   * and the run's error says which (the setup's hint: a husky-like setup, run once in the main checkout).
   */
  command?: 'checkpoint' | 'setup' | 'refactors';
  /**
   * The caller ends the run with an error of its own that carries this reason (a failed setup:
   * InvalidArgument, worker.ts prepareTree): the span records no OutsideWrite as the run's error.
   */
  endsRun?: boolean;
}

/**
 * The attempt's OutsideWrite (docs/agents.md §1.6), the run's summary noted: `by` made the changes, `logs`
 * are its run's own output files when it is not the implementer (a reviewer's, a resolver's, a checkpoint's).
 */
function outsideWriteFailure(
  rc: RunCtx,
  o: SpanOwner & {
    changed: string[];
    out: ChildOutcome | null;
    /** The snapshot taken before `by` ran: the children that ran beside it since are counted. */
    before: OutsideSnapshot;
  },
): StepFailure {
  const mark = marks.get(o.before);
  const beside = mark ? besideSince(mark) : 0;
  noteOutsideWrite(rc, { ...o, beside, runError: !o.endsRun });
  const reason = outsideReason(o.step, o.changed, o.by, beside, o.command !== undefined);
  return new StepFailure('OutsideWrite', reason, o.out, o.artifact ?? 'coder_report', o.logs);
}

/**
 * The one span of the check (docs/agents.md §1.6) around each phase of a step that runs code an agent could
 * have written — the implementer, the reviewer, the resolver, each command checkpoint, the setup command,
 * the refactors' verification: `open` takes the snapshot before the phase's run, `close` the one after and
 * throws the attempt's OutsideWrite naming who ran (noteOutsideWrite: a git-directory change stops the run
 * claiming). Only the phase's own run lies inside a span: the driver's own writes between phases (its
 * commits, resets, rebases, refs) lie between spans and are never compared.
 */
export class OutsideSpan {
  private constructor(
    private readonly rc: RunCtx,
    private readonly g: GitRunner,
    private readonly scope: OutsideScope,
    readonly before: OutsideSnapshot,
  ) {}

  /**
   * A span of `tree`'s worker. `from`: a snapshot closed just before with nothing of the run's but state
   * writes since (the previous checkpoint's), taken as this span's start instead of a new one.
   */
  static async open(
    rc: RunCtx,
    tree: WorkerTree,
    o: { g?: GitRunner; from?: OutsideSnapshot } = {},
  ): Promise<OutsideSpan> {
    const g = o.g ?? rc.g;
    const scope = runScope(rc, tree);
    return new OutsideSpan(rc, g, scope, o.from ?? (await snapshotOutside(g, scope)));
  }

  /** The snapshot now, for a caller that takes it beside other work and hands it to `close`. */
  snapshot(): Promise<OutsideSnapshot> {
    return snapshotOutside(this.g, this.scope);
  }

  /** Compares the state now (or `after`) with the start; throws the OutsideWrite. Returns the snapshot after. */
  async close(who: SpanOwner, out: ChildOutcome | null, after?: OutsideSnapshot): Promise<OutsideSnapshot> {
    const now = after ?? (await this.snapshot());
    const changed = outsideChanges(this.before, now);
    if (changed.length) throw outsideWriteFailure(this.rc, { ...who, changed, out, before: this.before });
    // The integration branch is left out of the snapshot (other workers integrate meanwhile): it must be
    // where the run itself left it (integration-tips.ts).
    await checkIntegrationTip(this.rc, { step: who.step, attempt: who.attempt, by: who.by, out });
    return now;
  }
}

/**
 * A lost claim whose step is `completed` at this very attempt (docs/agents.md §1.7): keeps the worktree's work and marks the
 * run's summary an error; returns the kept commit ('' when there was nothing to keep), or null when the step
 * is not completed (an ordinary lost claim).
 */
export async function completedElsewhere(
  rc: RunCtx,
  tree: WorkerTree,
  step: string,
  attempt: number,
): Promise<string | null> {
  const show = await rc.store
    .show(stateCallIn(rc, rc.flow.repo.mainRoot), { plan: rc.prep.planPath, items: 'none', step })
    .catch(() => null);
  const s = show?.plans[0]?.steps.find((x) => x.anchor === step);
  // Completed at a later attempt means another owner took the claim over first: an ordinary lost claim.
  if (s?.status !== 'completed' || s.attempt !== attempt) return null;
  const kept = await keepWork(rc.g, {
    worktree: tree.path,
    base: tree.base,
    slug: rc.prep.slug,
    step,
    attempt,
  }).catch(() => null);
  // Completed by the claim's own worktree: its implementer (or a checkpoint) ran `tugcode commit` or
  // `state complete` itself; the message says so, and whether that commit is integrated already.
  const own = s.claimed_by === tree.path;
  const integrated =
    own && kept
      ? (
          await rc.g.tryRun(
            ['merge-base', '--is-ancestor', kept, `refs/heads/${rc.prep.integration}`],
            rc.flow.repo.mainRoot,
          )
        ).status === 0
      : false;
  rc.tally.completedOutside.push({ step_anchor: step, own_worktree: own, kept_commit: kept || null });
  rc.tally.fatal ??= new TugError('StepCompletedElsewhere', {
    step_anchor: step,
    attempt,
    kept_commit: kept,
    kept_ref: kept ? keptRef(rc.prep.slug, step, attempt) : null,
    ...(own ? { own_worktree: true, kept_integrated: integrated, integration_branch: rc.prep.integration } : {}),
  });
  return kept ?? '';
}

/**
 * The commits a step's attempt brings to the integration branch (those of the worktree's HEAD not on
 * `onto`) may name in their `Tug-Step` / `Tug-Plan` trailers only the step's own units and the running
 * plan (docs/agents.md §1.6): a commit naming another step would complete that step by reconcile without
 * its implementer ever running. Throws the attempt's OutsideWrite naming each such commit and trailer,
 * before anything is integrated; the trailers are read by git's parser (git/trailers.ts).
 */
export async function checkOwnTrailers(
  rc: RunCtx,
  o: { worktree: string; onto: string; step: string; attempt: number; units: readonly string[] },
): Promise<void> {
  const { readTrailerCommits } = await import('../git/log.js');
  const { commits } = await readTrailerCommits(rc.g, o.worktree, ['HEAD', '--not', o.onto]);
  const own = new Set(o.units);
  const plan = rc.prep.planPath;
  const foreign: string[] = [];
  for (const c of commits) {
    const named = [
      ...c.steps.filter((s) => !own.has(s)).map((s) => `Tug-Step: ${s}`),
      ...c.plans.filter((p) => p !== plan).map((p) => `Tug-Plan: ${p}`),
    ];
    if (named.length) foreign.push(`commit ${c.hash.slice(0, 12)} (${named.join(', ')})`);
  }
  if (foreign.length === 0) return;
  const by = 'the implementer';
  noteOutsideWrite(rc, { step: o.step, attempt: o.attempt, by, changed: foreign, beside: 0, runError: true });
  const more = foreign.length > 20 ? ` and ${foreign.length - 20} more` : '';
  throw new StepFailure(
    'OutsideWrite',
    `${o.step}: the step's commits name another step or plan in their trailers, which would complete it ` +
      `without its implementer: ${foreign.slice(0, 20).join(', ')}${more} (a step's commits may name only ` +
      'its own steps and plan; docs/agents.md §1.6)',
    null,
  );
}

/** The OutsideWrite item of a local integration branch moved outside the run (checkIntegrationTip). */
export function integrationRefItem(rc: RunCtx): string {
  return `ref refs/heads/${rc.prep.integration}`;
}

/**
 * A move of the local integration branch that is not the run's (integration-tips.ts), seen after `by` ran
 * (OutsideSpan.close) or by an integration about to build on it: the attempt's OutsideWrite naming the ref,
 * and the run claims no further step (every later integration would build on that tip, or refuse it; as
 * PlanDrift does, the steps in flight finish). Exempt: a fast-forward by the commits of steps this run's
 * workers hold (an implementer ran `tugcode commit`: its worker reports StepCompletedElsewhere), whose tip
 * the run takes as its own.
 */
export async function checkIntegrationTip(
  rc: RunCtx,
  o: { step: string; attempt: number; by: string; tip?: string; out?: ChildOutcome | null },
): Promise<void> {
  const tips = rc.integrationTips;
  if (!tips) return;
  const root = rc.flow.repo.mainRoot;
  let tip: string | null;
  if (o.tip !== undefined) {
    tip = o.tip;
    if (tip === tips.latest()) return;
  } else {
    const seen = await tips.check(rc.g, rc.flow.repo.commonDir, root, rc.prep.integration);
    if (seen.own) return;
    tip = seen.tip;
  }
  if (tip !== null && (await ownFastForward(rc, tips.latest(), tip, o.step))) {
    tips.record(tip);
    return;
  }
  const changed = [integrationRefItem(rc)];
  noteOutsideWrite(rc, { step: o.step, attempt: o.attempt, by: o.by, changed, beside: 0, runError: true });
  drainRun(rc);
  const shown = `${changed[0]} (at ${tip ?? 'nothing'}; the run left it at ${tips.latest()})`;
  const reason =
    o.tip !== undefined
      ? `the integration branch is not where the run left it, so nothing is integrated onto it: ${shown}`
      : outsideWriteText({ who: o.by, what: '1 thing(s) outside its worktree', shown, beside: 0, during: false });
  throw new StepFailure('OutsideWrite', `${o.step}: ${reason}`, o.out ?? null);
}

/** The run claims no further step; the steps in flight finish (as after PlanDrift). */
function drainRun(rc: RunCtx): void {
  rc.tally.approvedOnly = false;
  if (rc.tally.draining) return;
  rc.tally.draining = true;
  announceChange(rc);
}

/**
 * Whether `to` is `from` plus commits of this plan only, each of `step`'s own (its top-level step's units) or
 * of a step another worker of this run holds (or held until it saw its step completed from its own worktree):
 * that step's implementer ran `tugcode commit`, and its own worker reports it (StepCompletedElsewhere); the
 * worker that merely saw the branch move is not to blame.
 */
async function ownFastForward(rc: RunCtx, from: string, to: string, step: string): Promise<boolean> {
  const root = rc.flow.repo.mainRoot;
  if ((await rc.g.tryRun(['merge-base', '--is-ancestor', from, to], root)).status !== 0) return false;
  const { readTrailerCommits } = await import('../git/log.js');
  const { commits, scanned } = await readTrailerCommits(rc.g, root, [to, '--not', from]);
  if (scanned === 0 || commits.length !== scanned) return false;
  const { topLevelOf } = await import('../plan/lift.js');
  const tops = new Set([
    topLevelOf(rc.prep.plan, step) ?? step,
    ...[...rc.tally.held.values()].map((h) => h.step),
    // Its worker may have seen the claim end (the commit completed the step) and let it go already.
    ...rc.tally.completedOutside.filter((c) => c.own_worktree).map((c) => c.step_anchor),
  ]);
  return commits.every(
    (c) =>
      c.plans.every((p) => p === rc.prep.planPath) && c.steps.every((s) => tops.has(topLevelOf(rc.prep.plan, s) ?? s)),
  );
}
