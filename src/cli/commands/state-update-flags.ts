/**
 * The per-item flags of `state update`, parsed from the raw argv: commander's variadic options lose the
 * grouping across repeats, and `--task 0 completed --task 1:deferred` must keep it.
 */
import type { Command } from 'commander';
import { TugError } from '../../contract/errors.js';
import { checkStatus, type ItemChange } from '../../state/update-input.js';
import type { ItemKind } from '../../state/status.js';
import { ITEM_STATUSES } from '../../contract/status.js';

/** How an item flag is written, with its statuses (docs/state.md §4). */
const ORD_STATUS_HINT = (flag: string) =>
  `${flag} 0 completed or ${flag} 0:completed (the 0-based ordinal tugcode state show lists); statuses: ${ITEM_STATUSES.join(', ')}`;

function rootOf(cmd: Command): Command {
  let c = cmd;
  while (c.parent) c = c.parent;
  return c;
}

const isFlag = (tok: string): boolean => tok.startsWith('-') && !/^-\d/.test(tok);

const ITEM_FLAGS: Record<string, ItemKind> = { '--task': 'task', '--test': 'test', '--checkpoint': 'checkpoint' };

/**
 * `--task ORD STATUS` / `--task ORD:STATUS`, repeatable, likewise `--test` and `--checkpoint`: each flag
 * takes the tokens up to the next flag; one token `ORD:STATUS` or two tokens; anything else is
 * InvalidArgument.
 */
export function itemFlags(cmd: Command): ItemChange[] {
  // commander keeps the full user argv on the root command (not in its public typings).
  const argv = (rootOf(cmd) as unknown as { rawArgs: string[] }).rawArgs;
  const out: ItemChange[] = [];
  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i]!;
    if (tok === '--') break;
    const eq = tok.indexOf('=');
    const flag = eq > 0 ? tok.slice(0, eq) : tok;
    const kind = ITEM_FLAGS[flag];
    if (!kind) continue;
    const values: string[] = eq > 0 ? [tok.slice(eq + 1)] : [];
    // A value is any token up to the next flag; `-1` is a (bad) ordinal, not a flag.
    while (i + 1 < argv.length && !isFlag(argv[i + 1]!)) values.push(argv[++i]!);
    let ord: string | undefined;
    let status: string | undefined;
    if (values.length === 1 && values[0]!.includes(':')) [ord, status] = values[0]!.split(/:(.*)/s) as [string, string];
    else if (values.length === 2 && !values[0]!.includes(':')) [ord, status] = values as [string, string];
    else {
      throw new TugError(
        'InvalidArgument',
        {
          reason: `${flag} takes ORD STATUS or ORD:STATUS, got ${values.length === 0 ? 'nothing' : JSON.stringify(values.join(' '))}`,
          argument: flag,
        },
        { hint: ORD_STATUS_HINT(flag) },
      );
    }
    if (!/^\d+$/.test(ord))
      throw new TugError(
        'InvalidArgument',
        { reason: `${flag}: the ordinal must be a non-negative integer, got ${JSON.stringify(ord)}`, argument: flag },
        { hint: ORD_STATUS_HINT(flag) },
      );
    out.push({ kind, ordinal: Number(ord), status: checkStatus(status) });
  }
  return out;
}
