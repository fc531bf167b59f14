/**
 * The one builder of plan markdown for tests: steps from specs (or step text built here), under a phase
 * heading and `### Execution Steps`; and a repository with that plan committed. Tests whose subject is the
 * plan format itself (tests/plan/) write their text out by hand instead, so that what they feed the parser
 * is in front of the reader.
 *
 *   planText([{ id: '1', tasks: ['a'] }, { id: '1.1', level: 5, tasks: ['b'] }])   // the state tests' demo
 *   planText([step(1, 'One'), step(2, 'Two', { deps: [1] })], DRIVER)                // the driver tests'
 */
import { fixedClock } from '../../src/clock.js';
import { resolveRepo } from '../../src/git/repo.js';
import { initProject } from '../../src/project/init.js';
import { git, tempRepo, writeFiles } from './repo.js';

export interface StepSpec {
  /** `1`, `1.2`: the anchor is `step-1`, `step-1-2`. */
  id: string;
  /** Default `Title <id>`. */
  title?: string;
  /** Heading level: 4 for a step (default), 5 for a substep. */
  level?: number;
  /** Anchors (`step-1`); `[]` writes `**Depends on:** none`, no list writes no line. */
  deps?: string[];
  commit?: string;
  /** The `**References:**` line's text. */
  references?: string;
  tasks?: string[];
  tests?: string[];
  checkpoints?: string[];
  /** Kernel command lines (written in backticks). */
  refactors?: string[];
  /** Free text after the lists. */
  body?: string;
}

export interface PlanHeader {
  /** The phase's title and anchor: `## Phase 1.0: <title> {#<anchor>}`. */
  title: string;
  anchor: string;
  /** A `**Purpose:**` line. */
  purpose?: string;
  /** The `### Plan Metadata` table. */
  metadata?: boolean;
  /** The `**References:**` line of every step given as a spec (unless it has its own). */
  references?: string;
}

/** The state tests' demo plan header. */
export const DEMO_HEADER: PlanHeader = {
  title: 'Demo plan',
  anchor: 'phase-demo',
  purpose: 'exercise the state database.',
  metadata: true,
  references: '(#phase-demo)',
};

/** The driver tests' plan header. */
export const DRIVER: PlanHeader = { title: 'Driver test', anchor: 'phase-test' };

export function anchorOf(id: string): string {
  return 'step-' + id.toLowerCase().replace(/\./g, '-');
}

/** One step's markdown, ending with a newline. */
export function stepText(s: StepSpec): string {
  const out = [`${'#'.repeat(s.level ?? 4)} Step ${s.id}: ${s.title ?? `Title ${s.id}`} {#${anchorOf(s.id)}}`, ''];
  if (s.deps) out.push(`**Depends on:** ${s.deps.length ? s.deps.map((d) => '#' + d).join(', ') : 'none'}`, '');
  if (s.commit) out.push(`**Commit:** \`${s.commit}\``, '');
  if (s.references) out.push(`**References:** ${s.references}`, '');
  const section = (label: string, list?: string[]) => {
    if (list?.length) out.push(`**${label}:**`, ...list.map((t) => `- [ ] ${t}`), '');
  };
  section('Tasks', s.tasks);
  section('Tests', s.tests);
  section('Checkpoint', s.checkpoints);
  section(
    'Refactors',
    s.refactors?.map((r) => `\`${r}\``),
  );
  if (s.body) out.push(s.body, '');
  return out.join('\n');
}

/** A plan: the header, then each step (a spec, or text from stepText / step) separated by a blank line. */
export function planText(steps: (StepSpec | string)[], header: PlanHeader = DEMO_HEADER): string {
  const head = [`## Phase 1.0: ${header.title} {#${header.anchor}}`, ''];
  if (header.purpose) head.push(`**Purpose:** ${header.purpose}`, '');
  if (header.metadata)
    head.push(
      '### Plan Metadata {#plan-metadata}',
      '',
      '| Field | Value |',
      '|------|-------|',
      '| Owner | test |',
      '| Status | active |',
      '| Last updated | 2026-03-01 |',
      '',
    );
  head.push('### Execution Steps {#execution-steps}', '');
  const text = (s: StepSpec | string) =>
    typeof s === 'string' ? s : stepText({ references: header.references, ...s });
  return [...head, ...steps.map(text)].join('\n');
}

/**
 * The driver tests' step `n`: a `feat:` commit message and one task, optional dependencies (step numbers),
 * a checkpoint command, and free text.
 */
export function step(n: number, title: string, o: { deps?: number[]; checkpoint?: string; body?: string } = {}) {
  return stepText({
    id: String(n),
    title,
    deps: o.deps?.length ? o.deps.map((d) => `step-${d}`) : undefined,
    commit: `feat: ${title.toLowerCase()}`,
    tasks: [`write ${title.toLowerCase()}`],
    checkpoints: o.checkpoint ? [`\`${o.checkpoint}\``] : undefined,
    body: o.body,
  });
}

/** A repository on main with `tugcode init` done and `plan` committed as `.tugtool/tugplan-<slug>.md`. */
export function initializedRepo(plan: string, slug = 'demo', files: Record<string, string> = {}): string {
  const root = tempRepo();
  initProject(resolveRepo(root), fixedClock(Date.parse('2026-03-01T10:00:00.000Z')));
  writeFiles(root, { [`.tugtool/tugplan-${slug}.md`]: plan, ...files });
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'add plan');
  return root;
}
