/**
 * A refactor row's `op_text` → the kernel's OpSpec plus the plan-only options (docs/kernel.md §7.1):
 * tokenized shell-style, parsed by the kernel's own op parser, so a bad op_text fails exactly as the
 * kernel CLI would (`InvalidArgument` / `UnsupportedOperation`, exit 2).
 */
import { KernelError, parseOp, parseOpText, tokenizeShell, type OpSpec, type VerifyMode } from '../kernel/light.js';

export interface RowOp {
  op: OpSpec;
  verify?: VerifyMode | undefined;
  test_command?: string[] | undefined;
  allow_large: boolean;
}

export function parseRowOp(opText: string): RowOp {
  const tok = tokenizeShell(opText);
  if (!tok.ok)
    throw new KernelError('InvalidArgument', `op_text: ${tok.reason}`, {
      argument: 'op_text',
      value: opText,
      reason: 'syntax',
    });
  const { op, verify, testCommand } = parseOp(tok.tokens);
  const full = parseOpText(opText);
  return { op, verify, test_command: testCommand, allow_large: full.ok ? Boolean(full.args.allow_large) : false };
}
