#!/usr/bin/env node
'use strict';
// Runs the bundled CLI (dist/bundle/tugcode.cjs, see scripts/bundle.mjs) through a V8 code cache
// (src/kernel/code-cache.cts), unless a later plain `tsc` build made the bundle stale; dist/cli is the
// unbundled build of the same sources.
//
// This file is CommonJS on purpose: an ES module entry would start Node's ESM loader, ~15 ms of every call.
// The first run compiles the bundle and, at exit, stores the compiled code of everything it ran; later runs
// skip compiling. Each command has its own cache; the 48 newest cache files are kept, and
// `TUG_NO_CODE_CACHE=1` turns the cache off. The bundle never calls `import()` (scripts/bundle.mjs), which a
// script compiled through node:vm could not do without an experimental option.
const { statSync } = require('node:fs');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');

const dist = join(__dirname, '..', 'dist');
const plain = join(dist, 'cli', 'main.js');
const mtime = (p) => {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return -1;
  }
};

const args = process.argv.slice(2);
/** argv's first word that is not an option nor the value of `-C`/`--dir` (cli/argv.ts reads it the same way). */
const first = () => {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-C' || args[i] === '--dir') i++;
    else if (!args[i].startsWith('-')) return args[i];
  }
  return undefined;
};
// `tugcode state …` without a help flag runs from the state group's own bundle (half the code; cli/argv.ts
// declares only that group then), when it is as new as the full one.
const full = join(dist, 'bundle', 'tugcode.cjs');
const state = join(dist, 'bundle', 'tugcode-state.cjs');
const hot = first() === 'state' && !args.includes('-h') && !args.includes('--help');
const bundle = hot && mtime(state) >= mtime(full) ? state : full;

if (mtime(bundle) >= 0 && mtime(bundle) >= mtime(plain)) {
  const { loadWithCodeCache } = require(join(dist, 'kernel', 'code-cache.cjs'));
  // One cache per command (`state claim`, `run`, …), so each holds what that command runs.
  const words = args.filter((a, i) => /^[a-z][a-z-]{0,30}$/.test(a) && !['-C', '--dir'].includes(args[i - 1]));
  const groups = ['state', 'worktree', 'refactor'];
  const command = words.slice(0, groups.includes(words[0]) ? 2 : 1).join(' ');
  const loaded = loadWithCodeCache(bundle, { prefix: 'tugcode', keep: 48, variant: command, ascii: true });
  // At exit the cache holds the code of every function this run compiled, not only the top level.
  process.once('exit', () => loaded.saveCache());
} else import(pathToFileURL(plain).href);
