/**
 * agents/implementer.sh wires an agent CLI as `tugcode run --implementer`: the fake agent gets the prompt
 * built from the brief on stdin, edits the worktree, the step is committed and integrated, and the agent's
 * output is recorded as the step's coder_report artifact. A failing agent fails the attempt.
 */
import { chmodSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, ROOT, runCli } from '../helpers/cli.js';
import { git, tempDir, tempRepo, writeFiles } from '../helpers/repo.js';

const PLAN = `## Phase 1: Hi {#phase-hi}

| Field | Value |
|------|-------|
| Owner | ada |
| Status | draft |
| Last updated | 2026-03-01 |

### Execution Steps {#execution-steps}

#### Step 1: Say hi {#step-1}

**Commit:** \`feat: hi\`

**References:** (#phase-hi)

**Tasks:**
- [ ] Write hello.txt

**Tests:**
- [ ] hello.txt exists

**Checkpoint:**
- [ ] \`test -f hello.txt\`
`;

function setup(agentBody: string) {
  const bin = tempDir('tug-impl-bin-');
  writeFiles(bin, {
    tugcode: `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`,
    'fake-agent': `#!/bin/sh\n${agentBody}\n`,
  });
  chmodSync(join(bin, 'tugcode'), 0o755);
  chmodSync(join(bin, 'fake-agent'), 0o755);
  const repo = tempRepo({ '.tugtool/tugplan-hi.md': PLAN });
  const env = {
    PATH: `${bin}:${process.env.PATH}`,
    TUG_AGENT_CMD: join(bin, 'fake-agent'),
  };
  const run = () =>
    runCli(
      [
        'run',
        'hi',
        '--workers',
        '1',
        '--max-attempts',
        '1',
        '--keep-worktrees',
        '--implementer',
        `bash ${join(ROOT, 'agents', 'implementer.sh')}`,
        '--json',
      ],
      {
        cwd: repo,
        env,
      },
    );
  return { repo, run };
}

describe('agents/implementer.sh', () => {
  it('runs the agent with the brief as a prompt, and the step is committed with a coder_report', () => {
    const { repo, run } = setup(
      'cat > "$TUG_WORKTREE/../prompt-$TUG_STEP.txt"\necho hello > hello.txt\necho "agent: done"',
    );
    const r = run();
    const summary = JSON.parse(r.stdout.trim().split('\n').pop()!);
    expect(summary.status, r.stdout + r.stderr).toBe('ok');
    expect(summary.steps_completed).toEqual(['step-1']);
    expect(git(repo, 'show', 'tugplan/hi:hello.txt')).toBe('hello\n');
    const prompt = readFileSync(join(repo, '.tugtree', 'prompt-step-1.txt'), 'utf8');
    expect(prompt).toContain('Implement step step-1 "Say hi"');
    expect(prompt).toContain('- [step-1 task 0] Write hello.txt');
    expect(prompt).toContain('References: (#phase-hi)');
    const log = runCli(['state', 'log', 'hi', '--json'], { cwd: repo });
    const artifacts = log.json.events.filter((e: { command: string }) => e.command === 'state artifact');
    expect(artifacts.length).toBe(1);
  });

  it('fails the attempt when the agent exits non-zero', () => {
    const { run } = setup('cat >/dev/null\necho "cannot do it"\nexit 3');
    const r = run();
    const summary = JSON.parse(r.stdout.trim().split('\n').pop()!);
    expect(summary.status).toBe('error');
    expect(summary.failed_steps[0].reason).toMatch(/^ImplementerFailed/);
  });
});
