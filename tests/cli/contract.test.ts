import { describe, expect, it } from 'vitest';
import { expectError, runCli, runJson } from '../helpers/cli.js';
import { tempDir } from '../helpers/repo.js';

describe('output contract', () => {
  it('reports an unknown command as UnknownCommand (exit 2) with one JSON document', () => {
    const r = runJson('tugcode', ['no-such-command'], { cwd: tempDir() });
    expectError(r, 'UnknownCommand', 2);
  });

  it('reports an unknown flag as InvalidArgument (exit 2), never a commander usage dump', () => {
    const r = runJson('schema', ['schema', 'validate', '--no-such-flag'], { cwd: tempDir() });
    expectError(r, 'InvalidArgument', 2);
    expect(r.json.error.message).toContain('--no-such-flag');
  });

  it('prints the JSON Schema of a command output', () => {
    const r = runJson('schema', ['schema', 'validate'], { cwd: tempDir() });
    expect(r.json.json_schema.type).toBe('object');
  });

  it('prints help as text with exit 0', () => {
    const r = runCli(['--help'], { cwd: tempDir() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: tugcode');
  });
});

describe('unexpected exceptions', () => {
  it('become InternalError (exit 10) with one JSON envelope and no stack on stdout', () => {
    const r = runJson('schema', ['schema', 'validate'], { cwd: tempDir(), env: { TUGCODE_FAULT: 'exception' } });
    expectError(r, 'InternalError', 10);
    expect(r.json.error.details.stack).toBeUndefined();
    expect(r.stderr).toBe(
      'tugcode: InternalError: internal error: injected fault\nhint: this is a bug in tugcode; rerun with --verbose and report it\n',
    );
  });

  it('carry the stack in details.stack under --verbose', () => {
    const r = runJson('schema', ['schema', 'validate', '--verbose'], {
      cwd: tempDir(),
      env: { TUGCODE_FAULT: 'exception' },
    });
    expectError(r, 'InternalError', 10);
    expect(r.json.error.details.stack).toContain('injected fault');
  });

  it('print text errors on stderr only, as one line plus a hint', () => {
    const r = runCli(['no-such-command'], { cwd: tempDir() });
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('tugcode: UnknownCommand: unknown command "no-such-command"\nhint: tugcode --help\n');
  });
});
