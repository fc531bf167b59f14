/**
 * Verification sandboxes (docs/kernel.md §11.1): a temp copy of the changed files (minimal) or of the whole
 * workspace (full), where the patch is applied with the same engine, without the journal. A minimal
 * sandbox holds the changed files as the patch leaves them: their unpatched bytes are only in memory.
 */
import {
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { onAbort } from './lifecycle.js';
import { KEPT_MARK, sandboxPrefix } from './sandbox-owner.js';
import { KernelError } from './errors.js';
import { listWorkspaceFiles, type Exclusions, type ListBounds } from './snapshot.js';
import { realIo, resolvePatch, writeResolved, type ApplyIo } from './patch/apply.js';
import type { PatchSet } from './patch/ir.js';

export interface Sandbox {
  root: string;
  kind: 'minimal' | 'full';
  applyPatch(ps: PatchSet): void;
  /** A file's current bytes (what the engine last wrote, else what the sandbox holds). */
  read(rel: string): Uint8Array;
  /**
   * Put the unpatched bytes of `rels` on disk before the patch, for a baseline that a tool reads from files
   * (py-compile): a minimal sandbox holds them in memory only. The patch's writes replace them.
   */
  writeUnpatched(rels: string[]): Promise<void>;
  /** Wait until every file the engine wrote is on disk (before running tools in the sandbox). */
  flush(): Promise<void>;
  /** Remove the sandbox unless kept; returns the kept path or null. Call after `flush`; again, a no-op. */
  dispose(keep?: boolean): string | null;
}

/**
 * A sandbox of `kind`. A full one lists the workspace within `o`'s bounds first (WorkspaceTooLarge before
 * the temp directory exists); a copy that fails midway (an unreadable file, ENOSPC) removes what it made
 * and is VerificationUnavailable.
 */
export async function createSandbox(
  ws: string,
  kind: 'minimal' | 'full',
  o: Exclusions & ListBounds & { minimalFiles?: Map<string, Uint8Array>; env?: Record<string, string | undefined> },
): Promise<Sandbox> {
  const files = kind === 'full' ? await listWorkspaceFiles(ws, o) : [];
  // The name carries the owner, so a later call can sweep it should this one be SIGKILLed (sandbox-owner.ts).
  const base = mkdtempSync(join(tmpdir(), sandboxPrefix()));
  const remove = () => rmSync(base, { recursive: true, force: true });
  let aborted = false;
  // An interrupted call removes its sandbox (docs/kernel.md §3.4), kept or not; a copy in progress stops.
  const unregister = onAbort('sandbox', () => {
    aborted = true;
    remove();
  });
  const root = join(base, 'ws');
  // Bytes this sandbox wrote itself (minimal kind): the apply engine reads them back from memory.
  const written = new Map<string, Uint8Array>();
  // Files the engine wrote: kept in memory for the checks while their disk writes run in the background.
  const landed = new Map<string, Uint8Array>();
  const pending: Promise<void>[] = [];
  const made = new Set<string>();
  const mkdir = (d: string) => {
    if (made.has(d)) return;
    mkdirSync(d, { recursive: true });
    made.add(d);
  };
  let at: string | null = null;
  try {
    mkdirSync(root);
    if (kind === 'minimal') {
      for (const [p, bytes] of o.minimalFiles ?? new Map()) {
        // The unpatched bytes stay in memory (the engine resolves against them); applying the patch writes
        // each changed file once. Checks that need the unpatched content read it from memory too.
        mkdir(dirname(join(root, p)));
        written.set(join(root, p), bytes);
      }
    } else {
      let yielded = Date.now();
      for (const f of files) {
        // The copy yields to the event loop every few milliseconds, so SIGINT/SIGTERM are handled during a
        // long copy, not after it; once aborted it stops (its mkdir would otherwise recreate the sandbox).
        if (Date.now() - yielded > 20) {
          await new Promise((r) => setImmediate(r));
          yielded = Date.now();
        }
        if (aborted) throw new Error('interrupted');
        at = f.path;
        const dst = join(root, f.path);
        mkdir(dirname(dst));
        if (f.symlink) symlinkSync(readlinkSync(join(ws, f.path)), dst);
        else copyFileSync(join(ws, f.path), dst, constants.COPYFILE_FICLONE);
      }
      at = null;
      for (const d of ['node_modules', '.venv', 'venv']) {
        if (existsSync(join(ws, d)) && !existsSync(join(root, d))) symlinkSync(join(ws, d), join(root, d), 'dir');
      }
    }
  } catch (e) {
    unregister();
    remove();
    const reason = (e as Error).message;
    throw new KernelError(
      'VerificationUnavailable',
      `cannot build the ${kind} sandbox${at ? ` (copying ${at})` : ''}: ${reason}`,
      { check: null, tool: null, reason, path: at },
    );
  }
  let disposed: { kept: string | null } | null = null;
  return {
    root,
    kind,
    applyPatch(ps: PatchSet) {
      const io = sandboxIo(written, landed, pending);
      writeResolved(root, resolvePatch(root, ps, io), { io });
    },
    read(rel: string) {
      const abs = join(root, rel);
      return landed.get(abs) ?? written.get(abs) ?? readFileSync(abs);
    },
    async writeUnpatched(rels: string[]) {
      await Promise.all(
        rels.flatMap((rel) => {
          const abs = join(root, rel);
          const bytes = landed.has(abs) ? undefined : written.get(abs);
          return bytes ? [writeFile(abs, bytes)] : [];
        }),
      );
    },
    async flush() {
      while (pending.length > 0) await Promise.all(pending.splice(0));
    },
    dispose(keep = false) {
      // Idempotent: a failing check disposes (keeping it with --keep-sandbox) before the caller's cleanup does.
      if (disposed) return disposed.kept;
      unregister();
      // Writes still in flight after a failure may find the directory gone: nothing to report then.
      for (const w of pending) w.catch(() => undefined);
      disposed = { kept: keep ? root : null };
      if (!keep) remove();
      else {
        // A kept sandbox is never swept (docs/kernel.md §11.1); without its mark it would be once this call ends.
        try {
          writeFileSync(join(base, KEPT_MARK), '');
        } catch {
          remove();
          disposed = { kept: null };
        }
      }
      return disposed.kept;
    },
  };
}

/**
 * The apply engine's I/O inside a disposable sandbox (same engine, no journal): no fsync; files the sandbox
 * wrote are read back from memory; a temp file stays in memory and its rename writes the target in place
 * (keeping the target's mode, copied from the workspace, so no chmod), asynchronously: checks read the new
 * bytes from memory while the writes land, and `flush` waits for them before any tool runs.
 */
function sandboxIo(
  written: Map<string, Uint8Array>,
  landed: Map<string, Uint8Array>,
  pending: Promise<void>[],
): ApplyIo {
  const temps = new Map<string, Uint8Array | string>();
  return {
    ...realIo,
    readFile: (p) => landed.get(p) ?? written.get(p) ?? realIo.readFile(p),
    writeFile: (p, d) => void temps.set(p, d),
    fsync: () => undefined,
    chmod: (p, m) => {
      if (!temps.has(p)) realIo.chmod(p, m);
    },
    mode: () => 0,
    rename: (from, to) => {
      const d = temps.get(from);
      if (d === undefined) return realIo.rename(from, to);
      temps.delete(from);
      const bytes = typeof d === 'string' ? Buffer.from(d, 'utf8') : d;
      landed.set(to, bytes);
      pending.push(writeFile(to, bytes));
    },
    unlink: (p) => {
      if (!temps.delete(p)) realIo.unlink(p);
    },
  };
}
