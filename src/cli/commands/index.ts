/**
 * Registers every command group. Each group module only declares commands and flags (cheap); its
 * bodies import the libraries lazily.
 */
import type { Command } from 'commander';
import { registerMisc } from './misc.js';

export function registerAll(program: Command): void {
  registerMisc(program);
}
