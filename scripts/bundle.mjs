#!/usr/bin/env node
// Bundles the CLI entry (dist/cli/main.js, emitted by tsc) into one CommonJS file, dist/bundle/tugcode.cjs,
// which bin/tugcode.cjs runs through a V8 code cache (Node 20 has no module compile cache). A CLI called
// hundreds of times per plan pays its start-up every time: one CJS file loads without the ESM loader's
// per-module resolve/link work, and the code cache skips compiling it (`state heartbeat`: 112–116 ms as
// ~20 ESM chunks, 108 ms as one file without the cache, 89–92 ms with it; an empty node is ~63 ms).
// Imports that are dynamic in the sources stay lazy (esbuild wraps those modules in init functions), so a
// command still loads only the packages it needs. Runtime dependencies stay external (native or large)
// except commander, which every command needs, and better-sqlite3's JavaScript (below); the bundle loads
// them with `require` (a script run from a code cache cannot use `import()` on Node 20), so each must be
// loadable by `require`, which the build checks. A second file, dist/bundle/tugcode-state.cjs, holds the
// `state` group alone. `import.meta.url` becomes the bundle's own file URL: the bundle sits at dist/bundle/, the same
// depth as dist/<module>/, so relative paths keep their meaning.
import { build } from 'esbuild';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
// commander is bundled because every command needs it. The pure-JS dependencies only some commands need
// (execa, simple-git, markdown-it, proper-lockfile, smol-toml) are each bundled on their own into
// dist/bundle/vendor-<name>.cjs, which the CLI bundle loads on first use through the V8 code cache (the
// banner's __tugVendor): in the main file every call would read them (~2–5 ms of each hot command), and
// required plainly a driver compiles them again on every run (execa 18 ms, simple-git 15, markdown-it 9,
// proper-lockfile 7). execa is also an ES module only, which Node 20 before 20.19 could not `require`. pg
// (every call on a PostgreSQL state: ~40 files that Node's loader resolved, read and compiled each time,
// ~45 ms of CPU per call) likewise; its optional pg-native and pg-cloudflare stay outside, required only if
// used, as before.
const VENDORED = ['execa', 'simple-git', 'markdown-it', 'proper-lockfile', 'smol-toml', 'pg'];
const VENDOR_EXTERNAL = ['pg-native', 'pg-cloudflare'];
const vendorFile = (name) => `vendor-${name}.cjs`;
const requireEntry = (name) => {
  try {
    return createRequire(join(root, 'package.json')).resolve(name);
  } catch {
    return name;
  }
};
const external = Object.keys(pkg.dependencies ?? {}).filter((d) => d !== 'commander' && !VENDORED.includes(d));
const outdir = join(root, 'dist', 'bundle');
rmSync(outdir, { recursive: true, force: true });
/** What both CommonJS outputs in dist/bundle/ share. */
const cjs = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  outdir,
  outExtension: { '.js': '.cjs' },
  logLevel: 'warning',
};
await build({
  ...cjs,
  // What `require(name)` loads (its CommonJS build), so a default import sees module.exports as it does in
  // Node; execa, an ES module only, from its `import` entry.
  entryPoints: Object.fromEntries(VENDORED.map((name) => [vendorFile(name).replace(/\.cjs$/, ''), requireEntry(name)])),
  external: VENDOR_EXTERNAL,
  absWorkingDir: root,
});
/** An import of a vendored package → `__tugVendor('vendor-<name>.cjs')`, its file beside the bundle. */
const vendor = {
  name: 'vendor',
  setup(b) {
    b.onResolve({ filter: /^[a-z@][\w@/.-]*$/ }, (a) =>
      VENDORED.includes(a.path) ? { path: a.path, namespace: 'tug-vendor' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'tug-vendor' }, (a) => ({
      contents: `module.exports = __tugVendor(${JSON.stringify(vendorFile(a.path))});`,
      loader: 'js',
    }));
  },
};
// Node built-ins that an empty node process has not loaded yet (it has fs, path, url, module, events, util):
// in the bundle each is required on first use of one of its exports, not when the module that imports it is
// initialized. Loading child_process, fs/promises or crypto pulls in streams, net and readline (~6–9 ms of
// CPU), which `state heartbeat` never uses; a hot command that writes its output with fs.writeSync
// (cli/main.ts) then loads none of them.
const LAZY_BUILTINS = [
  'child_process',
  'crypto',
  'dgram',
  'dns',
  'fs/promises',
  'http',
  'https',
  'net',
  'os',
  'perf_hooks',
  'readline',
  'stream',
  'stream/promises',
  'timers/promises',
  'tty',
  'v8',
  'worker_threads',
  'zlib',
];
// esbuild turns `import { x } from 'node:y'` into `import_node_y = require("node:y")` and every use into a
// property read (`(0, import_node_y.x)(…)`), so a proxy that requires the module on its first read keeps
// the meaning; so does commander's `var childProcess = require("node:child_process")` (it spawns only for
// executable subcommands). Default and namespace imports (`__toESM(require(…))`) are left as they are.
const lazyLoader = `function __tugLazy(id) {
  let m;
  const load = () => (m ??= require(id));
  return new Proxy({}, {
    get: (_, k) => load()[k],
    has: (_, k) => k in load(),
    ownKeys: () => Reflect.ownKeys(load()),
    getOwnPropertyDescriptor: (_, k) => {
      const d = Reflect.getOwnPropertyDescriptor(load(), k);
      return d && { ...d, configurable: true };
    },
  });
}`;
const lazyRequire = new RegExp(
  `\\b(import_[\\w$]+ = |var [\\w$]+ = )require\\("node:(${LAZY_BUILTINS.join('|')})"\\)`,
  'g',
);
// Loads a vendor file through the code cache (dist/kernel/code-cache.cjs, as bin/tugcode.cjs loads the
// bundle); its cache is written when the process exits, holding what the process compiled.
const vendorLoader = `function __tugVendor(name) {
  const file = require.resolve("./" + name);
  const { loadWithCodeCache } = require("../kernel/code-cache.cjs");
  const loaded = loadWithCodeCache(file, { prefix: "tugcode-vendor", keep: 24 });
  process.once("exit", () => loaded.saveCache());
  return loaded.module;
}`;
// better-sqlite3's JavaScript (12 small files) goes into the CLI bundles: loaded from node_modules, Node's
// CommonJS loader spends ~6 ms of every state command resolving, reading and compiling them. Its addon still
// loads from node_modules, and the bundled copy is used only with the version it was built from (the addon and
// its JavaScript change together) and an addon at build/Release; otherwise the installed package loads as it
// is. (cli-floor-wt in bench/: the floor loads the package from node_modules.)
const sqliteDir = dirname(dirname(createRequire(join(root, 'package.json')).resolve('better-sqlite3')));
const sqliteVersion = JSON.parse(readFileSync(join(sqliteDir, 'package.json'), 'utf8')).version;
const sqlite = {
  name: 'better-sqlite3',
  setup(b) {
    b.onResolve({ filter: /^better-sqlite3(\/.*)?$/ }, (a) =>
      a.namespace === 'better-sqlite3'
        ? { path: a.path, external: true }
        : { path: 'choice', namespace: 'better-sqlite3' },
    );
    b.onLoad({ filter: /^choice$/, namespace: 'better-sqlite3' }, () => ({
      contents: `let bundled = false;
try {
  bundled = require("better-sqlite3/package.json").version === ${JSON.stringify(sqliteVersion)} &&
    Boolean(require.resolve("better-sqlite3/build/Release/better_sqlite3.node"));
} catch {}
module.exports = bundled ? require(${JSON.stringify(join(sqliteDir, 'lib', 'index.js'))}) : require("better-sqlite3");`,
      resolveDir: sqliteDir,
      loader: 'js',
    }));
    // Inside the bundled copy: the addon beside the installed package (the bindings package would search
    // from the bundle's own directory). db.ts passes the same file as nativeBinding, so this is a fallback.
    b.onResolve({ filter: /^bindings$/ }, (a) =>
      a.importer.startsWith(sqliteDir) ? { path: 'bindings', namespace: 'better-sqlite3' } : undefined,
    );
    b.onLoad({ filter: /^bindings$/, namespace: 'better-sqlite3' }, () => ({
      contents: 'module.exports = (name) => require(require.resolve("better-sqlite3/build/Release/" + name));',
      loader: 'js',
    }));
  },
};

/**
 * The bundle of `tugcode state …`: the same entry with the state group alone (bin/tugcode.cjs picks it when
 * argv's first word is `state` and no help flag is given, the case in which cli/argv.ts declares only that
 * group). The CLI imports every group (./commands/index.js, in cli/argv.ts) and the refactor front door
 * (../commands/refactor.js, in cli/main.ts, which reaches the kernel); here the first is the state group and
 * the second is absent. Half the code: the hot commands read, and deserialize from the code cache, half as much (~4 ms).
 */
const stateOnly = {
  name: 'state-only',
  setup(b) {
    const cli = join(root, 'dist', 'cli');
    // Each import swapped in the file that makes it: the groups in argv.js, the refactor front door in main.js.
    const swapped = {
      './commands/index.js': {
        importer: join(cli, 'argv.js'),
        contents: 'export { registerState as registerAll } from "./commands/state.js";',
      },
      '../commands/refactor.js': {
        importer: join(cli, 'main.js'),
        contents:
          'export const splitRefactorArgv = () => null;\nexport const runRefactor = () => { throw new Error("no refactor front door in the state bundle"); };',
      },
    };
    b.onResolve({ filter: /^\.\.?\/commands\/(index|refactor)\.js$/ }, (a) =>
      a.importer === swapped[a.path]?.importer ? { path: a.path, namespace: 'state-only' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'state-only' }, (a) => ({
      contents: swapped[a.path].contents,
      resolveDir: cli,
      loader: 'js',
    }));
  },
};

/** Bundles dist/cli/main.js into dist/bundle/<name>.cjs (written atomically, after the checks below). */
async function cliBundle(name, plugins) {
  const file = join(outdir, `${name}.cjs`);
  const cli = await build({
    ...cjs,
    entryPoints: { [name]: join(root, 'dist', 'cli', 'main.js') },
    external,
    plugins: [vendor, sqlite, ...plugins],
    write: false,
    supported: { 'dynamic-import': false },
    define: { 'import.meta.url': '__tugImportMetaUrl' },
    // "use strict" first: the ES modules this is built from were strict, and a banner line before esbuild's
    // own directive would turn that into a plain expression.
    banner: {
      js: `"use strict";\nconst __tugImportMetaUrl = require("node:url").pathToFileURL(__filename).href;\n${vendorLoader}\n${lazyLoader}`,
    },
  });
  const built = cli.outputFiles.find((f) => f.path === file)?.text;
  if (built === undefined) throw new Error(`esbuild wrote no ${file}`);
  // ASCII only, so bin/tugcode.cjs reads it as latin1 (a copy, ~3 ms less than decoding 1.2 MB of UTF-8).
  // esbuild already escapes strings, regular expressions and identifiers; what it keeps of comments it does not.
  const code = built
    .replace(lazyRequire, '$1__tugLazy("node:$2")')
    .replace(/[\u0080-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);

  // An ESM-only dependency would fail only when its command runs (Node 20 before 20.19 cannot require an ES
  // module): fail the build instead, before a bundle exists that bin/tugcode.cjs would prefer to dist/cli.
  const requireFromBundle = createRequire(file);
  for (const [, dep] of code.matchAll(/\brequire\("([^"]+)"\)/g)) {
    if (dep.startsWith('node:')) continue;
    let resolved;
    try {
      resolved = requireFromBundle.resolve(dep);
    } catch (e) {
      throw new Error(`dist/bundle/${name}.cjs requires ${dep}, which cannot be resolved (${e.code ?? e.message})`);
    }
    if (isEsm(resolved))
      throw new Error(`dist/bundle/${name}.cjs requires ${dep}, an ES module (${resolved}): Node 20 < 20.19 cannot`);
  }
  // Written atomically: a CLI call during a build sees the old bundle or the new one, never half of one.
  mkdirSync(outdir, { recursive: true });
  writeFileSync(`${file}.${process.pid}.tmp`, code);
  renameSync(`${file}.${process.pid}.tmp`, file);
}

/** Whether a resolved file is an ES module (by extension, else by the nearest package.json `type`). */
function isEsm(file) {
  if (file.endsWith('.mjs')) return true;
  if (file.endsWith('.cjs')) return false;
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    const pj = join(dir, 'package.json');
    if (existsSync(pj)) return JSON.parse(readFileSync(pj, 'utf8')).type === 'module';
  }
  return false;
}

// The state bundle last: bin/tugcode.cjs uses it only when it is no older than dist/bundle/tugcode.cjs (a
// call during a build never runs a state bundle older than the full one).
await cliBundle('tugcode', []);
await cliBundle('tugcode-state', [stateOnly]);

// The `tug` binary (docs/kernel.md §2.1) gets its own bundle: the kernel's ~40 modules load as a few chunks,
// ~10% of a cold `tug run` (bench/kernel.bench.mjs). Every runtime dependency stays external.
const tugOut = join(root, 'dist', 'bundle-tug');
rmSync(tugOut, { recursive: true, force: true });
await build({
  entryPoints: {
    tug: join(root, 'dist', 'kernel', 'cli', 'tug.js'),
    signals: join(root, 'dist', 'kernel', 'cli', 'signals.js'),
  },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outdir: tugOut,
  external: Object.keys(pkg.dependencies ?? {}),
  logLevel: 'warning',
  chunkNames: 'chunk-[hash]',
  // src/kernel/code-cache.cts is CommonJS: give its `require` calls a real `require` in these ES modules.
  banner: {
    js: "import { createRequire as __tugCreateRequire } from 'node:module'; const require = __tugCreateRequire(import.meta.url);",
  },
});
