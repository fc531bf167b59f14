/**
 * Reading a TOML settings file (`.tugtool/config.toml`, `pyproject.toml`), shared by the kernel and
 * a host's config loader so both refuse the same files. A settings file must be a regular file of at most
 * MAX_CONFIG_BYTES: a symlink to `/dev/zero` would otherwise be read forever and a FIFO with no writer
 * would block the open (docs/quality.md: every input has a bound).
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';

/** The largest settings file read (a config.toml is a few KiB; a pyproject.toml rarely passes 100 KiB). */
export const MAX_CONFIG_BYTES = 1024 * 1024;

function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'something else';
}

/** The file's text, or why it is not read (the caller wraps the reason in its own ConfigInvalid). */
export function readConfigFile(path: string): { text: string } | { reason: string } {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (e) {
    return { reason: `cannot read: ${(e as Error).message}` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { reason: `not a regular file but ${kindOf(st)}; a settings file must be a regular file` };
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(64 * 1024, MAX_CONFIG_BYTES + 1 - total));
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      total += n;
      if (total > MAX_CONFIG_BYTES)
        return { reason: `larger than ${MAX_CONFIG_BYTES} bytes, the most a settings file may hold` };
    }
    return { text: Buffer.concat(chunks, total).toString('utf8') };
  } catch (e) {
    return { reason: `cannot read: ${(e as Error).message}` };
  } finally {
    closeSync(fd);
  }
}
