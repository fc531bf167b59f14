import type { Command } from 'commander';

/** Registers the `git` command group (see spec). */
export function registerGit(_program: Command): void {}
