/**
 * Registers every command group. Each group module only declares commands and flags (cheap); its
 * bodies import the libraries lazily.
 */
import type { Command } from 'commander';
import { registerMisc } from './misc.js';
import { registerPlan } from './plan.js';
import { registerState } from './state.js';
import { registerGit } from './git.js';
import { registerRefactor } from '../../commands/refactor.js';

export function registerAll(program: Command): void {
  registerPlan(program);
  registerState(program);
  registerGit(program);
  registerRefactor(program);
  registerMisc(program);
}
