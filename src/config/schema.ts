/**
 * The schema of `.tugtool/config.toml` (docs/git.md §8, kernel keys docs/kernel.md §3.1).
 * The single source of truth for keys, types and defaults; `tugcode init` writes its template from it.
 */
import { z } from 'zod';
import { kernelSchema } from '../kernel/config-schema.js';
import { tokenizeShell } from '../kernel/light.js';
import { CONFIG_MAX } from './defaults.js';
import { USAGE_MAX_PRICE } from '../contract/usage.js';

export { kernelSchema };

const argv = z.array(z.string());
const posInt = z.number().int().positive();
const upTo = (max: number) => posInt.max(max);
const S = CONFIG_MAX.state;
const R = CONFIG_MAX.run;
/** A `[run.prices]` price, bounded so a priced report stays within the ledger's bounds (docs/run.md §7.1). */
const price = z.number().nonnegative().finite().max(USAGE_MAX_PRICE);

/** An argv string split shell-style (docs/run.md §2): quotes that do not balance are refused when it loads. */
const argvString = z.string().superRefine((v, ctx) => {
  const tok = tokenizeShell(v);
  if (!tok.ok)
    ctx.addIssue({
      code: 'custom',
      message: `cannot be split shell-style: ${tok.reason} in ${JSON.stringify(v)}`,
    });
});

export const stateSchema = z
  .object({
    lease_seconds: upTo(S.lease_seconds).default(7200).describe('claim lease in seconds, renewed by heartbeat'),
    max_attempts: upTo(S.max_attempts).default(3).describe('given-up attempts before a step becomes failed'),
    url: z
      .string()
      .default('')
      .describe('postgres://user@host:port/db: keep the state on PostgreSQL; empty = .tugtool/state.db (SQLite)'),
    project: z
      .string()
      .default('')
      .describe('project id on a shared PostgreSQL; empty = the hash of the repository root commit'),
    host: z.string().default('').describe('this machine in owner names (<host>:<worktree>); empty = the machine id'),
  })
  .strict();

export const runSchema = z
  .object({
    workers: upTo(R.workers).default(2).describe('parallel workers of tugcode run'),
    implementer: argvString.default('').describe('argv string run per step (docs/run.md §2); empty = no implementer'),
    agent: z
      .enum(['', 'claude', 'codex'])
      .default('')
      .describe('agent implementer preset (claude | codex) instead of implementer; empty = none'),
    agent_allow: argv
      .default([])
      .describe(
        'command patterns an agent preset may run besides its own (claude: Bash(<pattern>)), e.g. ["npm test *"]',
      ),
    heartbeat_seconds: upTo(R.heartbeat_seconds).default(60).describe('heartbeat interval while a step runs'),
    step_timeout_seconds: upTo(R.step_timeout_seconds).default(3600).describe('wall-clock limit per step attempt'),
    run_checkpoints: z.boolean().default(true).describe('run checkpoint commands as verification'),
    base_branch: z.string().min(1).default('main').describe('branch plans start from and merge back into'),
    setup_command: argv
      .default([])
      .describe('argv run in each new or reset worker worktree; empty = link node_modules/.venv'),
    no_verify: z.boolean().default(false).describe("true: the driver's commits and rebases skip git hooks"),
    remote: z
      .string()
      .default('')
      .describe('git remote holding the integration branch, shared by hosts (docs/state.md §8); empty = local'),
    reviewer: argvString
      .default('')
      .describe(
        "argv string run after each step's commit; its verdict gates integration (docs/run.md §6); empty = no review",
      ),
    review_agent: z
      .enum(['', 'claude', 'codex'])
      .default('')
      .describe('agent reviewer preset (claude | codex), read-only, instead of reviewer; empty = none'),
    review_rounds: upTo(R.review_rounds)
      .default(3)
      .describe('REVISE verdicts per attempt before it fails ReviewRejected'),
    resolver: argvString
      .default('')
      .describe(
        'argv string that merges a conflict of the integration rebase (docs/run.md §1.9); empty = the implementer',
      ),
    resolve_rounds: z
      .number()
      .int()
      .min(0)
      .max(R.resolve_rounds)
      .default(2)
      .describe('resolver runs per attempt before a conflict fails it; 0 = never resolve'),
    budget_usd: z
      .number()
      .nonnegative()
      .finite()
      .default(0)
      .describe("stop claiming once the plan's cost reaches this many USD (docs/run.md §7.2), e.g. 25; 0 = no budget"),
    budget_tokens: z
      .number()
      .int()
      .nonnegative()
      .max(R.budget_tokens)
      .default(0)
      .describe("stop claiming once the plan's tokens reach this (docs/run.md §7.2), e.g. 5000000; 0 = no budget"),
    stall_seconds: upTo(R.stall_seconds)
      .default(600)
      .describe('kill an implementer silent this long (no output, item or file change): Stalled'),
    log_max_mb: upTo(R.log_max_mb)
      .default(256)
      .describe('end an implementer run that writes more than this many MiB to its log (docs/run.md §7.3)'),
    notify: argvString
      .default('')
      .describe('argv string run with each notable event on stdin (docs/run.md §7.4), e.g. "notify-send tugcode"'),
    prices: z
      .object({
        input: price.optional(),
        output: price.optional(),
        cache_read: price.optional(),
        cache_write: price.optional(),
      })
      .strict()
      .default({})
      .describe(
        'USD per million tokens, for runs that report tokens but no cost (codex), e.g. { input = 1.25, output = 10, cache_read = 0.125 }',
      ),
  })
  .strict();

export const validateSchema = z
  .object({
    level: z
      .enum(['lenient', 'normal', 'strict'])
      .default('normal')
      .describe('default level of tugcode validate: lenient | normal | strict'),
  })
  .strict();

export const configSchema = z.object({
  state: stateSchema.default({}),
  run: runSchema.default({}),
  validate: validateSchema.default({}),
  kernel: kernelSchema.default({}),
});

export type Config = z.infer<typeof configSchema>;
export const CONFIG_TABLES = {
  state: stateSchema,
  run: runSchema,
  validate: validateSchema,
  kernel: kernelSchema,
} as const;
