/**
 * pyright's process entry (docs/kernel.md §6.3), for the language server and the CLI alike: `node
 * pyright-entry.cjs <pyright/langserver.index.js | pyright/index.js> [options]`. It loads pyright's two
 * webpack chunks (`dist/vendor.js` and `dist/pyright-internal.js`, ~4 MB) through the V8 code cache
 * (../../code-cache.cts) into Node's require cache, then requires the entry itself, unchanged (it sets the
 * root that finds the bundled typeshed), whose own `require` of the chunks gets those modules. Compiling the
 * chunks was ~0.2 s of CPU of every pyright process. A chunk that is not there (another pyright layout) is
 * left to the entry. launch.ts builds the command line.
 *
 * CommonJS on purpose (compiled to dist/kernel/backends/python/pyright-entry.cjs): pyright is CommonJS, and
 * a plain script starts without Node's ESM loader.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { loadWithCodeCache } from '../../code-cache.cjs';

const entry = process.argv[2];
if (!entry) throw new Error('usage: pyright-entry.cjs <pyright entry> [options]');
// pyright reads its options from argv: make it look as if the entry had been run directly.
process.argv.splice(1, 2, entry);

// One cache per entry: each holds the code its first run compiled (the server's rename, the CLI's checker).
const loaded = ['vendor.js', 'pyright-internal.js']
  .map((f) => join(dirname(entry), 'dist', f))
  .filter((f) => existsSync(f))
  .map((f) => loadWithCodeCache(f, { prefix: 'pyright', keep: 16, variant: basename(entry) }));
// pyright leaves through process.exit (the server on the `exit` notification); by then the cache holds the
// code of every function this process compiled, not only the chunks' top level.
process.once('exit', () => {
  for (const l of loaded) l.saveCache();
});

createRequire(entry)(entry);
