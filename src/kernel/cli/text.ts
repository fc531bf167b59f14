/**
 * `--text` summaries (docs/kernel.md §3.4). The exit code is unchanged; only stdout differs. Every command lists
 * its warnings after its summary; a dry `run` then adds its unified diff (the README's "dry run: the diff").
 */
type Env = Record<string, any>;

function verifyPart(v: Env | undefined): string {
  if (!v) return '';
  return v.status === 'skipped' ? `verify ${v.mode} skipped` : `verify ${v.mode} ${v.status}`;
}

/** One line per warning (docs/kernel.md §3.4): `warning <Code> at <file>:<line>:<col>: <message>`. */
function warningLines(env: Env): string {
  return ((env.warnings ?? []) as Env[])
    .map((w) => {
      const at = w.location ? ` at ${w.location.file}:${w.location.line}:${w.location.col}` : '';
      return `warning ${w.code}${at}: ${w.message}\n`;
    })
    .join('');
}

/** `newName`: the rename's `--to`; `run`'s envelope has no `new_name`, and an edit may carry a prefix (`old: NEW`). */
export function renderText(command: string, env: Env, newName?: string): string {
  if (env.status === 'error') {
    const e = env.error as Env;
    const loc = e.location ? ` at ${e.location.file}:${e.location.line}:${e.location.col}` : '';
    return `error ${e.code}: ${e.message}${loc && !String(e.message).includes(e.location.file) ? loc : ''}\n`;
  }
  switch (command) {
    case 'analyze-impact': {
      const i = env.impact as Env;
      const what =
        env.operation === 'rename-symbol'
          ? `rename-symbol ${env.symbol.name} -> ${env.new_name}`
          : `organize-imports ${env.file}`;
      return (
        `${what}: ${i.files_affected} files, ${i.references_count} references, ${i.edits_estimated} edits\n` +
        warningLines(env)
      );
    }
    case 'run': {
      const s = env.summary as Env;
      const what =
        env.operation === 'rename-symbol'
          ? `rename-symbol ${env.symbol?.name} -> ${newName ?? env.patch.edits[0]?.new_text ?? '?'}`
          : 'organize-imports';
      const line =
        `${what}: ${s.files_changed} files, ${s.edits_count} edits, ${verifyPart(env.verification)} (${env.applied ? 'applied' : 'dry run'})\n` +
        warningLines(env);
      // A dry run is for reviewing the change: after the summary and warning lines comes the diff it would write.
      const diff = env.applied ? '' : String(env.patch?.unified_diff ?? '');
      return diff === '' ? line : line + diff + (diff.endsWith('\n') ? '' : '\n');
    }
    case 'verify': {
      // A lower stage with nothing to run is listed `skipped` (§11.4): not among the checks that passed.
      const checks = (env.verification?.checks ?? []) as Env[];
      const ran = checks.filter((c) => c.status !== 'skipped').map((c) => c.name);
      const skipped = checks.filter((c) => c.status === 'skipped').map((c) => c.name);
      const list = (ran.join(', ') || 'no checks') + (skipped.length ? `; skipped: ${skipped.join(', ')}` : '');
      return `verify ${env.mode} passed (${list})\n` + warningLines(env);
    }
    case 'snapshot':
      return `${env.snapshot_id}: ${env.file_count} files, ${env.total_bytes} bytes\n` + warningLines(env);
    case 'session status':
      return (
        `session ${env.session.path}: ${env.session.exists ? 'exists' : 'absent'}, lock ${env.lock.held ? `held by ${env.lock.holder_pid}` : 'free'}, current ${env.snapshots.current ?? 'none'}\n` +
        warningLines(env)
      );
    case 'session clean':
      return `removed ${env.removed.length} entries, ${env.bytes_freed} bytes freed\n` + warningLines(env);
    case 'doctor': {
      const s = env.summary as Env;
      return (
        `doctor: ${s.passed} passed, ${s.warnings} warnings, ${s.failed} failed\n` +
        (env.checks as Env[]).map((c) => `  ${c.status.padEnd(7)} ${c.name}: ${c.message}`).join('\n') +
        '\n' +
        warningLines(env)
      );
    }
    default:
      return JSON.stringify(env) + '\n';
  }
}
