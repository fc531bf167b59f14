/**
 * Files written by `tugcode init` (docs/git.md §2). The skeleton plan shows every construct of
 * docs/plan-format.md and validates with no warnings (a test checks it at the strict level).
 */
export { IMPLEMENTATION_LOG_INDEX } from '../gitflow/implementation-log.js';
import { CONFIG_DEFAULTS } from '../config/defaults.js';
import { CONFIG_TABLES } from '../config/schema.js';

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

/**
 * A key's comment in the template: its description in the config schema (the one place keys are described),
 * without the citation of the project's docs, which a user's repository does not hold.
 */
function commentOf(table: keyof typeof CONFIG_TABLES, key: string): string {
  const field = (CONFIG_TABLES[table].shape as Record<string, { description?: string }>)[key];
  return (field?.description ?? '').replace(/ \(docs\/[^)]*\)/g, '');
}

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
      out.push(`${line.padEnd(36)} # ${commentOf(table as keyof typeof CONFIG_TABLES, key)}`.trimEnd());
    }
    out.push('');
  }
  return out.join('\n');
}
