/**
 * The warm backends of one Kernel (docs/kernel.md §2.3, §6.1): the in-process TypeScript backend (opened on
 * first use over the snapshot's texts, synced with the changed files whenever the snapshot moved) and the
 * LSP backends (pyright / rust-analyzer, ./backends/lsp/warm.ts). Synced after each apply, closed on close.
 */
import type { KernelWarning } from './envelope.js';
import type { Logger } from './log.js';
import { recordToolchain, removePidFile, writePidFile } from './session.js';
import { changedFiles, type Snapshot } from './snapshot.js';
import type { KernelOptions } from './types.js';
import { WorkspaceFiles, type FileCache } from './workspace.js';
import type { BackendSession, WorkspaceView } from './backends/types.js';
import { WarmBackends } from './backends/lsp/warm.js';

export class BackendPool {
  private ts: BackendSession | null = null;
  private view: WorkspaceView | null = null;
  private viewSnap: Snapshot | null = null;
  /** pyright / rust-analyzer, started lazily and kept warm (issue 6). */
  private lsp: WarmBackends | null = null;

  constructor(
    private readonly workspace: string,
    private readonly sessionDir: string,
    private readonly o: KernelOptions,
    private readonly log: Logger,
    /** The kernel's decoded texts and line indexes (content-checked), used for the syncs after apply. */
    private readonly fileCache: FileCache,
  ) {}

  /** The warm backend of a language, in step with `snap`. */
  async get(lang: string, snap: Snapshot, files: WorkspaceFiles, warnings: KernelWarning[]): Promise<BackendSession> {
    if (lang === 'typescript') return this.typescript(snap, files);
    this.lsp ??= new WarmBackends(this.workspace, this.sessionDir, this.o);
    return this.lsp.get(lang === 'python' ? 'python' : 'rust', snap, files, warnings);
  }

  private async typescript(snap: Snapshot, files: WorkspaceFiles): Promise<BackendSession> {
    const { typescriptBackend } = await import('./backends/typescript.js');
    if (!this.ts || !this.view || !this.viewSnap) {
      const texts = new Map<string, { text: string; version: string }>();
      for (const [p, meta] of snap.files) {
        const f = files.tryFile(p);
        if (f) texts.set(p, { text: f.text, version: meta.sha256 });
      }
      this.view = { root: this.workspace, texts };
      this.ts = await this.log.time(
        'typescript backend open',
        () => typescriptBackend.open(this.view!, { env: this.o.env ?? {} }),
        () => ({ files: texts.size }),
      );
      // In-process backend: the pid file names this process (session status, orphan cleanup).
      writePidFile(this.sessionDir, 'typescript', process.pid);
      const probe = await typescriptBackend.probe();
      if (probe.version) recordToolchain(this.sessionDir, 'typescript', { version: probe.version });
      this.viewSnap = snap;
      return this.ts;
    }
    if (this.viewSnap.id !== snap.id) {
      const changed = new Map<string, { text: string; version: string } | null>();
      for (const p of changedFiles(this.viewSnap.files, snap.files)) {
        const meta = snap.files.get(p);
        const f = meta ? files.tryFile(p) : null;
        changed.set(p, f && meta ? { text: f.text, version: meta.sha256 } : null);
      }
      await this.ts.sync(changed);
      this.viewSnap = snap;
    }
    return this.ts;
  }

  /** After an apply: the backends already open (TypeScript, then the LSP ones) see the written files. */
  async syncAfterApply(after: Snapshot): Promise<void> {
    if (this.ts && this.viewSnap) {
      const files = new WorkspaceFiles(this.workspace, after, this.fileCache);
      await this.typescript(after, files);
    }
    if (this.lsp) await this.lsp.syncAll(after, new WorkspaceFiles(this.workspace, after, this.fileCache));
  }

  /** Stops the LSP backends, then closes the TypeScript backend and removes its pid file. */
  async close(): Promise<void> {
    const lsp = this.lsp;
    this.lsp = null;
    if (lsp) await lsp.closeAll();
    const ts = this.ts;
    this.ts = null;
    if (ts) {
      await ts.close();
      removePidFile(this.sessionDir, 'typescript');
    }
  }
}
