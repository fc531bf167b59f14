/**
 * `tugcode status` after the plan's structure was edited since `state init` (docs/git.md §6): the line says
 * the next `tugcode run` re-initialises the state (`structure_changed`), as the run's dry run warns
 * PlanReinitialized; a prose-only edit, a plan without state and a re-initialised state say nothing.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { schemaFor } from '../../src/contract/schemas/index.js';
import { checkSchema, runCli, runJson } from '../helpers/cli.js';
import { git } from '../helpers/repo.js';
import { planRepo, PLAN_PATH, T0 } from './helpers.js';

const env = { TUGCODE_NOW: T0 };
const NOTE =
  "edited: the plan's structure changed since state init; the next tugcode run re-initialises it (completed steps kept)";
const STEP_3 = `
#### Step 3: Add gamma {#step-3}

**Commit:** \`feat: gamma\`

**Tasks:**
- [ ] write gamma
`;

function edit(root: string, text: string, message: string): void {
  writeFileSync(join(root, PLAN_PATH), text);
  git(root, 'commit', '-qam', message);
}

function status(root: string) {
  const s = runJson('status', ['status'], { cwd: root, env });
  expect(s.code, s.stderr).toBe(0);
  checkSchema(schemaFor('status'), s.json);
  const text = runCli(['status'], { cwd: root, env });
  expect(text.code, text.stderr).toBe(0);
  return { line: s.json.plans[0], text: text.stdout };
}

/** The warnings of the run's dry run: PlanReinitialized when the real run would re-initialise the state. */
function dryRunWarnings(root: string): string[] {
  const r = runJson('run', ['run', 'demo', '--dry-run', '--implementer', 'true'], { cwd: root, env });
  expect(r.code, r.stderr).toBe(0);
  return (r.json.warnings as { code: string }[]).map((w) => w.code);
}

describe('status: a plan edited since state init', () => {
  it('says the next run re-initialises the state exactly when the dry run warns it', () => {
    const root = planRepo();
    // No state: nothing to compare.
    expect(status(root).line).toMatchObject({ source: 'checkboxes', structure_changed: false });

    expect(runCli(['state', 'init', 'demo'], { cwd: root, env }).code).toBe(0);
    const fresh = status(root);
    expect(fresh.line).toMatchObject({ source: 'state', structure_changed: false });
    expect(fresh.text).not.toContain('edited:');

    // Prose only: the structure is the state's, nothing to re-initialise.
    const plan = readFileSync(join(root, PLAN_PATH), 'utf8');
    edit(root, plan.replace('exercise the git flow', 'exercise the git flow, reworded'), 'plan: prose');
    expect(status(root).line.structure_changed).toBe(false);
    expect(dryRunWarnings(root)).not.toContain('PlanReinitialized');

    // A step added: the next run re-initialises, and status says so.
    edit(root, readFileSync(join(root, PLAN_PATH), 'utf8') + STEP_3, 'plan: a third step');
    const edited = status(root);
    expect(edited.line).toMatchObject({ source: 'state', steps_total: 2, structure_changed: true, plan_error: null });
    expect(edited.text.split('\n').find((l) => l.startsWith(PLAN_PATH + ' '))).toContain(NOTE);
    expect(dryRunWarnings(root)).toContain('PlanReinitialized');

    // Re-initialised: the state's structure is the file's again.
    expect(runCli(['state', 'init', 'demo', '--force'], { cwd: root, env }).code).toBe(0);
    const again = status(root);
    expect(again.line).toMatchObject({ steps_total: 3, structure_changed: false });
    expect(again.text).not.toContain('edited:');
  });

  it('says nothing of an invalid file (the run refuses it rather than re-initialising)', () => {
    const root = planRepo();
    expect(runCli(['state', 'init', 'demo'], { cwd: root, env }).code).toBe(0);
    writeFileSync(join(root, PLAN_PATH), '');
    expect(status(root).line).toMatchObject({ plan_error: { code: 'E001' }, structure_changed: false });
  });
});
