#!/usr/bin/env node
// Bundles the CLI entry (dist/cli/main.js, emitted by tsc) into dist/bundle/ with esbuild, keeping every
// dynamic import() as its own chunk, so commands still load only what they need. One file graph instead of
// dozens of small ESM modules cuts ~30 ms from every CLI start (bench/cli-startup.bench.mjs), which
// matters for a CLI called hundreds of times per plan. Runtime dependencies stay external (native or large)
// except commander, which every command needs.
import { build } from 'esbuild';
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const external = Object.keys(pkg.dependencies ?? {}).filter((d) => d !== 'commander');
const outdir = join(root, 'dist', 'bundle');
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: { main: join(root, 'dist', 'cli', 'main.js') },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outdir,
  external,
  logLevel: 'warning',
  // Chunks keep import.meta.url semantics relative to dist/bundle/, the same depth as dist/<module>/.
  chunkNames: 'chunk-[hash]',
  // commander is CommonJS: give the ESM bundle a real `require` for its node: built-ins.
  banner: {
    js: "import { createRequire as __tugCreateRequire } from 'node:module'; const require = __tugCreateRequire(import.meta.url);",
  },
});

// The `tug` binary (05-kernel.md §2.1) gets its own bundle: the kernel's ~40 modules load as a few chunks,
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
});
