/** Input tables of the git flows (docs/git.md §3–§7) and of init / validate / schema. */
import type { Field, InputTable } from './fields.js';
import { MAX_COUNTER, MAX_MESSAGE, MAX_PATH, MAX_PLAN, MAX_ANCHOR } from './limits.js';

const t = (command: string, description: string, fields: Record<string, Field>): InputTable => ({
  command,
  description,
  fields,
});
const plan: Field = { type: 'string', arg: 0, required: true, max: MAX_PLAN, description: 'plan path or slug' };
const branch = (description: string): Field => ({
  type: 'string',
  max: MAX_PATH,
  placeholder: '<branch>',
  description,
});

export const worktreeCreate = t(
  'worktree create',
  'create branch tugplan/<slug>--<timestamp> and its worktree; state init + reconcile the plan',
  {
    plan,
    base: branch('base branch (default: config run.base_branch)'),
    name: { type: 'string', max: 128, placeholder: '<name>', description: 'use <name> instead of the UTC timestamp' },
    reuse: { type: 'bool', description: 'return the live worktree of this plan when there is one' },
    new: { type: 'bool', description: 'make another worktree even when one exists' },
  },
);

export const worktreeList = t(
  'worktree list',
  'worktrees under .tugtree/ with branch, HEAD, dirty flag, plan and held steps (read-only)',
  {},
);

export const worktreeRemove = t(
  'worktree remove',
  'remove one worktree (path, directory name or branch) and its branch; refuses dirty, unmerged or claimed trees',
  {
    worktree: { type: 'string', arg: 0, required: true, max: MAX_PATH, description: 'path, directory name or branch' },
    force: { type: 'bool', description: 'remove anyway and release its claims (admin action)' },
  },
);

export const commit = t(
  'commit',
  'commit a step: log entry, git add -A, Tug-Step/Tug-Plan trailers, then strict state complete',
  {
    worktree: {
      type: 'string',
      max: MAX_PATH,
      placeholder: '<path>',
      description: 'the worktree to commit in (default: the current work tree)',
    },
    plan: { type: 'string', required: true, max: MAX_PLAN, placeholder: '<plan>', description: 'plan path or slug' },
    step: {
      type: 'string',
      required: true,
      max: MAX_ANCHOR,
      placeholder: '<anchor>',
      description: 'the step this commit completes',
    },
    message: {
      type: 'string',
      nonEmpty: true,
      max: MAX_MESSAGE,
      placeholder: '<text>',
      fileFlag: '--message-file',
      description:
        "commit message (multi-line allowed); required unless HEAD is the step's commit not yet integrated, whose message is then kept",
    },
    summary: {
      type: 'string',
      max: MAX_MESSAGE,
      placeholder: '<text>',
      fileFlag: '--summary-file',
      description: 'summary for the implementation-log entry (default: the message subject)',
    },
    attempt: {
      type: 'int',
      min: 0,
      max: MAX_COUNTER,
      placeholder: '<n>',
      description: 'fencing token passed to state complete',
    },
    integrate: {
      type: 'bool',
      description: 'rebase onto and fast-forward tugplan/<slug> (created from the base when missing)',
    },
    allow_main: { type: 'bool', description: 'allow committing in the main checkout' },
    allow_empty: { type: 'bool', description: 'record the step even without changes' },
  },
);

export const merge = t(
  'merge',
  'merge a completed plan back into its base (--no-ff), verifying every step commit; then remove merged worktrees',
  {
    plan,
    into: branch('target branch (default: the base recorded for the plan branch)'),
    branch: branch('the branch to merge when the plan has several worktree branches and no integration branch'),
    dry_run: { type: 'bool', description: 'report what would happen, change nothing' },
    force: { type: 'bool', description: 'merge even when steps are not completed' },
  },
);

export const status = t('status', 'one progress line per plan (from state.db, else from the checkboxes); read-only', {
  plan: { ...plan, required: false },
});

export const doctor = t(
  'doctor',
  'read-only health checks of git, .tugtool/, the state store (state.db or PostgreSQL), worktrees and the kernel',
  {},
);

export const init = t('init', 'create .tugtool/ with a skeleton plan, config.toml and the ignore lines', {
  force: { type: 'bool', description: 'overwrite existing files' },
});

export const validate = t('validate', 'validate one plan (path or slug) or every plan under .tugtool/', {
  plan: { ...plan, required: false },
  level: {
    type: 'enum',
    values: ['lenient', 'normal', 'strict'],
    placeholder: '<level>',
    description: 'lenient | normal | strict (default: config validate.level)',
  },
});

export const schema = t('schema', "print the JSON Schema of a command's --json output", {
  command: { type: 'list', arg: 0, required: true, max: 64, maxItems: 8, description: 'the command, e.g. state claim' },
  input: { type: 'bool', description: "print the schema of the command's input (its MCP tool arguments) instead" },
});
