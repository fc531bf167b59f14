/**
 * Files written by `tugcode init` (docs/git.md §2). The skeleton plan shows every construct of
 * docs/plan-format.md and validates with no warnings (a test checks it at the strict level).
 */
export { IMPLEMENTATION_LOG_INDEX } from '../gitflow/implementation-log.js';
import { CONFIG_DEFAULTS } from '../config/defaults.js';

export function skeletonPlan(today: string): string {
  return `## Phase 1.0: Greeting command {#phase-greeting}

**Purpose:** Ship a \`hello\` subcommand. This skeleton shows every construct tugcode understands;
copy it to \`.tugtool/tugplan-<slug>.md\` and edit.

### Plan Metadata {#plan-metadata}

| Field | Value |
|------|-------|
| Owner | ada |
| Status | draft |
| Target branch | main |
| Last updated | ${today} |

### Phase Overview {#phase-overview}

#### Context {#context}

Prose outside the steps is for humans: tugcode ignores it, and editing it never counts as drift.

### Design Decisions {#design-decisions}

#### [D01] The greeting is a constant (DECIDED) {#d01-constant-greeting}

A constant keeps the first step small.

### Execution Steps {#execution-steps}

#### Step 1: Add the command {#step-1}

**Commit:** \`feat(cli): add hello\`

**References:** [D01] The greeting is a constant, (#context)

**Tasks:**
- [ ] Register \`hello\` in the command table
- [ ] Print the greeting
  - [ ] Nested checkboxes are items too (depth 1)

**Tests:**
- [ ] Unit test: stdout equals "hello"

**Checkpoint:**
- [ ] \`npm test\`

**Refactors:**
- [ ] \`rename-symbol --symbol src/greet.ts::sayHi --to sayHello\` (executed by tugcode refactor run-step)

#### Step 2: Document it {#step-2}

**Depends on:** #step-1

**Commit:** \`docs: describe hello\`

**References:** [D01] The greeting is a constant

**Tasks:**
- [ ] Describe the command

**Tests:**
- [ ] The README example runs

**Checkpoint:**
- [ ] \`npm test\`

##### Step 2.1: README section {#step-2-1}

**References:** (#context)

**Tasks:**
- [ ] Add a README section

**Tests:**
- [ ] The README renders

**Checkpoint:**
- [ ] A reviewer read it

### Deliverables {#deliverables}

Checkboxes after the last step belong to no step:

- [ ] \`tugcode hello\` prints the greeting
`;
}

const COMMENTS: Record<string, string> = {
  'state.lease_seconds': 'claim lease in seconds, renewed by heartbeat',
  'state.max_attempts': 'given-up attempts before a step becomes failed',
  'run.workers': 'parallel workers of tugcode run',
  'run.implementer': 'argv string run per step; empty = no implementer',
  'run.agent': 'agent implementer preset: claude | codex; empty = none (use implementer)',
  'run.agent_allow': 'command patterns an agent preset may run besides its own, e.g. ["npm test *"]',
  'run.heartbeat_seconds': 'heartbeat interval while a step runs',
  'run.step_timeout_seconds': 'wall-clock limit per step attempt',
  'run.run_checkpoints': 'run checkpoint commands as verification',
  'run.base_branch': 'branch plans start from and merge back into',
  'run.setup_command': 'argv run in each new or reset worker worktree; empty = link node_modules/.venv',
  'run.no_verify': "true: the driver's commits and rebases skip git hooks",
  'run.reviewer': "argv string whose verdict gates each step's integration; empty = no review",
  'run.review_agent': 'agent reviewer preset, read-only: claude | codex; empty = none (use reviewer)',
  'run.review_rounds': 'REVISE verdicts per attempt before it fails ReviewRejected',
  'run.resolver': 'argv string that merges a conflict of the integration rebase; empty = the implementer',
  'run.resolve_rounds': 'resolver runs per attempt before a conflict fails it; 0 = never resolve',
  'run.budget_usd': "stop claiming once the plan's cost reaches it, e.g. 25; 0 = no budget",
  'run.budget_tokens': "stop claiming once the plan's tokens reach it, e.g. 5000000; 0 = no budget",
  'run.stall_seconds': 'kill an implementer silent this long (no output, item or file change)',
  'run.notify': 'argv run with each notable event on stdin, e.g. "notify-send tugcode"',
  'run.prices': 'USD per million tokens for codex, e.g. { input = 1.25, output = 10, cache_read = 0.125 }',
  'validate.level': 'lenient | normal | strict',
  'kernel.verify': 'none | syntax | tests | typecheck',
  'kernel.test_command': 'argv array; {python} placeholder allowed; empty = detect',
  'kernel.test_timeout': 'seconds (1-3600)',
  'kernel.typecheck_command': 'argv array; empty = the built-in checkers',
  'kernel.typecheck_timeout': 'seconds',
  'kernel.safety': 'strict (= safe) | aggressive',
  'kernel.include': 'globs added to the source set',
  'kernel.exclude': 'globs removed from the source set',
  'kernel.python': 'interpreter path; empty = resolved',
  'kernel.rust_analyzer': 'rust-analyzer path; empty = resolved',
  'kernel.lock_timeout': 'seconds to wait for the session lock',
  'kernel.max_files_affected': 'refactor gate: files one operation may touch',
  'kernel.max_edits': 'refactor gate: edits one operation may make',
  'kernel.max_concurrent_sessions': 'kernel slots shared by all worktrees',
};

function toml(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => JSON.stringify(x)).join(', ')}]`;
  if (typeof v === 'object' && v !== null)
    return `{${Object.entries(v)
      .map(([k, x]) => ` ${k} = ${toml(x)}`)
      .join(',')}${Object.keys(v).length ? ' ' : ''}}`;
  if (typeof v === 'string') return JSON.stringify(v);
  return String(v);
}

/** Every key with its default, commented out, so the file documents itself and changes nothing. */
export function configTemplate(): string {
  const out = [
    '# tugcode configuration. Every key is shown with its default; uncomment to change it.',
    '# Precedence: command-line flag > environment (TUGCODE_<TABLE>_<KEY>) > this file > defaults.',
    '',
  ];
  for (const [table, keys] of Object.entries(CONFIG_DEFAULTS)) {
    out.push(`[${table}]`);
    for (const [key, value] of Object.entries(keys)) {
      const line = `# ${key} = ${toml(value)}`;
      out.push(`${line.padEnd(36)} # ${COMMENTS[`${table}.${key}`] ?? ''}`.trimEnd());
    }
    out.push('');
  }
  return out.join('\n');
}
