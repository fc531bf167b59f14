/**
 * Recorded envelopes (issue 11 §6: "the JSON output and exit codes stay byte-identical"). A fixed script of
 * real CLI calls — every command, the main error paths, and the text output of the read commands — runs in
 * one temp repository with the clock, git identities/dates, colours and locale pinned; stdout, stderr and
 * the exit code of each call must equal tests/fixtures/envelopes/golden.json exactly (JSON key order
 * included). `UPDATE_ENVELOPES=1 npx vitest run tests/cli/envelopes.test.ts` rewrites the golden instead;
 * review its diff like code.
 */
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import {
  entryText,
  gitIn,
  newSession,
  runScript,
  writeIn,
  type Call,
  type Entry,
  type ScriptItem,
  type Session,
} from '../helpers/envelopes.js';

const GOLDEN = join(ROOT, 'tests', 'fixtures', 'envelopes', 'golden.json');

const PLAN = `## Phase 1.0: Envelope demo {#phase-demo}

**Purpose:** record the envelopes of every command.

### Plan Metadata {#plan-metadata}

| Field | Value |
|------|-------|
| Owner | test |
| Status | active |
| Last updated | 2026-03-01 |

### Execution Steps {#execution-steps}

#### Step 1: Alpha {#step-1}

**Commit:** \`feat: alpha\`

**References:** (#phase-demo)

**Tasks:**
- [ ] write alpha
- [ ] wire alpha

**Tests:**
- [ ] alpha test

**Checkpoint:**
- [ ] npm test

#### Step 2: Beta {#step-2}

**Depends on:** #step-1

**Commit:** \`feat: beta\`

**References:** (#phase-demo)

**Tasks:**
- [ ] write beta

##### Step 2.1: Beta part {#step-2-1}

**References:** (#phase-demo)

**Tasks:**
- [ ] beta part a
- [ ] beta part b

**Tests:**
- [ ] beta part test

#### Step 3: Gamma {#step-3}

**Commit:** \`feat: gamma\`

**References:** (#phase-demo)

**Tasks:**
- [ ] write gamma

**Checkpoint:**
- [ ] gamma builds
`;

const BAD_PLAN = `# Bad plan\n\n### Execution Steps\n\n#### Step 1: One {#step-1}\n\n**Depends on:** #step-9\n\n**Tasks:**\n- [ ] a\n`;

/** Advance the clock by `seconds` (every later call runs at the new TUGCODE_NOW and git date). */
const tick = (seconds: number): ScriptItem => ({
  setup: `clock +${seconds}s`,
  run: (s) => {
    s.clock += seconds;
  },
});

const setup = (name: string, run: (s: Session) => void): ScriptItem => ({ setup: name, run });

/** `tugcode <argv…> --json`. */
const j = (label: string, argv: string[], o: Omit<Call, 'label' | 'argv'> = {}): Call => ({
  label,
  argv: [...argv, '--json'],
  ...o,
});

/** A state write `--json` with `--worktree <where>`, run in that work tree (`WT`: the plan worktree). */
const w = (label: string, argv: string[], where = 'WT', o: Omit<Call, 'label' | 'argv'> = {}): Call =>
  j(label, [...argv, '--worktree', `<${where}>`], { cwd: where, ...o });

/** Text mode. */
const t = (label: string, argv: string[], o: Omit<Call, 'label' | 'argv'> = {}): Call => ({ label, argv, ...o });

/** doctor reports the machine's git version and optional language backends; keep their shape only. */
function scrubDoctor(r: { checks?: { name: string; status: string; message: string }[] }): void {
  for (const c of r.checks ?? []) {
    if (c.name === 'git-version') c.message = c.message.replace(/\d+\.\d+(\.\d+)?\S*/, '<GIT_VERSION>');
    if (c.name === 'kernel-backends') {
      c.status = '<MACHINE>';
      c.message = '<MACHINE>';
    }
  }
}

const SCRIPT: ScriptItem[] = [
  // ── project setup and plan validation ──────────────────────────────────────────────────────────────
  j('init: creates .tugtool/', ['init']),
  j('init again: idempotent', ['init']),
  setup('commit the demo plan and a bad plan', (s) => {
    writeIn(s.root, { '.tugtool/tugplan-demo.md': PLAN, '.tugtool/tugplan-bad.md': BAD_PLAN });
    gitIn(s, s.root, 'add', '-A');
    gitIn(s, s.root, 'commit', '-q', '-m', 'add plans');
  }),
  j('validate demo: ok', ['validate', 'demo']),
  j('validate bad: PlanInvalid', ['validate', 'bad']),
  j('validate all (strict)', ['validate', '--level', 'strict']),
  t('validate bad (text)', ['validate', 'bad']),
  j('validate nope: PlanNotFound', ['validate', 'nope']),
  j('schema state claim', ['schema', 'state', 'claim']),
  j('schema of an unknown command', ['schema', 'nope']),
  j('unknown command', ['frobnicate']),
  t('--json alone [issue 11 "also fix" 6 changes this]', ['--json']),
  t('--json state [issue 11 "also fix" 6 changes this]', ['--json', 'state']),
  t('state without a subcommand (text) [prints nothing today; see issue 11 "also fix" 6]', ['state']),
  j('state show before state init', ['state', 'show', 'demo']),
  j('status before state init (from checkboxes)', ['status']),

  // ── state init, worktree create ────────────────────────────────────────────────────────────────────
  j('state init demo', ['state', 'init', 'demo']),
  j('state init demo again', ['state', 'init', 'demo']),
  tick(60),
  j('worktree create demo', ['worktree', 'create', 'demo'], {
    learn: (r, s) => {
      s.vars.WT = r.worktree_path;
    },
  }),
  j('worktree create demo again: WorktreeExists', ['worktree', 'create', 'demo']),
  j('worktree list', ['worktree', 'list']),
  t('worktree list (text)', ['worktree', 'list']),

  // ── claim / start / heartbeat and flag errors ──────────────────────────────────────────────────────
  // Without --worktree a claim is the current work tree's (issue 22 item 23): an empty one is still refused.
  j('claim: empty --worktree (an unset $TUG_WORKTREE)', ['state', 'claim', 'demo', '--worktree', ''], { cwd: 'WT' }),
  j('claim: --worktree without a value', ['state', 'claim', 'demo', '--worktree'], { cwd: 'WT' }),
  w('claim: bad --lease-duration 0', ['state', 'claim', 'demo', '--lease-duration', '0']),
  w('claim: StepNotFound', ['state', 'claim', 'demo', '--step', 'step-9']),
  w('claim: step-1 in the worktree', ['state', 'claim', 'demo']),
  w('claim again: resumes own claim', ['state', 'claim', 'demo']),
  w('start: bad --attempt x', ['state', 'start', 'demo', 'step-1', '--attempt', 'x']),
  w('start from main: NotOwner', ['state', 'start', 'demo', 'step-1'], 'REPO'),
  w('start step-1', ['state', 'start', 'demo', 'step-1', '--attempt', '1']),
  tick(60),
  w('heartbeat step-1', ['state', 'heartbeat', 'demo', 'step-1']),
  w('heartbeat: stale attempt', ['state', 'heartbeat', 'demo', 'step-1', '--attempt', '7']),

  // ── update in every form, artifact ─────────────────────────────────────────────────────────────────
  w('update: --task 0 completed --test 0:completed', [
    'state',
    'update',
    'demo',
    'step-1',
    '--task',
    '0',
    'completed',
    '--test',
    '0:completed',
  ]),
  w('update: --all-checkpoints deferred without --reason', [
    'state',
    'update',
    'demo',
    'step-1',
    '--all-checkpoints',
    'deferred',
  ]),
  w('update: --all-checkpoints deferred --reason', [
    'state',
    'update',
    'demo',
    'step-1',
    '--all-checkpoints',
    'deferred',
    '--reason',
    'manual check',
  ]),
  w('update: --batch from stdin', ['state', 'update', 'demo', 'step-1', '--batch'], 'WT', {
    input:
      '[{"kind":"task","ordinal":1,"status":"in_progress"},{"kind":"checkpoint","ordinal":0,"status":"completed"}]',
  }),
  w('update: --batch with a bad document', ['state', 'update', 'demo', 'step-1', '--batch'], 'WT', {
    input: '{"kind":"task"}',
  }),
  w('update: ordinal out of range', ['state', 'update', 'demo', 'step-1', '--task', '9', 'completed']),
  w('artifact: note', ['state', 'artifact', 'demo', 'step-1', '--kind', 'note', '--summary', 'looks fine']),
  w(
    'artifact: content from stdin',
    ['state', 'artifact', 'demo', 'step-1', '--kind', 'coder_report', '--summary', 'report', '--content-file', '-'],
    'WT',
    { input: '## Done\n\n- all good\n' },
  ),
  w('complete strict with open items: refused', ['state', 'complete', 'demo', 'step-1']),
  w('update: --complete-remaining', ['state', 'update', 'demo', 'step-1', '--complete-remaining']),
  t('state show --step step-1 --items all (text)', ['state', 'show', 'demo', '--step', 'step-1', '--items', 'all']),

  // ── commit --integrate in the worktree ─────────────────────────────────────────────────────────────
  tick(60),
  setup('write alpha in the worktree', (s) => writeIn(s.vars.WT!, { 'alpha.txt': 'alpha\n' })),
  j(
    'commit step-1 --integrate',
    ['commit', '--plan', 'demo', '--step', 'step-1', '--message', 'feat: alpha', '--attempt', '1', '--integrate'],
    { cwd: 'WT' },
  ),
  j('commit again: NothingToCommit', ['commit', '--plan', 'demo', '--step', 'step-1', '--message', 'x'], {
    cwd: 'WT',
  }),
  j('commit in main: MainCheckoutRefused', ['commit', '--plan', 'demo', '--step', 'step-2', '--message', 'x']),
  j('ready after step-1', ['state', 'ready', 'demo']),

  // ── step-2 with its substep, completed without a commit ────────────────────────────────────────────
  tick(60),
  w('claim --step step-2 in the worktree', ['state', 'claim', 'demo', '--step', 'step-2']),
  w('start substep step-2-1', ['state', 'start', 'demo', 'step-2-1']),
  w('update substep: --all completed', ['state', 'update', 'demo', 'step-2-1', '--all', 'completed']),
  w('update step-2: --all-tasks completed', ['state', 'update', 'demo', 'step-2', '--all-tasks', 'completed']),
  w('complete step-2 (strict)', ['state', 'complete', 'demo', 'step-2']),

  // ── step-3: lease expiry and takeover, fail, reset, release, forced completion ───────────────────────
  tick(60),
  w('claim step-3 in main, 60 s lease', ['state', 'claim', 'demo', '--lease-duration', '60'], 'REPO'),
  tick(120),
  w('claim --step step-3 from the worktree: takes the expired claim', ['state', 'claim', 'demo', '--step', 'step-3']),
  w('heartbeat from main after the takeover', ['state', 'heartbeat', 'demo', 'step-3'], 'REPO'),
  w(
    'update from main with --attempt 1 after the takeover',
    ['state', 'update', 'demo', 'step-3', '--task', '0', 'completed', '--attempt', '1'],
    'REPO',
  ),
  w('fail step-3', ['state', 'fail', 'demo', 'step-3', '--reason', 'tests broke', '--attempt', '2']),
  t('show --step step-3 (text, failed)', ['state', 'show', 'demo', '--step', 'step-3']),
  j('reset step-3', ['state', 'reset', 'demo', 'step-3']),
  j('reset step-9: StepNotFound', ['state', 'reset', 'demo', 'step-9']),
  w('claim step-3 in main', ['state', 'claim', 'demo'], 'REPO'),
  w('release step-3', ['state', 'release', 'demo', 'step-3'], 'REPO'),
  w('release again', ['state', 'release', 'demo', 'step-3'], 'REPO'),
  w('complete step-3 --force without a claim', ['state', 'complete', 'demo', 'step-3', '--force', 'x'], 'REPO'),
  w('claim step-3 in main for the forced completion', ['state', 'claim', 'demo'], 'REPO'),
  w('complete step-3 --force', ['state', 'complete', 'demo', 'step-3', '--force', 'done by hand'], 'REPO'),
  w('claim when all done', ['state', 'claim', 'demo'], 'REPO'),
  j('reconcile demo', ['state', 'reconcile', 'demo']),

  // ── reconcile, prune, the read commands ────────────────────────────────────────────────────────────
  tick(60),
  j('reconcile --all-branches', ['state', 'reconcile', 'demo', '--all-branches']),
  j('prune --dry-run', ['state', 'prune', '--dry-run']),
  j('show demo', ['state', 'show', 'demo']),
  j('show --step #step-1 (leading #)', ['state', 'show', 'demo', '--step', '#step-1']),
  j('log --after-id 3 --limit 2', ['state', 'log', 'demo', '--after-id', '3', '--limit', '2']),
  j('show all plans --items none', ['state', 'show', '--items', 'none']),
  t('show demo (text)', ['state', 'show', 'demo']),
  t('ready (text)', ['state', 'ready', 'demo']),
  j('log --limit 5', ['state', 'log', 'demo', '--limit', '5']),
  j('log --step step-1', ['state', 'log', 'demo', '--step', 'step-1']),
  t('log --step step-3 (text)', ['state', 'log', 'demo', '--step', 'step-3']),
  j('list', ['state', 'list']),
  t('list (text)', ['state', 'list']),
  j('graph (mermaid)', ['state', 'graph', 'demo']),
  j('graph --format dot', ['state', 'graph', 'demo', '--format', 'dot']),
  t('graph (text)', ['state', 'graph', 'demo']),
  j('status', ['status']),
  t('status (text)', ['status']),
  j('status demo', ['status', 'demo']),

  // ── merge, worktree remove, doctor ─────────────────────────────────────────────────────────────────
  tick(60),
  j('merge --dry-run', ['merge', 'demo', '--dry-run']),
  j('merge', ['merge', 'demo']),
  j('worktree list after merge', ['worktree', 'list']),
  j('worktree create --new --name spare', ['worktree', 'create', 'demo', '--new', '--name', 'spare'], {
    learn: (r, s) => {
      s.vars.SPARE = r.worktree_path;
    },
  }),
  j('worktree remove spare', ['worktree', 'remove', '<SPARE>']),
  j('worktree remove of a missing path', ['worktree', 'remove', '<REPO>/.tugtree/nope']),
  j('doctor', ['doctor'], { scrub: scrubDoctor }),

  // ── board: refused before it listens ───────────────────────────────────────────────────────────────
  j('board --port 0: InvalidArgument', ['board', '--port', '0']),
  j('board --host with a space: InvalidArgument', ['board', '--host', 'a b']),
];

function readGolden(): Entry[] | undefined {
  return existsSync(GOLDEN) ? (JSON.parse(readFileSync(GOLDEN, 'utf8')) as Entry[]) : undefined;
}

describe('recorded envelopes', () => {
  it('every call of the script prints exactly the recorded stdout, stderr and exit code', () => {
    const entries = runScript(SCRIPT, newSession());
    expect(new Set(entries.map((e) => e.label)).size, 'labels are unique').toBe(entries.length);
    if (process.env.UPDATE_ENVELOPES === '1') {
      mkdirSync(dirname(GOLDEN), { recursive: true });
      writeFileSync(GOLDEN, JSON.stringify(entries, null, 2) + '\n');
      return;
    }
    const golden = readGolden();
    expect(golden, `no golden at ${GOLDEN}: run with UPDATE_ENVELOPES=1`).toBeDefined();
    expect(entries.map((e) => e.label)).toEqual(golden!.map((e) => e.label));
    for (const [i, e] of entries.entries()) {
      expect.soft(entryText(e), `#${i} ${e.label}: tugcode ${e.argv.join(' ')}`).toBe(entryText(golden![i]!));
    }
  }, 120_000);
});
