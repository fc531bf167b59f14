/**
 * Who owns a sandbox, and the sweep of sandboxes whose owner was SIGKILLed (docs/kernel.md §11.1). A
 * sandbox's directory name carries its owner, `tug-sbx-o<boot id>-<pid-namespace inode>-<pid>-<start>-XXXXXX`
 * (start: the process start time, field 22 of /proc/<pid>/stat), so the name is written atomically with the
 * directory and the sweep of a normal call is one readdir of the temp directory. A kept sandbox holds a
 * `kept` file beside its `ws/`. A sandbox is removed only when its owner is provably gone: same boot, same
 * pid namespace (another container sharing /tmp may run that pid), and the pid absent or started at
 * another time. Anything else (no /proc, another boot or namespace, an unreadable /proc entry, an old
 * unowned name, a symlink, another user's directory, `kept`) is left.
 */
import { lstatSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

const OWNED = /^tug-sbx-o([0-9a-f]{32})-(\d+)-(\d+)-(\d+)-[A-Za-z0-9]{6}$/;
/** Beside `ws/` in a sandbox kept with --keep-sandbox. */
export const KEPT_MARK = 'kept';

interface Owner {
  boot: string;
  ns: string;
  pid: number;
  start: string;
}

/** Field 22 (starttime) of a /proc/<pid>/stat text; the command name (field 2) may hold spaces and ')'. */
function startTime(stat: string): string | null {
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state), so field 22 is rest[19].
  return rest[19] && /^\d+$/.test(rest[19]) ? rest[19] : null;
}

let self: Owner | null | undefined;

/** This process as a sandbox owner, or null where /proc cannot say (not Linux, /proc of another namespace). */
function selfOwner(): Owner | null {
  if (self !== undefined) return self;
  self = null;
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim().replace(/-/g, '');
    const ns = /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const start = startTime(stat);
    // /proc/self must be this process: a /proc mounted from another pid namespace names someone else.
    if (/^[0-9a-f]{32}$/.test(boot) && ns && start && Number(stat.split(' ')[0]) === process.pid)
      self = { boot, ns, pid: process.pid, start };
  } catch {
    // no /proc: sandboxes are unowned, never swept
  }
  return self;
}

/** The mkdtemp prefix of a new sandbox: with its owner when this process can name itself. */
export function sandboxPrefix(): string {
  const o = selfOwner();
  return o ? `tug-sbx-o${o.boot}-${o.ns}-${o.pid}-${o.start}-` : 'tug-sbx-';
}

/** Whether the owner named by `m` is provably gone, from this process's view. */
function ownerGone(m: RegExpExecArray, me: Owner): boolean {
  if (m[1] !== me.boot || m[2] !== me.ns) return false;
  const pid = Number(m[3]);
  if (pid === me.pid) return m[4] !== me.start;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT';
  }
  const start = startTime(stat);
  return start !== null && start !== m[4];
}

/**
 * Remove the sandboxes under `dir` whose owner is provably gone and that are not kept; returns their names.
 * Never throws. Two sweeps at once: each first renames its victim to a fresh name of its own (rename is
 * atomic, so one wins and the other skips it), which a later sweep removes should this process die midway.
 */
export function sweepSandboxes(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith('tug-sbx-o')) continue;
    const m = OWNED.exec(name);
    const me = m && selfOwner();
    if (!m || !me || !ownerGone(m, me)) continue;
    const path = join(dir, name);
    try {
      // lstat: a symlink named like a sandbox is never followed; another user's directory is not ours to judge.
      const st = lstatSync(path);
      if (!st.isDirectory() || st.uid !== process.getuid?.()) continue;
      if (isPresent(join(path, KEPT_MARK))) continue;
      const mine = join(
        dir,
        `${sandboxPrefix()}${randomBytes(6).toString('base64url').replace(/[-_]/g, 'x').slice(0, 6)}`,
      );
      renameSync(path, mine);
      // rm never follows the links inside (node_modules, .venv point at the real workspace).
      rmSync(mine, { recursive: true, force: true });
      removed.push(name);
    } catch {
      // gone already (another sweep won), or not removable: left
    }
  }
  return removed;
}

function isPresent(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch (e) {
    // Only a clear "absent" counts as not kept.
    return (e as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}
