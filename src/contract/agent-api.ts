/**
 * Renders docs/AGENT_API.md from the contract itself: the input tables (flags), the zod output schemas
 * (JSON fields), the error catalogue (codes, exits, hints), the MCP tool list and the agent playbook.
 * `npm run docs` writes it (scripts/gen-agent-api.mjs); tests/docs/agent-api.test.ts fails when the
 * committed file differs. Pure: returns the text.
 */
import { CATALOGUE, ERROR_CODES, type Details } from './errors.js';
import { flagOf, type Field, type InputTable } from './inputs/fields.js';
import { INPUT_TABLES } from './inputs/index.js';
import { OUTPUT_SCHEMAS } from './schemas/index.js';
import { demoEventSchema, FAIL_CODES, runEventSchema } from './schemas/run.js';
import { boardLineSchema } from './schemas/board.js';
import { MCP_TOOLS, type KernelToolName } from './mcp-tools.js';
import { KERNEL_TOOL_INPUTS } from './mcp-kernel-inputs.js';
import { fieldRows, objectVariants } from './zod-fields.js';
import type { z } from 'zod';

export const EXIT_PLAYBOOK: [number | string, string, string][] = [
  [
    0,
    'success',
    'Parse stdout (one JSON document) and continue. `state claim` with `claimed: false` is a success: read `reason` (`all_completed` → done; `no_ready_steps` → wait or stop; `not_ready` → the `--step` you asked for is blocked). `commit` with `state_update_failed: true` is a success for git (the commit exists) but not for state: branch on `state_failure_reason` (below).',
  ],
  [
    2,
    'invalid arguments or input',
    'Your command line is wrong. Read `error.message` (it names the flag), fix the call, retry once. Never retry unchanged.',
  ],
  [
    3,
    'resolution: not found or ambiguous',
    'The plan, step or worktree you named does not exist (or matches several). Run the command in `error.hint`, usually `tugcode state show <plan>` or `tugcode worktree list`, then call again with the right name.',
  ],
  [
    4,
    'refused: the state does not allow it',
    "Nothing was changed. Branch on `error.code`: `NotOwner`, `LeaseExpired`, `AttemptMismatch` → your claim is gone: stop working on the step, discard the worktree's changes, claim again. `ChecklistIncomplete`, `SubstepsIncomplete`, `RefactorsIncomplete` → finish or defer the items named in `error.details`, then retry. `PlanDrift` → the plan changed: `tugcode state init --force <plan>`. `Busy`, `RunInProgress` → wait and retry later. Anything else: run `error.hint`.",
  ],
  [
    5,
    'verification failed',
    "Only the refactor kernel (`tug`, `tugcode refactor`) exits 5: nothing was applied. Show the failing check's output, fix the code or choose another verification mode; never apply anyway.",
  ],
  [
    10,
    'internal or environment error',
    'Stop. Report stderr and the JSON envelope; rerun with `--verbose` for the stack. Do not retry in a loop.',
  ],
  [
    '130 / 143 / 129',
    'interrupted (SIGINT / SIGTERM; SIGHUP for `tugcode run`)',
    'The command was stopped; `tugcode run` released its claims. Rerun the same command to resume.',
  ],
];

/** What to do for each `state_failure_reason` of `tugcode commit` (exit 0, `state_update_failed: true`). */
export const COMMIT_FAILURE_PLAYBOOK: Record<string, string> = {
  open_items:
    'Checklist items are neither completed nor deferred (`state_error.error.details`): mark them (`tugcode state update <plan> <step> --worktree W --task N completed`, or `deferred --reason …` for what was not done), or run `state_error.error.hint`: `tugcode state update <plan> <step> --worktree W --complete-remaining && <then_run>`, where `then_run` (in the details) finishes the step: `tugcode commit … --integrate` again when the commit is to integrate, else `tugcode state complete <plan> <step> --worktree W --commit <commit_hash>`.',
  substeps:
    "A substep is not completed (`state_error.error.details.incomplete_substeps`), its items still open: run `state_error.error.hint`: `tugcode state update <plan> <step> --worktree W --complete-remaining && <then_run>` (it ticks the substeps' items too; defer first what was not done), where `then_run` finishes the step with this commit. Completing the substep alone is refused while its items are open (`ChecklistIncomplete`).",
  refactors:
    'A declared refactor row is neither applied nor skipped. `tugcode commit` refuses this before it commits (`RefactorsIncomplete`, exit 4, nothing changed; docs/git.md §4), so this reason means a row was reopened meanwhile: `tugcode refactor run-step <plan> <step> --worktree W` (or `tugcode refactor skip … --ordinal N --reason …`), then `tugcode commit` again, so the step has a commit with the refactor.',
  ownership:
    'Your claim is gone (lease expired, another worktree took it, or a stale `--attempt`): stop. The commit stays on your branch; do not complete. Claim again (`tugcode state claim`); `tugcode state reconcile <plan>` completes the step from the commit trailers once the commit is integrated.',
  drift:
    'The plan changed since `state init` (or the plan file is gone): `tugcode state init --force <plan>`, then `tugcode state reconcile <plan>`.',
  integration_conflict:
    'Rebasing onto the integration branch conflicted; the commit stays on your branch and the integration branch is untouched. `git rebase <integration_branch>` in the worktree, resolve, `git add`, `git rebase --continue`, then the same `tugcode commit … --integrate` again: with nothing new to commit it makes no new commit (`committed: false`) and integrates and completes the rebased one (docs/git.md §4.2).',
  db_error:
    'state.db could not be written (`state_error.error` says why): fix what it names (see `tugcode doctor`), then `tugcode state reconcile <plan>` to complete from the trailers.',
};

const esc = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function fieldValue(f: Field): string {
  switch (f.type) {
    case 'bool':
      return '';
    case 'int':
      return `\`${f.placeholder ?? '<n>'}\` (${f.max < 1e9 ? `${f.min}–${f.max}` : `≥ ${f.min}`})`;
    case 'number':
      return `\`${f.placeholder ?? '<x>'}\` (${f.min}–${f.max})`;
    case 'enum':
      return f.values.map((v) => `\`${v}\``).join(' \\| ');
    case 'items':
      return '`<json>`';
    default:
      if (f.arg !== undefined) return '';
      return f.type === 'string' && f.oneOf
        ? f.oneOf.map((v) => `\`${v}\``).join(' \\| ')
        : `\`${f.placeholder ?? '<value>'}\``;
  }
}

function usage(t: InputTable): string {
  const pos = Object.entries(t.fields)
    .filter(([, f]) => f.arg !== undefined)
    .sort((a, b) => a[1].arg! - b[1].arg!)
    .map(([n, f]) => (f.required ? `<${n}>` : `[${n}]`));
  const req = Object.entries(t.fields)
    .filter(([, f]) => f.arg === undefined && f.required && !f.cliDefault)
    .map(([n, f]) => `${flagOf(n, f)} ${f.placeholder ?? '<value>'}`);
  return ['tugcode', t.command, ...pos, ...req, '[options]'].join(' ');
}

function argumentRows(t: InputTable): string[] {
  const rows: string[] = [];
  for (const [name, f] of Object.entries(t.fields)) {
    const fileOnly = f.type === 'string' && f.fileOnly;
    const what =
      f.arg !== undefined
        ? `\`<${name}>\` (positional)`
        : fileOnly
          ? `\`${f.fileFlag} <path\\|->\``
          : `\`${flagOf(name, f)}\``;
    const extra: string[] = [];
    if (f.type === 'string' && f.fileFlag && !fileOnly) extra.push(`or \`${f.fileFlag} <path\\|->\``);
    if (f.type === 'list' && f.arg === undefined) extra.push('repeatable');
    const tool = f.cliOnly ? 'CLI only' : `\`${name}\``;
    const required = f.required ? (f.cliDefault ? 'MCP only' : 'yes') : '';
    const description = f.cliDefault ? `${f.description}; CLI default: ${f.cliDefault}` : f.description;
    rows.push(
      `| ${what}${extra.length ? ' ' + extra.join(', ') : ''} | ${fileOnly ? '' : fieldValue(f)} | ${required} | ${tool} | ${esc(description)} |`,
    );
  }
  return rows;
}

function outputRows(s: z.ZodTypeAny): string[] {
  const out: string[] = [];
  const variants = objectVariants(s);
  variants.forEach((v, i) => {
    if (variants.length > 1) out.push('', `Variant ${i + 1}:`, '');
    out.push('| field | type |', '|---|---|');
    for (const r of fieldRows(v)) {
      if (['status', 'schema_version', 'command', 'warnings'].includes(r.path) || r.path.startsWith('warnings['))
        continue;
      out.push(`| \`${r.path}\`${r.optional ? ' (optional)' : ''} | ${r.type} |`);
    }
  });
  return out;
}

/** A readable hint: the catalogue's hint with placeholder details. */
function hintOf(code: keyof typeof CATALOGUE): string | undefined {
  const entry = CATALOGUE[code] as { hint?: (d: Details) => string | undefined };
  if (!entry.hint) return undefined;
  const d: Details = {
    plan_path: '<plan>',
    step_anchor: '<step>',
    worktree: '<worktree>',
    db_path: '<state.db>',
    branch: '<branch>',
    integration_branch: '<integration_branch>',
  };
  try {
    return entry.hint(d);
  } catch {
    return undefined;
  }
}

function commandSection(t: InputTable): string[] {
  const out = [`### \`tugcode ${t.command}\``, '', esc(t.description) + '.', '', '```', usage(t), '```', ''];
  const args = argumentRows(t);
  if (args.length)
    out.push('| argument | value | required | MCP argument | description |', '|---|---|---|---|---|', ...args, '');
  const schema = OUTPUT_SCHEMAS[t.command];
  if (t.command === 'run') {
    out.push(
      'Output: with `--dry-run --json`, one document (`tugcode schema run`):',
      '',
      ...outputRows(schema!),
      '',
      'Otherwise, with `--json`, JSON Lines: one event per line, each with `type` and `at`; the last line is always `summary`. Attempt-failure `reason_code`s: ' +
        FAIL_CODES.map((c) => `\`${c}\``).join(', ') +
        '.',
      '',
    );
    for (const v of objectVariants(runEventSchema)) {
      const rows = fieldRows(v);
      const type = rows.find((r) => r.path === 'type')!.type.replace(/"/g, '');
      const fields = rows.filter((r) => r.path !== 'type' && r.path !== 'at');
      out.push(`- \`${type}\`: ` + fields.map((r) => `\`${r.path}\`${r.optional ? '?' : ''} (${r.type})`).join(', '));
    }
    out.push('');
  } else if (schema) {
    out.push(`Output (\`--json\`; \`tugcode schema ${t.command}\`):`, '', ...outputRows(schema), '');
  } else if (t.command === 'board') {
    out.push(
      'Output: it serves until SIGINT (exit 130) or SIGTERM (exit 143). With `--json`, one line when it listens: `board` ' +
        fieldRows(boardLineSchema)
          .filter((r) => r.path !== 'type' && r.path !== 'at')
          .map((r) => `\`${r.path}\` (${r.type})`)
          .join(', ') +
        "; `run --board` and `demo --board` write the same line before the run's own lines. The page and its JSON are docs/board.md.",
      '',
    );
  } else {
    out.push(
      'Output: text (it runs `tugcode run` on a generated repository and prints its live view and summary). With `--json`, the lines of `tugcode run --json`, after a first line `demo`: ' +
        fieldRows(demoEventSchema)
          .filter((r) => r.path !== 'type' && r.path !== 'at')
          .map((r) => `\`${r.path}\` (${r.type})`)
          .join(', ') +
        ' (`kept`: false when the temporary repository is removed at the end).',
      '',
    );
  }
  return out;
}

/** The order of the command sections: the working loop first, then the rest alphabetically. */
const ORDER = [
  'init',
  'validate',
  'worktree create',
  'state init',
  'state claim',
  'state start',
  'state heartbeat',
  'state update',
  'state artifact',
  'state complete',
  'state release',
  'state fail',
  'commit',
  'run',
  'demo',
];

/**
 * `tugcode refactor` has no input table (its argv goes to the kernel's own parser), yet the implement skill
 * runs `refactor run-step` and `refactor skip` (docs/kernel.md §7.3–§7.5). Their usage lines are those of
 * `tugcode refactor run-step --help` (tests/docs/agent-api.test.ts checks each one).
 */
export const REFACTOR_USAGE = [
  'tugcode refactor run-step <plan> <step> --worktree W [--attempt N] [--retry-failed] [--verify none|syntax|tests|typecheck] [--text]',
  'tugcode refactor skip <plan> <step> --worktree W --ordinal N --reason TEXT [--attempt N] [--text]',
];

const REFACTOR_SECTION = [
  '### `tugcode refactor` (and `tug`)',
  '',
  'The refactor kernel: `analyze-impact`, `run`, `verify`, `snapshot`, `session`, `doctor`, the same command',
  'table as `tug` (`tug --help`; docs/kernel.md §2–§5). It prints one JSON document without `--json` (`--text`',
  "for humans), its own envelope (no `command` field). Two more commands act on a plan step's **Refactors:**",
  "rows, owned by the step's claim (docs/kernel.md §7.3–§7.5):",
  '',
  ...REFACTOR_USAGE.map((u) => `    ${u}`),
  '',
  '`run-step` analyzes, verifies in a sandbox and applies each open row in W, the first failing row stopping',
  "it (its exit code is run-step's; a `failed` row answers with its recorded error until `--retry-failed`).",
  '`skip` marks an open or failed row skipped with the reason. Then `tugcode commit` adds one `Tug-Refactor`',
  'trailer per applied row; it refuses a step whose rows are neither applied nor skipped (`RefactorsIncomplete`).',
  '',
];

export function renderAgentApi(): string {
  const rank = (c: string) => (ORDER.includes(c) ? ORDER.indexOf(c) : ORDER.length);
  const tables = Object.values(INPUT_TABLES).sort(
    (a, b) => rank(a.command) - rank(b.command) || a.command.localeCompare(b.command),
  );
  const lines: string[] = [
    '# tugcode agent API',
    '',
    '<!-- Generated by `npm run docs` (src/contract/agent-api.ts) from the input tables, the zod output schemas',
    '     and the error catalogue. Do not edit by hand: tests/docs/agent-api.test.ts fails when it differs. -->',
    '',
    'Everything an agent needs to drive tugcode without guessing: every command with its flags, its JSON',
    'output fields, the exit codes and error codes with their hints, the MCP tools, and what to do on each',
    "exit code. `tugcode schema <command>` prints the JSON Schema of a command's output, and",
    '`tugcode schema --input <command>` the schema of its input (the MCP tool arguments).',
    '',
    '## Conventions',
    '',
    '- Pass `--json` to every `tugcode` command: stdout is then exactly one JSON document (`tugcode run --json`',
    '  writes JSON Lines instead). The kernel front doors (`tug …`, `tugcode refactor …`) print JSON by default.',
    '- Success: `{"status": "ok", "schema_version": "1", "command": "<command>", …fields, "warnings": []}`; the',
    '  fields are flat at the top level.',
    '- Error: `{"status": "error", "schema_version": "1", "command": "<command>", "error": {"code", "message",',
    '  "details", "hint"?}, "warnings": []}`, plus one stderr line `tugcode: <Code>: <message>`.',
    '- Branch on the exit code first, then on `error.code`; show `error.message` verbatim; run `error.hint`',
    '  when it is a command.',
    '- Global flags: `--json`, `-q/--quiet`, `-v/--verbose`, `-C/--dir <dir>`.',
    '- Anchors are bare (`step-2`); paths are repo-relative, except worktree paths (absolute).',
    '',
    '## Agent playbook: what to do on each exit code',
    '',
    '| exit | meaning | what the agent does |',
    '|---|---|---|',
    ...EXIT_PLAYBOOK.map(([c, m, a]) => `| ${c} | ${m} | ${esc(a)} |`),
    '',
    '### After a commit: `state_failure_reason`',
    '',
    '`tugcode commit` commits first and completes the step second. When the commit exists but completing',
    'failed, it still exits 0, with `state_update_failed: true`, a `state_failure_reason` and the refusal as',
    '`state_error` (an error envelope). It integrates (rebase onto and fast-forward `tugplan/<slug>`) when',
    'the plan has an integration branch or `--integrate` is given.',
    '',
    '| `state_failure_reason` | what the agent does |',
    '|---|---|',
    ...commitReasons().map((r) => `| \`${r}\` | ${esc(COMMIT_FAILURE_PLAYBOOK[r]!)} |`),
    '',
    '## Commands',
    '',
  ];
  for (const t of tables) lines.push(...commandSection(t));
  lines.push(...REFACTOR_SECTION);
  lines.push(
    '## Error codes',
    '',
    'Kernel error codes (`tug`, `tugcode refactor`) are listed by `tug --help` and in docs/kernel.md §5.2; they',
    'use the same exit codes.',
    '',
    '| code | exit | when | hint |',
    '|---|---|---|---|',
    ...ERROR_CODES.map((c) => {
      const h = hintOf(c);
      return `| \`${c}\` | ${CATALOGUE[c].exit} | ${esc(CATALOGUE[c].when)} | ${h ? hintCell(h) : ''} |`;
    }),
    '',
    '## MCP tools (`tugcode mcp`)',
    '',
    "`tugcode mcp` is an MCP server over stdio. Each state tool takes the arguments of its command's input",
    'table (the "MCP argument" column above; `tugcode schema --input <command>` prints them as JSON Schema) and',
    "returns the same JSON as the command's `--json` output, as `structuredContent` and as text. An error is a",
    'tool result with `isError: true` whose text is the error envelope. A kernel tool takes the arguments listed',
    "below (its `tug` command's flags as fields; `op` is an operation as in a **Refactors:** row) and returns",
    "`tug`'s JSON envelope (docs/kernel.md §4). `?` marks an optional argument. The server lives as long as",
    'its client: each call sees `.tugtool/config.toml` and `state.db` as they are now, as a CLI call would (an',
    'edited config, a state.db moved aside or re-created).',
    '',
    '| tool | same as | arguments | what |',
    '|---|---|---|---|',
    ...MCP_TOOLS.map((m) => {
      const t = INPUT_TABLES[m.command];
      const args = (
        t
          ? Object.entries(t.fields)
              .filter(([, f]) => !f.cliOnly)
              .map(([n, f]) => [n, Boolean(f.required)] as const)
          : Object.entries(KERNEL_TOOL_INPUTS[m.tool as KernelToolName]).map(([n, s]) => [n, !s.isOptional()] as const)
      )
        .map(([n, required]) => (required ? `\`${n}\`` : `\`${n}\`?`))
        .join(', ');
      return `| \`${m.tool}\` | \`${'kernel' in m ? m.command : 'tugcode ' + m.command}\` | ${args} | ${esc(m.note)} |`;
    }),
    '',
  );
  return lines.join('\n');
}

/** A hint as code spans, one per clause (`a, or b` → two spans), so each command stands alone. */
function hintCell(h: string): string {
  return h
    .split(/(, or |; |, then )/)
    .map((part, i) => (i % 2 ? part : '`' + esc(part).replace(/`/g, "'") + '`'))
    .join('');
}

function commitReasons(): string[] {
  const commit = OUTPUT_SCHEMAS.commit!;
  const row = fieldRows(commit).find((r) => r.path === 'state_failure_reason')!;
  const reasons = [...row.type.matchAll(/"([a-z_]+)"/g)].map((m) => m[1]!);
  for (const r of reasons) if (!COMMIT_FAILURE_PLAYBOOK[r]) throw new Error(`no playbook entry for ${r}`);
  return reasons;
}
