/**
 * Helpers for the scripted fake LSP server (server.mjs): its path and a way to hand it a script.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEachFile } from '../../helpers/file-hooks.js';

const made: string[] = [];
afterEachFile(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

export const FAKE_SERVER = join(dirname(fileURLToPath(import.meta.url)), 'server.mjs');

/** Write the script to a temp file and point FAKE_LSP_SCRIPT at it (the server reads it at start). */
export function withScript(script: object): string {
  const dir = mkdtempSync(join(tmpdir(), 'tug-fake-lsp-'));
  made.push(dir);
  const p = join(dir, 'script.json');
  writeFileSync(p, JSON.stringify(script));
  process.env.FAKE_LSP_SCRIPT = p;
  return p;
}
