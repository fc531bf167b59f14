/**
 * Processes an implementer leaves outside its process group (docs/agents.md §1.6): a command started in a new
 * session (`setsid`, as claude's Bash tool starts every command) survives the kill of the group, so the driver
 * ends what still carries the child's mark in its environment, and warns.
 */
import { describe, expect, it } from 'vitest';
import { running } from '../helpers/proc.js';
import { planText, runJsonl, runRepo, step, stepCommits } from './helpers.js';

describe.skipIf(process.platform !== 'linux')('processes left running', () => {
  it('a process an implementer started in its own session is ended with its group, and the run warns naming it', () => {
    const root = runRepo(planText([step(1, 'Base')]));
    // Unique, so no other test's sleep is taken for this one.
    const secs = `1000.${process.pid}${Date.now() % 100000}`;
    // It waits until the process is in its own session, so the group's kill cannot end it first.
    const impl =
      `sh -c 'echo x > "$TUG_STEP.txt"; setsid sh -c "echo in > started; exec sleep ${secs}" >/dev/null 2>&1 </dev/null & ` +
      `while [ ! -e started ]; do sleep 0.05; done; rm started'`;
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl]);
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1']);
    expect(running(`sleep ${secs}`)).toEqual([]);
    const warned = r.events.filter((e) => e.type === 'warning' && e.code === 'ProcessesLeftRunning');
    expect(warned).toHaveLength(1);
    expect(warned[0].message).toMatch(
      new RegExp(
        `^ended 1 process\\(es\\) left running .* \\.tugtool/logs/demo/step-1-attempt1\\.log: pid \\d+ \`sleep ${secs.replace('.', '\\.')}\`$`,
      ),
    );
  });
});
