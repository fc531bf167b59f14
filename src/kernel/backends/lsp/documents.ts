/**
 * Open documents of one LSP server (docs/kernel.md §2.3 "synced"): `didOpen` with the kernel's exact
 * (BOM-stripped) text, and after an apply a full-text `didChange` for open documents and
 * `workspace/didChangeWatchedFiles` for the rest.
 */
import { join } from 'node:path';
import type { WorkspaceView } from '../types.js';
import type { LspClient } from './client.js';
import { fileUri } from './edits.js';
import { Method } from './protocol.js';

const FILE_CREATED = 1;
const FILE_CHANGED = 2;
const FILE_DELETED = 3;

export class LspDocuments {
  private readonly versions = new Map<string, number>();

  constructor(
    private readonly view: WorkspaceView,
    private readonly languageId: string,
  ) {}

  uri(file: string): string {
    return fileUri(join(this.view.root, file));
  }

  isOpen(file: string): boolean {
    return this.versions.has(file);
  }

  /** didOpen once per file, with the view's text. */
  open(client: LspClient, file: string): void {
    if (this.versions.has(file)) return;
    const t = this.view.texts.get(file);
    if (!t) return;
    this.versions.set(file, 1);
    client.notify(Method.didOpen, {
      textDocument: { uri: this.uri(file), languageId: this.languageId, version: 1, text: t.text },
    });
  }

  /** Apply changed texts to the view and tell the server. `null` means deleted. */
  sync(client: LspClient | null, changed: Map<string, { text: string; version: string } | null>): void {
    const watched: { uri: string; type: number }[] = [];
    for (const [p, v] of changed) {
      const existed = this.view.texts.has(p);
      if (v === null) this.view.texts.delete(p);
      else this.view.texts.set(p, v);
      if (!client) continue;
      const ver = this.versions.get(p);
      if (ver !== undefined && v !== null) {
        this.versions.set(p, ver + 1);
        client.notify(Method.didChange, {
          textDocument: { uri: this.uri(p), version: ver + 1 },
          contentChanges: [{ text: v.text }],
        });
      } else {
        if (ver !== undefined) {
          this.versions.delete(p);
          client.notify(Method.didClose, { textDocument: { uri: this.uri(p) } });
        }
        watched.push({ uri: this.uri(p), type: v === null ? FILE_DELETED : existed ? FILE_CHANGED : FILE_CREATED });
      }
    }
    if (client && watched.length) client.notify(Method.didChangeWatchedFiles, { changes: watched });
  }
}
