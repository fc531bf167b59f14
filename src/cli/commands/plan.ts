import type { Command } from 'commander';

/** Registers `tugcode init` and `tugcode validate`. */
export function registerPlan(_program: Command): void {}
