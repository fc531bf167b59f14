/**
 * Helpers for the scripted fake LSP server (server.mjs): its path and a way to hand it a script.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const FAKE_SERVER = join(dirname(fileURLToPath(import.meta.url)), 'server.mjs');

/** Write the script to a temp file and point FAKE_LSP_SCRIPT at it (the server reads it at start). */
export function withScript(script: object): string {
  const p = join(mkdtempSync(join(tmpdir(), 'tug-fake-lsp-')), 'script.json');
  writeFileSync(p, JSON.stringify(script));
  process.env.FAKE_LSP_SCRIPT = p;
  return p;
}
