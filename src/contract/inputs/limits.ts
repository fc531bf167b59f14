/**
 * Bounds of every input (docs/quality.md: every input has a bound). One place, so the CLI flag, the tool
 * argument, config.toml and the environment all refuse the same values.
 */
/** A lease: 1 s … 366 days. */
export const MAX_LEASE_SECONDS = 366 * 24 * 3600;
/** An attempt (fencing token) or any other counter. */
export const MAX_COUNTER = Number.MAX_SAFE_INTEGER;
/** A path or ref argument. */
export const MAX_PATH = 4096;
/** A plan reference (path or slug). */
export const MAX_PLAN = 4096;
/** A step anchor. */
export const MAX_ANCHOR = 256;
/** A one-line reason (fail, defer, force). */
export const MAX_REASON = 4000;
/** A commit message or a log summary. */
export const MAX_MESSAGE = 64 * 1024;
/** The long content of an artifact (read up to this many code points; the state library keeps 64 Ki). */
export const MAX_CONTENT = 4 * 1024 * 1024;
/** Bytes read from a file or stdin for any text input, before its own cap applies; also a plan file's (E008). */
export const MAX_INPUT_BYTES = 16 * 1024 * 1024;
/** A `state export` document read by `state import` (bytes from a file or stdin; code points inline). */
export const MAX_EXPORT_DOCUMENT = 64 * 1024 * 1024;
