/**
 * `tugcode run` and `tugcode demo` (docs/run.md §1, §4): the driver streams events (a live view on a TTY,
 * one line per event off it, JSON Lines under --json, the summary always last), so these commands render
 * as they go instead of returning one document.
 */
import type { Command } from 'commander';
import * as T from '../../contract/inputs/run.js';
import type { CliApp } from '../define.js';

export function registerRun(program: Command, app: CliApp): void {
  app.register(program, {
    table: T.run,
    longLived: true,
    loop: (input, cli) => import('./run-loop.js').then((m) => m.runCommand(input as never, cli)),
  });
  app.register(program, {
    table: T.demo,
    loop: (input, cli) => import('./run-loop.js').then((m) => m.demoCommand(input as never, cli)),
  });
}
