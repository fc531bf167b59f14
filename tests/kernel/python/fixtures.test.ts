/**
 * The Python fixtures of docs/kernel.md §13.1 (the seed plan's 26.0.8) through the shared manifest runner: each case
 * renames through pyright and is compared with its golden JSON and patch.
 */
import { runManifest } from '../fixture-runner.js';

runManifest('python');
