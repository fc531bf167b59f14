/**
 * Loading the bundled `typescript` with a V8 code cache (what Node 22's `module.enableCompileCache()` does,
 * done by hand for Node 20). typescript.js is ~9 MB of JavaScript: compiling it costs 150–250 ms of every
 * cold `tug` call, and lazily compiling the functions a rename needs costs more. After the first run the
 * cache holds the compiled code of everything that run used, so later processes skip both.
 *
 * The cache lives in `os.tmpdir()/tug-v8-cache/` (used only when it is a private directory of this user),
 * keyed by the module file (path, size, mtime, ctime, inode), the Node version and V8's cache version tag;
 * it is written atomically, a rejected or corrupt cache just falls back to compiling, and
 * `TUG_NO_CODE_CACHE=1` disables it. The loaded module is registered in Node's
 * require cache, so any later `require('typescript')` in the process gets the same instance.
 */
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cachedDataVersionTag } from 'node:v8';
import vm from 'node:vm';

interface Loaded<T> {
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
 * (bin/tugcode.cjs repeats this check: it must start without loading any of dist/.)
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

/** Load a CommonJS module file with a V8 code cache. */
export function loadWithCodeCache<T>(file: string, env: Record<string, string | undefined> = process.env): Loaded<T> {
  const M = Module as ModuleInternals;
  const existing = M._cache[file] as { exports: T } | undefined;
  if (existing || env.TUG_NO_CODE_CACHE === '1') {
    return { module: existing ? existing.exports : (createRequire(file)(file) as T), saveCache: () => undefined };
  }
  const cacheDir = join(tmpdir(), 'tug-v8-cache');
  if (!trustedCacheDir(cacheDir)) return { module: createRequire(file)(file) as T, saveCache: () => undefined };
  const st = statSync(file);
  // ctime and inode change with every write or copy, so a same-size reinstall never meets an old cache.
  const key = createHash('sha256')
    .update(
      [file, st.size, st.mtimeMs, st.ctimeMs, st.ino, process.version, process.arch, cachedDataVersionTag()].join('\n'),
    )
    .digest('hex')
    .slice(0, 16);
  const cacheFile = join(cacheDir, `${key}.bin`);
  const cached = readOwnFile(cacheFile);
  const script = new vm.Script(M.wrap(readFileSync(file, 'utf8')), { filename: file, cachedData: cached });
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
  const needsWrite = !cached || script.cachedDataRejected === true;
  let saved = false;
  return {
    module: mod.exports,
    saveCache() {
      if (!needsWrite || saved) return;
      saved = true;
      try {
        const tmp = join(cacheDir, `.${key}-${process.pid}-${Math.random().toString(36).slice(2)}.tmp`);
        writeFileSync(tmp, script.createCachedData(), { flag: 'wx', mode: 0o600 });
        renameSync(tmp, cacheFile);
      } catch {
        // a cache that cannot be written only costs speed
      }
    },
  };
}
