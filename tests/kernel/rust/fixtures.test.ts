/**
 * The Rust fixtures of docs/kernel.md §13.1 through the shared manifest runner. They need a rust-analyzer
 * whose `--version` runs; without one each case is reported as skipped with the probe's reason (never a
 * silent pass), and TUG_REQUIRE_RUST=1 turns the skips into failures.
 */
import { runManifest } from '../fixture-runner.js';

runManifest('rust');
