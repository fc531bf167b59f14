/**
 * Driver cases a review found: dependency links never reach a commit, substeps run in dependency order,
 * and a slow setup keeps its claim alive.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git } from '../helpers/repo.js';
import { parsePlan } from '../../src/plan/parse.js';
import { executionOrder } from '../../src/run/step.js';
import { implementerScript, planText, runJsonl, runRepo, step } from './helpers.js';

describe('tugcode run, reviewed cases', () => {
  it('links node_modules into worker trees without ever committing the link', () => {
    const root = runRepo(planText([step(1, 'One')]), 'demo', { '.gitignore': 'node_modules/\n' });
    mkdirSync(join(root, 'node_modules', 'dep'), { recursive: true });
    writeFileSync(join(root, 'node_modules', 'dep', 'index.js'), '');
    const impl = implementerScript();
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--keep-worktrees']);
    expect(r.code, r.stderr).toBe(0);
    expect(git(root, 'ls-tree', '-r', '--name-only', 'tugplan/demo')).not.toContain('node_modules');
  });

  it('runs substeps in the order of their dependencies, each before its parent', () => {
    const plan = parsePlan(
      Buffer.from(
        planText([
          '#### Step 1: Top {#step-1}\n\n**Tasks:**\n- [ ] t\n',
          '##### Step 1.1: A {#step-1-1}\n\n**Tasks:**\n- [ ] t\n',
          '##### Step 1.2: B {#step-1-2}\n\n**Tasks:**\n- [ ] t\n',
          '###### Step 1.2.1: B1 {#step-1-2-1}\n\n**Depends on:** #step-1-1\n\n**Tasks:**\n- [ ] t\n',
        ]),
      ),
    );
    const top = plan.steps.find((s) => s.anchor === 'step-1')!;
    const order = executionOrder(plan.steps, top).map((s) => s.anchor);
    expect(order.indexOf('step-1-1')).toBeLessThan(order.indexOf('step-1-2-1'));
    expect(order.indexOf('step-1-2-1')).toBeLessThan(order.indexOf('step-1-2'));
    expect(order.at(-1)).toBe('step-1');
  });

  it('keeps the claim alive through a setup longer than the lease', () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two')]), 'demo', {
      '.tugtool/config.toml': '[run]\nsetup_command = ["sleep", "3"]\n',
    });
    const impl = implementerScript();
    const r = runJsonl(root, [
      'demo',
      '--workers',
      '2',
      '--implementer',
      impl.argv,
      '--lease-duration',
      '2',
      '--heartbeat',
      '1',
    ]);
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(r.events.filter((e) => e.type === 'claim_lost')).toEqual([]);
  });
});
