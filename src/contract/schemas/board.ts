/**
 * The line `tugcode board --json` writes when it listens (docs/board.md §1), and `run --board --json` /
 * `demo --board --json` before the run's own lines: where the board is. The page's own JSON is
 * src/board/model.ts.
 */
import { z } from 'zod';
import { timestamp } from './common.js';

export const boardLineSchema = z
  .object({
    type: z.literal('board'),
    at: timestamp,
    /** `http://127.0.0.1:<port>/?token=<token>`: the token is the board's only credential. */
    url: z.string().url(),
    host: z.string().min(1),
    port: z.number().int().min(1).max(65535),
    allow_actions: z.boolean(),
    /** E.g. `BoardNotLoopback`: listening where other machines reach it. */
    warnings: z.array(z.object({ code: z.string(), message: z.string() }).strict()),
  })
  .strict();

export type BoardLine = z.infer<typeof boardLineSchema>;
