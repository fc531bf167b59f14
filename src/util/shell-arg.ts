/**
 * One argument of a command that a hint names, written so a POSIX shell reads it back as that one argument
 * (docs/AGENT_API.md: agents run `error.hint` when it is a command).
 *
 * A plain argument (`.tugtool/tugplan-demo.md`, `/tmp/x/wt-1`, `step-2`) stays exactly as it is; anything
 * else (a space, a quote, `$`, a backtick, `*`, `~`, an empty string, …) is put in single quotes, an
 * embedded single quote written `'\''`. A placeholder such as `<plan>` or `<state.db>` is not an argument
 * but a slot for the reader to fill, and stays as it is.
 */
export function shellArg(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./\-\u0080-\uFFFF]+$/.test(arg)) return arg;
  if (/^<[A-Za-z0-9_. -]+>$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}
