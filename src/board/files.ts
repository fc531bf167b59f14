/**
 * The run's log files as the board reads them (docs/board.md §4): `.tugtool/logs/<slug>/<step>-attempt<N>.log`
 * (the implementer), `<step>-checkpoint<k>-attempt<N>.log`, and whatever `<step>-<kind><k>-attempt<N>.log`
 * later phases write (a reviewer, a resolver), with a command reviewer's stdout beside its log as
 * `<step>-review<k>-attempt<N>.out` (its verdict and summary are there). Their names give a running step's phase, their times its
 * last output, their ends the detail's live tail. Every read is asynchronous and bounded.
 */
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { runLogDir } from '../contract/layout.js';

/** The most of a log the board reads or sends at once: its last 64 KiB. */
export const LOG_TAIL_BYTES = 64 * 1024;

export interface LogFile {
  name: string;
  /** The (sub)step whose log it is. */
  anchor: string;
  attempt: number;
  /** `implementer`, `checkpoint`, or the word before the number (`review`, `resolve`, …). */
  kind: string;
  size: number;
  /** ISO time of its last write. */
  mtime: string;
}

/**
 * After `<anchor>-`: `attempt<N>.log`, or `<kind><k>[-<variant>]-attempt<N>.log` (`checkpoint2-resolved-…`),
 * or the `.out` (stdout) of such a run.
 */
const REST = /^(?:([a-z]+)(\d+)(?:-[a-z]+)?-)?attempt(\d+)\.(?:log|out)$/;

/** Which of `anchors` a file of the log directory belongs to, and what it is; null for any other file. */
export function parseLogName(name: string, anchors: readonly string[]): Omit<LogFile, 'size' | 'mtime'> | null {
  for (const anchor of anchors) {
    if (!name.startsWith(anchor + '-')) continue;
    const m = REST.exec(name.slice(anchor.length + 1));
    if (m) return { name, anchor, attempt: Number(m[3]), kind: m[1] ?? 'implementer' };
  }
  return null;
}

/** The log files of `anchors` (a step and its substeps) in the plan's log directory, newest first. */
export async function stepLogs(mainRoot: string, slug: string, anchors: readonly string[]): Promise<LogFile[]> {
  return (await readLogs(mainRoot, slug, anchors)).files;
}

/**
 * The log files of each held top-level step (claimed or in progress) and of its substeps, by the held step's
 * anchor, and how many files were looked at (`stat`). A long run's log directory holds every step's logs,
 * thousands after a few hundred steps: a full read (docs/board.md §5) looks at the held steps' only, so its
 * cost follows the steps running, not the steps done.
 */
export async function heldStepLogs(
  mainRoot: string,
  slug: string,
  steps: readonly { anchor: string; parent_anchor: string | null }[],
  held: readonly string[],
): Promise<{ logs: Map<string, LogFile[]>; files_read: number }> {
  const parentOf = new Map(steps.map((s) => [s.anchor, s.parent_anchor]));
  const rootOf = (a: string): string => {
    for (let up = parentOf.get(a); up; up = parentOf.get(a)) a = up;
    return a;
  };
  const wanted = new Set(held);
  const anchors = steps.map((s) => s.anchor).filter((a) => wanted.has(rootOf(a)));
  const logs = new Map<string, LogFile[]>(held.map((a) => [a, []]));
  if (anchors.length === 0) return { logs, files_read: 0 };
  const { files, files_read } = await readLogs(mainRoot, slug, anchors);
  for (const f of files) logs.get(rootOf(f.anchor))?.push(f);
  return { logs, files_read };
}

async function readLogs(
  mainRoot: string,
  slug: string,
  anchors: readonly string[],
): Promise<{ files: LogFile[]; files_read: number }> {
  const dir = runLogDir(mainRoot, slug);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return { files: [], files_read: 0 };
  }
  const out: LogFile[] = [];
  let files_read = 0;
  for (const name of names) {
    const f = parseLogName(name, anchors);
    if (!f) continue;
    files_read++;
    const st = await stat(join(dir, name)).catch(() => null);
    if (st?.isFile()) out.push({ ...f, size: st.size, mtime: new Date(st.mtimeMs).toISOString() });
  }
  // A run's `.out` and `.log` sort together, by the newer of the two, the output first: the drawer shows the
  // newest file, and a reviewer's verdict is in its output, its log often empty (docs/board.md §4).
  const stem = (n: string) => n.replace(/\.(?:log|out)$/, '');
  const newest = new Map<string, string>();
  for (const f of out) if (f.mtime > (newest.get(stem(f.name)) ?? '')) newest.set(stem(f.name), f.mtime);
  const at = (f: LogFile) => newest.get(stem(f.name))!;
  out.sort(
    (a, b) =>
      at(b).localeCompare(at(a)) ||
      stem(b.name).localeCompare(stem(a.name)) ||
      Number(b.name.endsWith('.out')) - Number(a.name.endsWith('.out')),
  );
  return { files: out, files_read };
}

/**
 * The phase a step's newest log of `attempt` says it is in, and when it last wrote; `anchor`: the (sub)step
 * whose log that is.
 */
export function phaseFromLogs(
  logs: LogFile[],
  attempt: number,
): { phase: string | null; at: string | null; anchor?: string } {
  const mine = logs.filter((l) => l.attempt === attempt);
  const newest = mine[0];
  if (!newest) return { phase: null, at: null };
  const phase =
    newest.kind === 'implementer' ? 'implementer' : newest.kind === 'checkpoint' ? 'checkpoints' : newest.kind;
  // The last output of any of them (a run's `.out` sorts before its `.log`, which may be newer).
  return { phase, at: mine.reduce((t, l) => (l.mtime > t ? l.mtime : t), newest.mtime), anchor: newest.anchor };
}

export interface Tail {
  name: string;
  /** The file's size when read: where the next read starts. */
  size: number;
  text: string;
  /** True when the text does not start at `from` (the file was longer than the tail, or shrank). */
  cut: boolean;
}

/**
 * The file's bytes from `from` (default: its last 64 KiB) to its end, at most 64 KiB of them (the last);
 * a text that starts mid-file starts after its first line break, so no broken character or line shows.
 */
export async function readTail(dir: string, name: string, from?: number): Promise<Tail | null> {
  let fh;
  try {
    fh = await open(join(dir, name), 'r');
  } catch {
    return null;
  }
  try {
    const { size } = await fh.stat();
    let start = from === undefined || from > size ? Math.max(0, size - LOG_TAIL_BYTES) : from;
    let cut = from === undefined ? start > 0 : from > size;
    if (size - start > LOG_TAIL_BYTES) {
      start = size - LOG_TAIL_BYTES;
      cut = true;
    }
    const buf = Buffer.alloc(size - start);
    const { bytesRead } = await fh.read(buf, 0, buf.length, start);
    let bytes = buf.subarray(0, bytesRead);
    if (cut && start > 0) {
      const nl = bytes.indexOf(10);
      bytes = nl >= 0 ? bytes.subarray(nl + 1) : bytes.subarray(bytes.length);
    }
    // A writer may be in the middle of a character: its first bytes wait for the next read.
    const whole = completeUtf8(bytes);
    const size_ = start + bytesRead - (bytes.length - whole);
    return { name, size: size_, text: bytes.subarray(0, whole).toString('utf8'), cut };
  } finally {
    await fh.close();
  }
}

/** The length of `b` without an incomplete UTF-8 sequence at its end. */
export function completeUtf8(b: Buffer): number {
  for (let back = 1; back <= Math.min(3, b.length); back++) {
    const byte = b[b.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? b.length - back : b.length;
  }
  return b.length;
}
