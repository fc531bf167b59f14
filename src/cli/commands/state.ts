import type { Command } from 'commander';

/** Registers the `state` command group (see spec). */
export function registerState(_program: Command): void {}
