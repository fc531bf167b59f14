/**
 * The Python fixtures (tests/kernel/fixtures/python/manifest.json) through the shared manifest runner: each
 * case renames through pyright and is compared with its golden JSON and patch. Each entry cold-starts
 * pyright, so the manifest is split over three files that vitest's workers share: this one runs every third
 * entry starting from entry 1.
 */
import { runManifest } from '../fixture-runner.js';

runManifest('python', { k: 1, n: 3 });
