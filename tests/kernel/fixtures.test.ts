/**
 * The manifest-driven fixture runner (docs/kernel.md §13.1) for the TypeScript cases; Python and Rust run
 * the same runner from tests/kernel/python/ and tests/kernel/rust/ (their own files, so vitest runs the
 * languages in parallel).
 */
import { runManifest } from './fixture-runner.js';

runManifest('typescript');
