/**
 * Atomic session-file writes (docs/kernel.md §12.1: temp file, then rename) and a forgiving JSON read. A leaf
 * module: session.ts and session-files.ts both build on it, so neither imports the other for it.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

export function writeAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

/** The parsed JSON of a file, or null when it is missing or unreadable. */
export function readJsonFile(path: string): any {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}
