/**
 * The git hook a git command runs in a checkout: where git looks for it (`.git/hooks/<name>`, or under
 * core.hooksPath, which `rev-parse --git-path` follows) and whether it is there to run.
 */
import { statSync } from 'node:fs';
import type { GitRunner } from '../git/exec.js';

/** The absolute path of the `name` hook git would run from `cwd`, or null when none is executable there. */
export async function hookFile(g: GitRunner, cwd: string, name: string): Promise<string | null> {
  const r = await g.tryRun(['rev-parse', '--path-format=absolute', '--git-path', `hooks/${name}`], cwd);
  const path = r.stdout.trim();
  if (r.status !== 0 || !path) return null;
  try {
    return (statSync(path).mode & 0o111) !== 0 ? path : null;
  } catch {
    return null;
  }
}
