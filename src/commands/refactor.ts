import type { Command } from 'commander';

/** Registers `tugcode refactor …` (05-kernel.md). */
export function registerRefactor(_program: Command): void {}
