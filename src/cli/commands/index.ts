/**
 * Registers every command group. Each group module only declares commands from their input tables
 * (cheap); operations and renderers load on first use.
 */
import type { Command } from 'commander';
import type { CliApp } from '../define.js';
import { registerPlan } from './plan.js';
import { registerState } from './state.js';
import { registerGit } from './git.js';
import { registerRefactor } from '../../commands/refactor.js';
import { registerRun } from './run.js';
import { registerMcp } from './mcp.js';
import { registerBoard } from './board.js';

export function registerAll(program: Command, app: CliApp): void {
  registerPlan(program, app);
  registerState(program, app);
  registerGit(program, app);
  registerRun(program, app);
  registerMcp(program, app);
  registerBoard(program, app);
  registerRefactor(program);
}
