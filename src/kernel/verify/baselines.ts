/**
 * Baseline cache (docs/kernel.md §11.3): the unpatched diagnostics of a check, stored in
 * `<session>/baselines/` and keyed by (snapshot_id, check, tool version, argv). The agent flow runs the same
 * operation on the same snapshot two or three times (analyze → dry run → --apply); with the cache each
 * baseline is computed once. At most 50 entries are kept (least recently used go first).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { canonicalJson, sha256Hex } from '../ids.js';
import { writeAtomic } from '../atomic.js';
import type { Diagnostic } from '../types.js';

export interface BaselineKey {
  snapshot_id: string;
  check: string;
  tool_version: string;
  argv: string[];
}

export interface BaselineValue {
  diagnostics: Diagnostic[];
  exit_code: number | null;
}

const KEEP = 50;

export class BaselineCache {
  constructor(private readonly dir: string | null) {}

  private file(k: BaselineKey): string {
    return join(this.dir!, `${sha256Hex(canonicalJson(k)).slice(0, 24)}.json`);
  }

  get(k: BaselineKey): BaselineValue | null {
    if (!this.dir) return null;
    const f = this.file(k);
    try {
      const v = JSON.parse(readFileSync(f, 'utf8'));
      if (canonicalJson(v.key) !== canonicalJson(k) || !Array.isArray(v.diagnostics)) return null;
      const now = new Date();
      utimesSync(f, now, now);
      return { diagnostics: v.diagnostics, exit_code: v.exit_code ?? null };
    } catch {
      return null;
    }
  }

  put(k: BaselineKey, v: BaselineValue): void {
    if (!this.dir) return;
    try {
      mkdirSync(this.dir, { recursive: true });
      writeAtomic(this.file(k), JSON.stringify({ key: k, ...v }));
      const all = readdirSync(this.dir).filter((n) => n.endsWith('.json'));
      if (all.length <= KEEP) return;
      const byAge = all
        .map((n) => ({ n, t: statSync(join(this.dir!, n)).mtimeMs }))
        .sort((a, b) => b.t - a.t || (a.n < b.n ? -1 : 1));
      for (const old of byAge.slice(KEEP)) rmSync(join(this.dir, old.n), { force: true });
    } catch {
      // a cache that cannot be written only costs time
    }
  }

  /** Compute on a miss; a hit skips the work. Results marked `cacheable: false` (spawn failures, timeouts) are not stored. */
  async through(
    k: BaselineKey,
    compute: () => Promise<BaselineValue & { cacheable?: boolean }> | (BaselineValue & { cacheable?: boolean }),
  ): Promise<BaselineValue> {
    const hit = this.get(k);
    if (hit) return hit;
    const { cacheable, ...v } = await compute();
    if (cacheable !== false) this.put(k, v);
    return v;
  }
}

/** The version of the tsc that `tscPath` runs for a workspace (its own node_modules/typescript, else ours). */
export function tscVersion(workspace: string, bundled: string): string {
  const own = join(workspace, 'node_modules', 'typescript', 'package.json');
  if (existsSync(own)) {
    try {
      return `workspace:${JSON.parse(readFileSync(own, 'utf8')).version}`;
    } catch {
      return 'workspace:unknown';
    }
  }
  return `bundled:${bundled || (createRequire(import.meta.url)('typescript/package.json') as { version: string }).version}`;
}
