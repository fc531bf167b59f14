#!/usr/bin/env node
// The bundled CLI (dist/bundle, see scripts/bundle.mjs) starts faster; dist/cli is the unbundled build.
import { existsSync } from 'node:fs';

const bundled = new URL('../dist/bundle/main.js', import.meta.url);
await import(existsSync(bundled) ? bundled.href : new URL('../dist/cli/main.js', import.meta.url).href);
