/**
 * Loading the bundled `typescript` with a V8 code cache (what Node 22's `module.enableCompileCache()` does,
 * done by hand for Node 20). typescript.js is ~9 MB of JavaScript: compiling it costs 150–250 ms of every
 * cold `tug` call, and lazily compiling the functions a rename needs costs more. After the first run the
 * cache holds the compiled code of everything that run used, so later processes skip both.
 *
 * The cache lives in `os.tmpdir()/tug-v8-cache/`, keyed by the module file (path, size, mtime), the Node
 * version and V8's cache version tag; it is written atomically, a rejected or corrupt cache just falls
 * back to compiling, and `TUG_NO_CODE_CACHE=1` disables it. The loaded module is registered in Node's
 * require cache, so any later `require('typescript')` in the process gets the same instance.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
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

/** Load a CommonJS module file with a V8 code cache. */
export function loadWithCodeCache<T>(file: string, env: Record<string, string | undefined> = process.env): Loaded<T> {
  const M = Module as ModuleInternals;
  const existing = M._cache[file] as { exports: T } | undefined;
  if (existing || env.TUG_NO_CODE_CACHE === '1') {
    return { module: existing ? existing.exports : (createRequire(file)(file) as T), saveCache: () => undefined };
  }
  const st = statSync(file);
  const key = createHash('sha256')
    .update(`${file}\n${st.size}\n${st.mtimeMs}\n${process.version}\n${process.arch}\n${cachedDataVersionTag()}`)
    .digest('hex')
    .slice(0, 16);
  const cacheDir = join(tmpdir(), 'tug-v8-cache');
  const cacheFile = join(cacheDir, `${key}.bin`);
  let cached: Buffer | undefined;
  try {
    // Only a cache directory that is this user's and writable by no one else is trusted: cached code runs.
    const d = statSync(cacheDir);
    const trusted = d.uid === process.getuid?.() && (d.mode & 0o022) === 0;
    cached = trusted && existsSync(cacheFile) ? readFileSync(cacheFile) : undefined;
  } catch {
    cached = undefined;
  }
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
        mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
        const tmp = `${cacheFile}.${process.pid}.tmp`;
        writeFileSync(tmp, script.createCachedData());
        renameSync(tmp, cacheFile);
      } catch {
        // a cache that cannot be written only costs speed
      }
    },
  };
}
