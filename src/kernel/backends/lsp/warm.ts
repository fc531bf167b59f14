/**
 * Warm LSP backends of one Kernel (docs/kernel.md §2.3, §12.3): pyright and rust-analyzer start lazily, at
 * most once per Kernel, stay warm across operations, are synced after each apply (and whenever the
 * snapshot moved), and stop on close. Backends are loaded with `import()`, so a TypeScript rename never
 * loads them.
 */
import type { KernelWarning } from '../../envelope.js';
import { recordToolchain } from '../../session.js';
import { hasBom } from '../../patch/positions.js';
import { changedFiles, languageOf, type Snapshot } from '../../snapshot.js';
import type { KernelOptions } from '../../types.js';
import type { WorkspaceFiles } from '../../workspace.js';
import type { BackendSession, WorkspaceView } from '../types.js';

type LspLang = 'python' | 'rust';

interface Warm {
  session: BackendSession;
  snap: Snapshot;
}

export class WarmBackends {
  private readonly warm = new Map<LspLang, Warm>();

  constructor(
    private readonly workspace: string,
    private readonly sessionDir: string,
    private readonly o: KernelOptions,
  ) {}

  private view(lang: LspLang, snap: Snapshot, files: WorkspaceFiles): { view: WorkspaceView; bom: Set<string> } {
    const texts = new Map<string, { text: string; version: string }>();
    const bom = new Set<string>();
    for (const [p, meta] of snap.files) {
      if (languageOf(p) !== lang) continue;
      const f = files.tryFile(p);
      if (!f) continue;
      texts.set(p, { text: f.text, version: meta.sha256 });
      if (hasBom(f.bytes)) bom.add(p);
    }
    return { view: { root: this.workspace, texts }, bom };
  }

  /** The warm session for `lang`, started or synced to `snap`. */
  async get(lang: LspLang, snap: Snapshot, files: WorkspaceFiles, warnings: KernelWarning[]): Promise<BackendSession> {
    const w = this.warm.get(lang);
    if (w && (w.session as { alive?: boolean }).alive === false) {
      // A crashed server is not reused: the next operation starts a fresh one.
      this.warm.delete(lang);
      await w.session.close().catch(() => undefined);
    } else if (w) {
      if (w.snap.id !== snap.id) await this.syncOne(lang, w, snap, files);
      return w.session;
    }
    const { view, bom } = this.view(lang, snap, files);
    let session: BackendSession;
    if (lang === 'python') {
      const { pyrightBackend } = await import('../python/pyright.js');
      const { resolvePythonAsync } = await import('../python/interpreter.js');
      // The interpreter is probed while pyright boots; its configuration request waits for the answer.
      const pythonPending = resolvePythonAsync(
        { workspace: this.workspace, sessionDir: this.sessionDir, explicit: this.o.python, env: this.o.env ?? {} },
        warnings,
      )
        .then((p) => p?.path ?? null)
        .catch(() => null);
      session = await pyrightBackend.open(view, {
        sessionDir: this.sessionDir,
        pythonPending,
        bomFiles: bom,
        env: this.o.env ?? {},
      });
      const { pyrightVersion } = await import('../python/pyright.js');
      const v = pyrightVersion();
      if (v) recordToolchain(this.sessionDir, 'pyright', { version: v });
    } else {
      const { rustAnalyzerBackend } = await import('../rust/rust-analyzer.js');
      session = await rustAnalyzerBackend.open(view, {
        sessionDir: this.sessionDir,
        rustAnalyzer: this.o.rustAnalyzer ?? null,
        bomFiles: bom,
        env: this.o.env ?? {},
      });
      const ra = (session as { ra?: { path: string | null; version: string | null } }).ra;
      if (ra?.path) recordToolchain(this.sessionDir, 'rust_analyzer', { path: ra.path, version: ra.version ?? '' });
    }
    this.warm.set(lang, { session, snap });
    return session;
  }

  private async syncOne(lang: LspLang, w: Warm, snap: Snapshot, files: WorkspaceFiles): Promise<void> {
    const changed = new Map<string, { text: string; version: string } | null>();
    for (const p of changedFiles(w.snap.files, snap.files)) {
      if (languageOf(p) !== lang) continue;
      const meta = snap.files.get(p);
      const f = meta ? files.tryFile(p) : null;
      changed.set(p, f && meta ? { text: f.text, version: meta.sha256 } : null);
    }
    if (changed.size) await w.session.sync(changed);
    w.snap = snap;
  }

  /** Sync every warm backend to `snap` (after an apply). */
  async syncAll(snap: Snapshot, files: WorkspaceFiles): Promise<void> {
    for (const [lang, w] of this.warm) if (w.snap.id !== snap.id) await this.syncOne(lang, w, snap, files);
  }

  async closeAll(): Promise<void> {
    const all = [...this.warm.values()];
    this.warm.clear();
    await Promise.all(all.map((w) => w.session.close().catch(() => undefined)));
  }
}
