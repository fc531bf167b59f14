/** Input table of `tugcode board` (docs/board.md §1). */
import type { InputTable } from './fields.js';

export const board: InputTable = {
  command: 'board',
  description:
    "serve a live web board of this repository's plans on 127.0.0.1 (lanes, graph, step details, logs); " +
    'prints a URL with a token; runs until interrupted',
  fields: {
    port: {
      type: 'int',
      min: 1,
      max: 65535,
      placeholder: '<n>',
      description: 'port to listen on (default: the one the last board of this repository had, else any free one)',
    },
    host: {
      type: 'string',
      max: 253,
      nonEmpty: true,
      placeholder: '<address>',
      description:
        'interface to listen on (default 127.0.0.1; any other is reachable from elsewhere: a warning says so)',
    },
    open: { type: 'bool', description: 'open the URL in the desktop browser' },
    allow_actions: {
      type: 'bool',
      description:
        'let the page reset a failed step, release an expired claim and decide a needs_human step (each confirmed; never forced)',
    },
  },
};
