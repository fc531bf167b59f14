import { describe, expect, it } from 'vitest';
import { parseOpText, tokenizeShell } from '../../src/kernel/opspec.js';

describe('tokenizeShell', () => {
  it('splits on whitespace and honours quotes and backslashes without expanding anything', () => {
    expect(tokenizeShell(`a  "b c" 'd $HOME' e\\ f "g\\"h" '' "$X" \`x\``)).toEqual({
      ok: true,
      tokens: ['a', 'b c', 'd $HOME', 'e f', 'g"h', '', '$X', '`x`'],
    });
    expect(tokenizeShell(`pre"mid"'post'`)).toEqual({ ok: true, tokens: ['premidpost'] });
    expect(tokenizeShell('"a\\nb"')).toEqual({ ok: true, tokens: ['a\\nb'] });
    expect(tokenizeShell('   ')).toEqual({ ok: true, tokens: [] });
  });

  it('refuses unterminated quotes and a trailing backslash', () => {
    expect(tokenizeShell(`a "b`)).toEqual({ ok: false, reason: 'unterminated double quote' });
    expect(tokenizeShell(`a 'b`)).toEqual({ ok: false, reason: 'unterminated single quote' });
    expect(tokenizeShell('a \\')).toEqual({ ok: false, reason: 'trailing backslash' });
  });
});

describe('parseOpText', () => {
  it('parses rename-symbol with --symbol and --to', () => {
    expect(parseOpText('rename-symbol --symbol src/api/client.ts::Client.fetchAll --to fetchEverything')).toEqual({
      ok: true,
      op: 'rename-symbol',
      args: { symbol: { file: 'src/api/client.ts', name: 'Client.fetchAll' }, to: 'fetchEverything' },
    });
  });

  it('parses rename-symbol with --at FILE:LINE:COL split at the last two colons, and --expect', () => {
    expect(parseOpText('rename-symbol --at C:/x/a.py:12:5 --expect old --to new')).toEqual({
      ok: true,
      op: 'rename-symbol',
      args: { at: { file: 'C:/x/a.py', line: 12, col: 5 }, expect: 'old', to: 'new' },
    });
  });

  it('parses organize-imports with the default mode and explicit modes', () => {
    expect(parseOpText('organize-imports --file src/a.ts')).toEqual({
      ok: true,
      op: 'organize-imports',
      args: { file: 'src/a.ts', mode: 'all' },
    });
    expect(parseOpText('organize-imports --file=src/a.ts --mode remove-unused')).toMatchObject({
      ok: true,
      args: { mode: 'remove-unused' },
    });
  });

  it('accepts the plan options anywhere, before or after the operation name', () => {
    const r = parseOpText(
      `--verify tests rename-symbol --symbol a.ts::f --to g --safety safe --test-command '["npm","test"]' --allow-large`,
    );
    expect(r).toEqual({
      ok: true,
      op: 'rename-symbol',
      args: {
        symbol: { file: 'a.ts', name: 'f' },
        to: 'g',
        verify: 'tests',
        safety: 'strict',
        test_command: ['npm', 'test'],
        allow_large: true,
      },
    });
    expect(parseOpText('--to g rename-symbol --symbol a.ts::f')).toMatchObject({ ok: true, op: 'rename-symbol' });
  });

  it('refuses unsupported operations before looking at their arguments', () => {
    for (const op of ['move-symbol', 'change-signature', 'extract-function', 'extract-variable', 'inline-function']) {
      expect(parseOpText(`${op} --whatever`)).toEqual({
        ok: false,
        kind: 'unsupported_operation',
        op,
        reason: `operation ${op} is not supported`,
      });
    }
  });

  it.each([
    ['', 'no operation given'],
    ['frobnicate', 'unknown operation "frobnicate"'],
    ['rename-symbol --symbol a.ts::f', 'rename-symbol needs --to NEW'],
    ['rename-symbol --to g', 'rename-symbol needs --at FILE:LINE:COL or --symbol FILE::Name'],
    ['rename-symbol --at a.ts:1:1 --symbol a.ts::f --to g', 'give either --at or --symbol, not both'],
    ['rename-symbol --symbol a.ts::f --expect f --to g', '--expect is only valid with --at'],
    ['rename-symbol --at a.ts:0:1 --to g', '--at must be FILE:LINE:COL with 1-based line and col, got "a.ts:0:1"'],
    ['rename-symbol --at a.ts:1 --to g', '--at must be FILE:LINE:COL with 1-based line and col, got "a.ts:1"'],
    ['rename-symbol --symbol a.ts::F..g --to g', '--symbol must be FILE::Qualified.Name, got "a.ts::F..g"'],
    ['rename-symbol --symbol ::f --to g', '--symbol must be FILE::Qualified.Name, got "::f"'],
    ['rename-symbol --symbol a.ts::f --to g --apply', 'flag --apply is not allowed in rename-symbol'],
    ['rename-symbol --symbol a.ts::f --to g --workspace /x', 'flag --workspace is not allowed in rename-symbol'],
    ['organize-imports --file a.ts --session-dir /x', 'flag --session-dir is not allowed in organize-imports'],
    ['organize-imports --file a.ts --to x', 'flag --to is not allowed in organize-imports'],
    ['organize-imports --file a.ts --mode fancy', '--mode must be one of all, sort, remove-unused'],
    ['organize-imports', 'organize-imports needs --file FILE'],
    ['organize-imports --file a.ts extra', 'unexpected argument "extra"'],
    ['organize-imports --file a.ts --file b.ts', '--file given twice'],
    ['organize-imports --file a.ts --verify all', '--verify must be one of none, syntax, tests, typecheck'],
    ['organize-imports --file a.ts --safety yolo', '--safety must be strict, aggressive or safe'],
    ['organize-imports --file a.ts --test-command npm', '--test-command must be a non-empty JSON array of strings'],
    ['organize-imports --file a.ts --test-command []', '--test-command must be a non-empty JSON array of strings'],
    ['organize-imports --file a.ts --allow-large=yes', '--allow-large takes no value'],
    ['organize-imports --file', '--file needs a value'],
    ['organize-imports --file "a.ts', 'unterminated double quote'],
    ['organize-imports --file a\0.ts', 'op_text contains a NUL byte'],
  ])('refuses %j: %s', (text, reason) => {
    expect(parseOpText(text)).toMatchObject({ ok: false, reason });
  });
});
