#!/usr/bin/env node
'use strict';
// Runs the bundled CLI (dist/bundle/tugcode.cjs, see scripts/bundle.mjs) through a V8 code cache, unless a
// later plain `tsc` build made the bundle stale; dist/cli is the unbundled build of the same sources.
//
// This file is CommonJS on purpose: an ES module entry would start Node's ESM loader, ~15 ms of every call.
// The code cache is what Node 22's `module.enableCompileCache()` does, done by hand for Node 20 (as
// src/kernel/backends/ts-load.ts does for typescript): the first run compiles the bundle and, at exit,
// stores the compiled code of everything it ran in `os.tmpdir()/tug-v8-cache/`; later runs skip compiling.
// The cache is keyed by the bundle's path, size, mtime, ctime and inode, the Node version and V8's cache tag;
// only a private directory of this user is used, files are written atomically (new temp file + rename), a
// rejected or unreadable cache only costs speed, the 16 newest cache files are kept, and
// `TUG_NO_CODE_CACHE=1` turns it off. The bundle never calls `import()` (scripts/bundle.mjs), which a script
// compiled through node:vm could not do without an experimental option.
const {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} = require('node:fs');
const Module = require('node:module');
const { tmpdir } = require('node:os');
const { dirname, join } = require('node:path');
const { pathToFileURL } = require('node:url');
const { cachedDataVersionTag } = require('node:v8');
const vm = require('node:vm');

const bundle = join(__dirname, '..', 'dist', 'bundle', 'tugcode.cjs');
const plain = join(__dirname, '..', 'dist', 'cli', 'main.js');
const stat = (p) => {
  try {
    return statSync(p);
  } catch {
    return null;
  }
};

/** FNV-1a, 32 bits: a cache file name without loading node:crypto. */
function fnv(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

/**
 * Whether the cache directory is safe to use (cached code runs): a real directory, owned by this user and
 * writable by no one else. A directory of this user that others could write is first made private.
 */
function trustedDir(dir) {
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
function readOwn(file) {
  try {
    const f = lstatSync(file);
    return f.isFile() && f.uid === process.getuid?.() ? readFileSync(file) : undefined;
  } catch {
    return undefined;
  }
}

/** Every rebuild gets a new cache file: keep the `keep` most recent of them. */
function prune(dir, keep) {
  const files = readdirSync(dir)
    .filter((n) => /^tugcode-[0-9a-f]{8}\.bin$/.test(n))
    .map((n) => ({ path: join(dir, n), mtime: lstatSync(join(dir, n)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const f of files.slice(keep)) unlinkSync(f.path);
}

function runBundle(file, st) {
  const cacheDir = join(tmpdir(), 'tug-v8-cache');
  if (process.env.TUG_NO_CODE_CACHE === '1' || !trustedDir(cacheDir)) {
    require(file);
    return;
  }
  // ctime and inode change with every write or copy, so a same-size rebuild never meets an old cache.
  const key = [file, st.size, st.mtimeMs, st.ctimeMs, st.ino, process.version, process.arch, cachedDataVersionTag()];
  const cacheFile = join(cacheDir, `tugcode-${fnv(key.join('\n'))}.bin`);
  const cached = readOwn(cacheFile);
  const script = new vm.Script(Module.wrap(readFileSync(file, 'utf8')), { filename: file, cachedData: cached });
  const mod = new Module(file, module);
  mod.filename = file;
  mod.paths = Module._nodeModulePaths(dirname(file));
  Module._cache[file] = mod;
  if (!cached || script.cachedDataRejected) {
    // At exit the cache holds the code of every function this run compiled, not only the top level.
    process.once('exit', () => {
      try {
        const tmp = join(cacheDir, `.tugcode-${process.pid}-${Math.random().toString(36).slice(2)}.tmp`);
        writeFileSync(tmp, script.createCachedData(), { flag: 'wx', mode: 0o600 });
        renameSync(tmp, cacheFile);
        prune(cacheDir, 16);
      } catch {
        // a cache that cannot be written only costs speed
      }
    });
  }
  script.runInThisContext().call(mod.exports, mod.exports, Module.createRequire(file), mod, file, dirname(file));
  mod.loaded = true;
}

const st = stat(bundle);
const plainSt = stat(plain);
if (st && (!plainSt || st.mtimeMs >= plainSt.mtimeMs)) runBundle(bundle, st);
else import(pathToFileURL(plain).href);
