/** Every operation's input table, by command name (`state claim`, `commit`, …). */
import { TugError } from '../errors.js';
import type { InputTable } from './fields.js';
import * as git from './git.js';
import * as state from './state.js';
import * as run from './run.js';
import * as board from './board.js';

export const INPUT_TABLES: Record<string, InputTable> = Object.fromEntries(
  [...Object.values(state), ...Object.values(git), ...Object.values(run), ...Object.values(board)].map((t) => [
    t.command,
    t,
  ]),
);

export function inputTableFor(command: string): InputTable {
  const t = INPUT_TABLES[command];
  if (!t)
    throw new TugError('InvalidArgument', {
      reason: `no input table for ${JSON.stringify(command)}; known: ${Object.keys(INPUT_TABLES).sort().join(', ')}`,
    });
  return t;
}
