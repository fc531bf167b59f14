/**
 * Verification sandboxes (05-kernel.md §11.1): a temp copy of the changed files (minimal) or of the whole
 * workspace (full), where the patch is applied with the same engine, without the journal.
 */
import { constants, copyFileSync, existsSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { onAbort } from './lifecycle.js';
import { listWorkspaceFiles } from './snapshot.js';
import { realIo, resolvePatch, writeResolved } from './patch/apply.js';
import type { PatchSet } from './patch/ir.js';

export interface Sandbox {
  root: string;
  kind: 'minimal' | 'full';
  applyPatch(ps: PatchSet): void;
  /** Remove the sandbox unless kept; returns the kept path or null. */
  dispose(keep?: boolean): string | null;
}

export function createSandbox(ws: string, kind: 'minimal' | 'full', o: { sessionRel: string | null; minimalFiles?: Map<string, Uint8Array> }): Sandbox {
  const base = mkdtempSync(join(tmpdir(), 'tug-sbx-'));
  // An interrupted call removes its sandbox (05-kernel.md §3.4), kept or not.
  const unregister = onAbort('sandbox', () => rmSync(base, { recursive: true, force: true }));
  const root = join(base, 'ws');
  mkdirSync(root);
  if (kind === 'minimal') {
    for (const [p, bytes] of o.minimalFiles ?? new Map()) {
      mkdirSync(dirname(join(root, p)), { recursive: true });
      writeFileSync(join(root, p), bytes);
    }
  } else {
    for (const f of listWorkspaceFiles(ws, { sessionRel: o.sessionRel })) {
      const dst = join(root, f.path);
      mkdirSync(dirname(dst), { recursive: true });
      if (f.symlink) symlinkSync(readlinkSync(join(ws, f.path)), dst);
      else copyFileSync(join(ws, f.path), dst, constants.COPYFILE_FICLONE);
    }
    for (const d of ['node_modules', '.venv', 'venv']) {
      if (existsSync(join(ws, d)) && !existsSync(join(root, d))) symlinkSync(join(ws, d), join(root, d), 'dir');
    }
  }
  return {
    root,
    kind,
    applyPatch(ps: PatchSet) {
      // A sandbox is disposable: same engine, no journal, no fsync.
      writeResolved(root, resolvePatch(root, ps), { io: { ...realIo, fsync: () => undefined } });
    },
    dispose(keep = false) {
      unregister();
      if (keep) return root;
      rmSync(base, { recursive: true, force: true });
      return null;
    },
  };
}
