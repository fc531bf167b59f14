/**
 * Turns results and errors into output (03-contract.md §1): one JSON document on stdout under --json,
 * human text otherwise; diagnostics and warnings on stderr.
 */
import { fail, ok, type Warning } from '../contract/envelope.js';
import { TugError } from '../contract/errors.js';

export interface Rendered {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export function renderOk(
  command: string,
  data: object,
  warnings: Warning[],
  json: boolean,
  quiet: boolean,
  text?: string,
): Rendered {
  if (json) {
    return { stdout: JSON.stringify(ok(command, data, warnings), null, 2) + '\n', stderr: '', exitCode: 0 };
  }
  const stderr = warnings.map((w) => `tugcode: warning: ${w.code}: ${w.message}\n`).join('');
  const body = quiet ? '' : (text ?? '');
  return { stdout: body === '' || body.endsWith('\n') ? body : body + '\n', stderr, exitCode: 0 };
}

export function renderError(command: string, err: TugError, warnings: Warning[], json: boolean): Rendered {
  let stderr = json ? '' : warnings.map((w) => `tugcode: warning: ${w.code}: ${w.message}\n`).join('');
  stderr += `tugcode: ${err.code}: ${err.message.replace(/\n/g, ' ')}\n`;
  if (err.hint) stderr += `hint: ${err.hint}\n`;
  const stdout = json
    ? JSON.stringify(fail(command, err, warnings), null, 2) + '\n'
    : err.text
      ? err.text.replace(/\n?$/, '\n')
      : '';
  return { stdout, stderr, exitCode: err.exitCode };
}

export { toTugError } from '../contract/errors.js';
