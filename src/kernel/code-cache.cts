/**
 * Loading a CommonJS file with a V8 code cache (what Node 22's `module.enableCompileCache()` does, done by
 * hand for Node 20). Used for the bundled `typescript` (backends/typescript.ts: ~9 MB whose compilation costs
 * 150–250 ms of every cold `tug` call) and by bin/tugcode.cjs for the CLI bundle (~20 ms of every call).
 * After the first run the cache holds the compiled code of everything that run used, so later processes
 * skip compiling it.
 *
 * CommonJS on purpose (this file compiles to dist/kernel/code-cache.cjs): bin/tugcode.cjs requires it
 * without starting Node's ESM loader.
 *
 * The cache lives in `os.tmpdir()/tug-v8-cache/` and is used only when that is a real directory of this user
 * that no one else can write (cached code runs). Files are keyed by the module file (path, size, mtime,
 * ctime, inode) and the Node version, must be this user's regular files, and are written
 * through a new temp file and a rename. A rejected or unreadable cache only costs speed; `TUG_NO_CODE_CACHE=1`
 * disables it. The loaded module is registered in Node's require cache, so a later `require(file)` in the
 * process gets the same instance.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { unlinkSync, writeFileSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import vm from 'node:vm';

export interface Loaded<T> {
  module: T;
  /** Write the cache if this process compiled without one (call once the module has done real work). */
  saveCache(): void;
}

type ModuleInternals = typeof Module & {
  _cache: Record<string, unknown>;
  _nodeModulePaths(dir: string): string[];
  wrap(src: string): string;
};

/**
 * Whether the cache directory is safe to use (cached code runs): a real directory, owned by this user and
 * writable by no one else. A directory of this user that others could write is first made private.
 */
function trustedCacheDir(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const d = lstatSync(dir);
    if (!d.isDirectory() || d.uid !== process.getuid?.()) return false;
    if ((d.mode & 0o022) !== 0) chmodSync(dir, 0o700);
    return true;
  } catch {
    return false;
  }
}

/** A cache file of this user, never through a symlink; undefined when there is none. */
function readOwnFile(file: string): Buffer | undefined {
  try {
    const f = lstatSync(file);
    return f.isFile() && f.uid === process.getuid?.() ? readFileSync(file) : undefined;
  } catch {
    return undefined;
  }
}

/** FNV-1a, 32 bits: a cache file name without loading node:crypto. */
function fnv(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

/** Keep the `keep` most recent cache files named `<prefix>-<8 hex>.bin`. */
function prune(dir: string, prefix: string, keep: number): void {
  const name = new RegExp(`^${prefix}-[0-9a-f]{8}\\.bin$`);
  const files = readdirSync(dir)
    .filter((n) => name.test(n))
    .map((n) => ({ path: join(dir, n), mtime: lstatSync(join(dir, n)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const f of files.slice(keep)) unlinkSync(f.path);
}

/**
 * Load a CommonJS module file with a V8 code cache named `<prefix>-<hash>.bin`; `keep` bounds how many such
 * files stay (every rebuild of the file makes a new one).
 */
export function loadWithCodeCache<T>(
  file: string,
  o: {
    prefix: string;
    keep?: number;
    env?: Record<string, string | undefined>;
    /**
     * Separate caches for separate uses of one file (the CLI: one per command). A cache holds what its first
     * run compiled, and a larger one costs more to read: one run of `demo` would otherwise make every later
     * `state heartbeat` read the code of the whole driver.
     */
    variant?: string;
    /** The file is ASCII (the CLI bundle, checked by scripts/bundle.mjs): read as latin1, a copy, not a decode. */
    ascii?: boolean;
  },
): Loaded<T> {
  const M = Module as ModuleInternals;
  const existing = M._cache[file] as { exports: T } | undefined;
  const plain = () => ({ module: existing ? existing.exports : (createRequire(file)(file) as T), saveCache: () => {} });
  const cacheDir = join(tmpdir(), 'tug-v8-cache');
  if (existing || (o.env ?? process.env).TUG_NO_CODE_CACHE === '1' || !trustedCacheDir(cacheDir)) return plain();
  const st = statSync(file);
  // ctime and inode change with every write or copy, so a same-size rebuild never meets an old cache. V8
  // checks its own version and flags in the data: a cache from a process with other V8 flags is rejected and
  // rewritten (node:v8's cachedDataVersionTag would tell them apart in the key, but loading node:v8 loads the
  // stream modules, ~2.5 ms of every call).
  const key = [file, st.size, st.mtimeMs, st.ctimeMs, st.ino, process.version, process.arch];
  if (o.variant) key.push(o.variant);
  const cacheFile = join(cacheDir, `${o.prefix}-${fnv(key.join('\n'))}.bin`);
  const cached = readOwnFile(cacheFile);
  const source = readFileSync(file, o.ascii ? 'latin1' : 'utf8');
  const script = new vm.Script(M.wrap(source), { filename: file, cachedData: cached });
  const mod = new Module(file) as Module & { filename: string; paths: string[]; loaded: boolean; exports: T };
  mod.filename = file;
  mod.paths = M._nodeModulePaths(dirname(file));
  M._cache[file] = mod;
  try {
    const fn = script.runInThisContext() as (
      exports: unknown,
      require: NodeJS.Require,
      module: unknown,
      filename: string,
      dirname: string,
    ) => void;
    fn.call(mod.exports, mod.exports, createRequire(file), mod, file, dirname(file));
  } catch (e) {
    delete M._cache[file];
    throw e;
  }
  mod.loaded = true;
  let needsWrite = !cached || script.cachedDataRejected === true;
  return {
    module: mod.exports,
    saveCache() {
      if (!needsWrite) return;
      needsWrite = false;
      try {
        const tmp = join(cacheDir, `.${o.prefix}-${process.pid}-${Math.random().toString(36).slice(2)}.tmp`);
        writeFileSync(tmp, script.createCachedData(), { flag: 'wx', mode: 0o600 });
        renameSync(tmp, cacheFile);
        if (o.keep !== undefined) prune(cacheDir, o.prefix, o.keep);
      } catch {
        // a cache that cannot be written only costs speed
      }
    },
  };
}
