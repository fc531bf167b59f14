#!/usr/bin/env node
// Runs the bundled CLI (dist/bundle, see scripts/bundle.mjs), which starts faster, unless a later plain
// `tsc` build made it stale; dist/cli is the unbundled build of the same sources.
import { statSync } from 'node:fs';

const bundled = new URL('../dist/bundle/main.js', import.meta.url);
const plain = new URL('../dist/cli/main.js', import.meta.url);
const mtime = (u) => {
  try {
    return statSync(u).mtimeMs;
  } catch {
    return -1;
  }
};
await import(mtime(bundled) >= mtime(plain) ? bundled.href : plain.href);
