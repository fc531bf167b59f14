/**
 * All-or-nothing apply (docs/kernel.md §9.4). Phase A resolves in memory and writes nothing; phase B writes
 * a journal plus backups, temp files (fsync, chmod), renames them in path order, and on any failure restores
 * the renamed files. Every filesystem call goes through an injectable `ApplyIo` so tests can fail the k-th.
 */
import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { KernelError } from '../errors.js';
import { sha256Hex } from '../ids.js';
import { spliceBytes, editJson, type PatchSet, type PatchEdit } from './ir.js';

export interface ApplyIo {
  readFile(path: string): Uint8Array;
  writeFile(path: string, data: Uint8Array | string): void;
  fsync(path: string): void;
  rename(from: string, to: string): void;
  unlink(path: string): void;
  chmod(path: string, mode: number): void;
  mode(path: string): number;
  mkdir(path: string): void;
}

export const realIo: ApplyIo = {
  readFile: (p) => fs.readFileSync(p),
  writeFile: (p, d) => fs.writeFileSync(p, d),
  fsync: (p) => {
    const fd = fs.openSync(p, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  },
  rename: (a, b) => fs.renameSync(a, b),
  unlink: (p) => fs.rmSync(p, { force: true, recursive: true }),
  chmod: (p, m) => fs.chmodSync(p, m),
  mode: (p) => fs.statSync(p).mode & 0o7777,
  mkdir: (p) => fs.mkdirSync(p, { recursive: true }),
};

export interface ResolvedFile {
  path: string;
  before: Uint8Array;
  after: Uint8Array;
  before_sha256: string;
  after_sha256: string;
}

/** Phase A: hash preconditions, anchors, new bytes in memory. Unchanged files are dropped. */
export function resolvePatch(root: string, ps: PatchSet, io: ApplyIo = realIo): ResolvedFile[] {
  const current = new Map<string, Uint8Array>();
  const changed: string[] = [];
  for (const f of ps.files) {
    let bytes: Uint8Array | null = null;
    try {
      bytes = io.readFile(join(root, f.path));
    } catch {
      bytes = null;
    }
    if (!bytes || sha256Hex(bytes) !== f.before_sha256) changed.push(f.path);
    else current.set(f.path, bytes);
  }
  if (changed.length > 0) {
    throw new KernelError('SnapshotMismatch', `${changed.length} file(s) changed since the snapshot`, {
      expected_snapshot_id: ps.snapshot_id,
      actual_snapshot_id: null,
      changed_files: changed.sort(),
    });
  }
  const byFile = new Map<string, PatchEdit[]>();
  for (const e of ps.edits) {
    const list = byFile.get(e.path) ?? [];
    list.push(e);
    byFile.set(e.path, list);
  }
  const out: ResolvedFile[] = [];
  // Spans of a rename repeat one old text: hash each distinct byte string once.
  const hashes = new Map<string, string>();
  const spanHash = (span: Uint8Array) => {
    const key = Buffer.from(span.buffer, span.byteOffset, span.byteLength).toString('latin1');
    let h = hashes.get(key);
    if (h === undefined) hashes.set(key, (h = sha256Hex(span)));
    return h;
  };
  for (const f of ps.files) {
    const bytes = current.get(f.path)!;
    const edits = byFile.get(f.path) ?? [];
    for (const e of edits) {
      if (e.end > bytes.length || e.start > e.end) {
        throw new KernelError('AnchorMismatch', `edit span out of bounds in ${e.path}`, {
          edit: editJson(e),
          expected_sha256: e.anchor_sha256,
          actual_sha256: null,
          actual_text: null,
        });
      }
      const actual = e.start === e.end ? '' : spanHash(bytes.subarray(e.start, e.end));
      if (actual !== e.anchor_sha256) {
        throw new KernelError('AnchorMismatch', `anchor mismatch in ${e.path} at ${e.line}:${e.col}`, {
          edit: editJson(e),
          expected_sha256: e.anchor_sha256,
          actual_sha256: actual,
          actual_text: Buffer.from(bytes.subarray(e.start, e.end)).toString('utf8'),
        });
      }
    }
    const after = spliceBytes(bytes, edits);
    if (Buffer.compare(Buffer.from(after), Buffer.from(bytes)) === 0) continue;
    out.push({ path: f.path, before: bytes, after, before_sha256: f.before_sha256, after_sha256: sha256Hex(after) });
  }
  return out;
}

export interface WriteOptions {
  io?: ApplyIo;
  /** Session dir for the journal and backups; omitted in sandboxes. */
  sessionDir?: string;
  opHash?: string;
  now?: () => string;
}

const JOURNAL = 'apply.journal.json';
const BACKUP_DIR = 'apply-backup';

/** Phase B: write resolved files atomically (all or nothing). Returns the written paths. */
export function writeResolved(root: string, files: ResolvedFile[], o: WriteOptions = {}): string[] {
  const io = o.io ?? realIo;
  if (files.length === 0) return [];
  const journalPath = o.sessionDir ? join(o.sessionDir, JOURNAL) : null;
  const backupDir = o.sessionDir ? join(o.sessionDir, BACKUP_DIR) : null;
  const temps: string[] = [];
  const renamed: ResolvedFile[] = [];
  const fail = (path: string, e: unknown): never => {
    const reason = e instanceof Error ? e.message : String(e);
    const rolledBack = rollback(root, renamed, temps, io);
    if (rolledBack && journalPath && backupDir) {
      tryDo(() => io.unlink(journalPath));
      tryDo(() => io.unlink(backupDir));
    }
    throw new KernelError('WriteError', `could not write ${path}: ${reason}`, {
      path,
      reason,
      rolled_back: rolledBack,
    });
  };
  let current = files[0]!.path;
  try {
    if (journalPath && backupDir) {
      current = JOURNAL;
      io.mkdir(backupDir);
      const entries = files.map((f, i) => {
        io.writeFile(join(backupDir, String(i)), f.before);
        io.fsync(join(backupDir, String(i)));
        return {
          path: f.path,
          before_sha256: f.before_sha256,
          after_sha256: f.after_sha256,
          backup: `${BACKUP_DIR}/${i}`,
        };
      });
      const journal = {
        op_hash: o.opHash ?? null,
        started_at: (o.now ?? (() => new Date().toISOString()))(),
        files: entries,
      };
      io.writeFile(journalPath, JSON.stringify(journal));
      io.fsync(journalPath);
    }
    const tempOf = new Map<string, string>();
    for (const f of files) {
      current = f.path;
      const target = join(root, f.path);
      const tmp = join(
        dirname(target),
        `.${basename(target)}.tug-${process.pid}-${randomBytes(4).toString('hex')}.tmp`,
      );
      const mode = io.mode(target);
      temps.push(tmp);
      io.writeFile(tmp, f.after);
      io.fsync(tmp);
      io.chmod(tmp, mode);
      tempOf.set(f.path, tmp);
    }
    for (const f of files) {
      current = f.path;
      io.rename(tempOf.get(f.path)!, join(root, f.path));
      temps.splice(temps.indexOf(tempOf.get(f.path)!), 1);
      renamed.push(f);
    }
  } catch (e) {
    fail(current, e);
  }
  if (journalPath && backupDir) {
    tryDo(() => io.unlink(journalPath));
    tryDo(() => io.unlink(backupDir));
  }
  return files.map((f) => f.path);
}

function tryDo(f: () => void): boolean {
  try {
    f();
    return true;
  } catch {
    return false;
  }
}

/** Restore renamed files from their in-memory originals (temp + rename); remove leftover temps. */
function rollback(root: string, renamed: ResolvedFile[], temps: string[], io: ApplyIo): boolean {
  let ok = true;
  for (const t of temps) tryDo(() => io.unlink(t));
  for (const f of renamed) {
    const target = join(root, f.path);
    const tmp = join(dirname(target), `.${basename(target)}.tug-${process.pid}-restore.tmp`);
    const done = tryDo(() => {
      const mode = io.mode(target);
      io.writeFile(tmp, f.before);
      io.chmod(tmp, mode);
      io.rename(tmp, target);
    });
    if (!done) {
      tryDo(() => io.unlink(tmp));
      // Last resort: write in place.
      if (!tryDo(() => io.writeFile(target, f.before))) ok = false;
    }
  }
  return ok;
}

/**
 * Crash recovery on session open: files at `after` are restored from their backup, files at `before`
 * are left alone, anything else is SessionCorrupt (the journal stays). Returns true if a journal was found.
 */
export function recoverJournal(root: string, sessionDir: string, io: ApplyIo = realIo): boolean {
  const journalPath = join(sessionDir, JOURNAL);
  if (!fs.existsSync(journalPath)) return false;
  let journal: { files: { path: string; before_sha256: string; after_sha256: string; backup: string }[] };
  try {
    journal = JSON.parse(fs.readFileSync(journalPath, 'utf8'));
    if (!Array.isArray(journal.files)) throw new Error('no files');
  } catch (e) {
    throw new KernelError('SessionCorrupt', 'unreadable apply journal', { path: journalPath, reason: String(e) });
  }
  const plan: { target: string; backup: Uint8Array }[] = [];
  for (const f of journal.files) {
    const target = join(root, f.path);
    const cur = fs.existsSync(target) ? sha256Hex(io.readFile(target)) : null;
    if (cur === f.before_sha256) continue;
    if (cur === f.after_sha256) {
      const backup = io.readFile(join(sessionDir, f.backup));
      if (sha256Hex(backup) !== f.before_sha256) {
        throw new KernelError('SessionCorrupt', `backup of ${f.path} does not match the journal`, {
          path: journalPath,
          reason: 'backup_mismatch',
        });
      }
      plan.push({ target, backup });
      continue;
    }
    throw new KernelError(
      'SessionCorrupt',
      `${f.path} is in neither the before nor the after state of an interrupted apply`,
      {
        path: journalPath,
        reason: 'unknown_state',
      },
    );
  }
  for (const p of plan) {
    const tmp = join(dirname(p.target), `.${basename(p.target)}.tug-${process.pid}-recover.tmp`);
    const mode = io.mode(p.target);
    io.writeFile(tmp, p.backup);
    io.fsync(tmp);
    io.chmod(tmp, mode);
    io.rename(tmp, p.target);
  }
  // Temp files of the interrupted apply.
  for (const f of journal.files) {
    const dir = dirname(join(root, f.path));
    const prefix = `.${basename(f.path)}.tug-`;
    let names: string[] = [];
    try {
      names = fs.readdirSync(dir);
    } catch {
      names = [];
    }
    for (const n of names) if (n.startsWith(prefix) && n.endsWith('.tmp')) tryDo(() => io.unlink(join(dir, n)));
  }
  io.unlink(journalPath);
  io.unlink(join(sessionDir, BACKUP_DIR));
  return true;
}
