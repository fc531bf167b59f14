import { describe, it, expect } from 'vitest';
import { readFileSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { decodeFile, LineIndex, lspToUtf16 } from '../../src/kernel/patch/positions.js';
import { buildPatchSet, type ByteEdit } from '../../src/kernel/patch/ir.js';
import { resolvePatch, writeResolved, recoverJournal, realIo, type ApplyIo } from '../../src/kernel/patch/apply.js';
import { unifiedDiff } from '../../src/kernel/patch/diff.js';
import { KernelError } from '../../src/kernel/errors.js';
import { tempWs, readTree, copyTree } from './helpers.js';

function filesOf(ws: string, paths: string[]) {
  return new Map(paths.map((p) => [p, decodeFile(p, readFileSync(join(ws, p)))!]));
}

function code(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as KernelError).code;
  }
  return 'none';
}

function diffFor(ws: string, edits: ByteEdit[]) {
  const paths = [...new Set(edits.map((e) => e.path))];
  const files = filesOf(ws, paths);
  const ps = buildPatchSet('snap_x', files, edits);
  const diff = unifiedDiff(
    ps.files.map((f) => ({
      path: f.path,
      before: files.get(f.path)!.bytes,
      edits: ps.edits.filter((e) => e.path === f.path),
    })),
  );
  return { ps, diff, files };
}

/** `git apply` the diff on a copy and compare with what the apply engine writes. */
function checkDiffApplies(ws: string, edits: ByteEdit[]) {
  const { ps, diff } = diffFor(ws, edits);
  const pristine = copyTree(ws);
  writeFileSync(join(pristine, '..', 'p.patch'), diff);
  spawnSync('git', ['init', '-q'], { cwd: pristine });
  const chk = spawnSync('git', ['apply', '--check', '-'], { cwd: pristine, input: diff, encoding: 'utf8' });
  expect(chk.stderr).toBe('');
  expect(chk.status).toBe(0);
  spawnSync('git', ['apply', '-'], { cwd: pristine, input: diff });
  writeResolved(ws, resolvePatch(ws, ps));
  expect(readTree(pristine)).toEqual(readTree(ws));
  return diff;
}

describe('positions', () => {
  it('maps UTF-16 offsets after 2-, 3- and 4-byte characters to UTF-8 bytes', () => {
    const f = decodeFile('a.ts', Buffer.from('é中😀x\nyé z'))!;
    const idx = new LineIndex(f);
    expect(idx.toByte(f.text.indexOf('x'))).toBe(2 + 3 + 4);
    expect(idx.toByte(f.text.indexOf('z'))).toBe(11 + 1 + 2 + 1);
    expect(idx.lineCol(idx.toByte(f.text.indexOf('z')))).toEqual({ line: 2, col: 5 });
    expect(() => idx.toByte(f.text.indexOf('😀') + 1)).toThrow(KernelError);
    expect(idx.toUtf16(9)).toBe(f.text.indexOf('x'));
    expect(idx.toUtf16(1)).toBeNull();
  });

  it('shifts spans by 3 in BOM files and hides the BOM from backends', () => {
    const f = decodeFile('a.ts', Buffer.from('\ufefflet a = 1;\n'))!;
    expect(f.bom).toBe(3);
    expect(f.text.startsWith('let')).toBe(true);
    const idx = new LineIndex(f);
    expect(idx.toByte(4)).toBe(7);
    expect(idx.lineCol(7)).toEqual({ line: 1, col: 5 });
    expect(idx.fromLineCol(1, 5)).toEqual({ byte: 7 });
  });

  it('never points line/col at the \\r of a CRLF and rejects positions past the line end', () => {
    const f = decodeFile('a.ts', Buffer.from('ab\r\ncd\r\n'))!;
    const idx = new LineIndex(f);
    expect(idx.lineCount).toBe(2);
    expect(idx.lineCol(4)).toEqual({ line: 2, col: 1 });
    expect(idx.fromLineCol(1, 4)).toEqual({ error: 'col' });
    expect(idx.fromLineCol(3, 1)).toEqual({ error: 'line' });
    expect(idx.fromLineCol(1, 3)).toEqual({ byte: 2 });
  });

  it('converts LSP positions in UTF-16 and UTF-8 encodings', () => {
    const t = 'a\r\né😀b\n';
    expect(lspToUtf16(t, 1, 3, 'utf-16')).toBe(t.indexOf('b'));
    expect(lspToUtf16(t, 1, 6, 'utf-8')).toBe(t.indexOf('b'));
    expect(lspToUtf16(t, 1, 99, 'utf-16')).toBe(t.indexOf('\n', 3));
  });
});

describe('patch set construction', () => {
  const ws = tempWs({ 'a.ts': 'const foo = 1;\nfoo + foo;\n' });
  const files = filesOf(ws, ['a.ts']);

  it('sorts edits and merges exact duplicates', () => {
    const ps = buildPatchSet('s', files, [
      { path: 'a.ts', start: 21, end: 24, newText: 'bar' },
      { path: 'a.ts', start: 6, end: 9, newText: 'bar' },
      { path: 'a.ts', start: 6, end: 9, newText: 'bar' },
    ]);
    expect(ps.edits.map((e) => [e.start, e.seq, e.line, e.col, e.kind])).toEqual([
      [6, 0, 1, 7, 'replace'],
      [21, 1, 2, 7, 'replace'],
    ]);
  });

  it('rejects overlapping, nested and same-offset inserts but accepts touching edits', () => {
    expect(
      code(() =>
        buildPatchSet('s', files, [
          { path: 'a.ts', start: 6, end: 9, newText: 'x' },
          { path: 'a.ts', start: 8, end: 10, newText: 'y' },
        ]),
      ),
    ).toBe('ConflictingEdits');
    expect(
      code(() =>
        buildPatchSet('s', files, [
          { path: 'a.ts', start: 6, end: 12, newText: 'x' },
          { path: 'a.ts', start: 7, end: 8, newText: 'y' },
        ]),
      ),
    ).toBe('ConflictingEdits');
    expect(
      code(() =>
        buildPatchSet('s', files, [
          { path: 'a.ts', start: 6, end: 6, newText: 'x' },
          { path: 'a.ts', start: 6, end: 6, newText: 'y' },
        ]),
      ),
    ).toBe('ConflictingEdits');
    expect(
      code(() =>
        buildPatchSet('s', files, [
          { path: 'a.ts', start: 6, end: 9, newText: 'x' },
          { path: 'a.ts', start: 9, end: 10, newText: 'y' },
        ]),
      ),
    ).toBe('none');
    expect(code(() => buildPatchSet('s', files, [{ path: 'a.ts', start: 3, end: 3, newText: '' }]))).toBe(
      'InternalError',
    );
    expect(code(() => buildPatchSet('s', files, [{ path: 'a.ts', start: 3, end: 99, newText: 'x' }]))).toBe(
      'InternalError',
    );
  });

  it('gives the same diff and JSON for the same edits', () => {
    const e: ByteEdit[] = [{ path: 'a.ts', start: 6, end: 9, newText: 'bar' }];
    expect(JSON.stringify(diffFor(ws, e).ps)).toBe(JSON.stringify(diffFor(ws, e).ps));
    expect(diffFor(ws, e).diff).toBe(diffFor(ws, e).diff);
  });
});

describe('apply preconditions', () => {
  it('reports every changed file as SnapshotMismatch and an edited span as AnchorMismatch', () => {
    const ws = tempWs({ 'a.ts': 'let foo = 1;\n', 'b.ts': 'foo;\n' });
    const ps = buildPatchSet('s', filesOf(ws, ['a.ts', 'b.ts']), [
      { path: 'a.ts', start: 4, end: 7, newText: 'bar' },
      { path: 'b.ts', start: 0, end: 3, newText: 'bar' },
    ]);
    writeFileSync(join(ws, 'a.ts'), 'let fox = 1;\n');
    writeFileSync(join(ws, 'b.ts'), 'fox;\n');
    try {
      resolvePatch(ws, ps);
      expect.unreachable();
    } catch (e) {
      expect((e as KernelError).code).toBe('SnapshotMismatch');
      expect((e as KernelError).details.changed_files).toEqual(['a.ts', 'b.ts']);
    }
    const ps2 = { ...ps, files: ps.files.map((f) => ({ ...f, before_sha256: require_sha(join(ws, f.path)) })) };
    expect(code(() => resolvePatch(ws, ps2))).toBe('AnchorMismatch');
  });
});

function require_sha(p: string): string {
  return createHashHex(readFileSync(p));
}
import { createHash } from 'node:crypto';
function createHashHex(b: Uint8Array) {
  return createHash('sha256').update(b).digest('hex');
}

describe('atomic apply', () => {
  const original = { 'a.ts': 'let foo = 1;\n', 'b/b.ts': 'foo();\nfoo();\n', 'c.ts': 'export { foo };\n' };
  const edits: ByteEdit[] = [
    { path: 'a.ts', start: 4, end: 7, newText: 'bar' },
    { path: 'b/b.ts', start: 0, end: 3, newText: 'bar' },
    { path: 'b/b.ts', start: 7, end: 10, newText: 'bar' },
    { path: 'c.ts', start: 9, end: 12, newText: 'bar' },
  ];

  function failingIo(k: number, counter: { n: number }): ApplyIo {
    const wrap = <F extends (...a: any[]) => any>(name: string, f: F) =>
      ((...a: any[]) => {
        counter.n++;
        if (counter.n === k) throw new Error(`injected ${name} failure`);
        return f(...a);
      }) as F;
    return {
      ...realIo,
      writeFile: wrap('write', realIo.writeFile),
      fsync: wrap('fsync', realIo.fsync),
      rename: wrap('rename', realIo.rename),
      chmod: wrap('chmod', realIo.chmod),
    };
  }

  it('leaves every file byte-identical when any write, fsync, chmod or rename fails', () => {
    // Count the calls of a successful apply, then fail each one in turn.
    const probe = tempWs(original);
    const session = join(probe, '.tug');
    const counter = { n: 0 };
    const ps0 = buildPatchSet('s', filesOf(probe, Object.keys(original)), edits);
    writeResolved(probe, resolvePatch(probe, ps0), { io: failingIo(-1, counter), sessionDir: session });
    const total = counter.n;
    expect(total).toBeGreaterThan(10);
    for (let k = 1; k <= total; k++) {
      const ws = tempWs(original);
      const sess = join(ws, '.tug');
      const before = readTree(ws);
      const ps = buildPatchSet('s', filesOf(ws, Object.keys(original)), edits);
      const resolved = resolvePatch(ws, ps);
      let err: KernelError | undefined;
      try {
        writeResolved(ws, resolved, { io: failingIo(k, { n: 0 }), sessionDir: sess });
      } catch (e) {
        err = e as KernelError;
      }
      expect(err?.code, `call ${k}`).toBe('WriteError');
      expect(err?.details.rolled_back).toBe(true);
      expect(readTree(ws), `call ${k}`).toEqual(before);
      expect(existsSync(join(sess, 'apply.journal.json'))).toBe(false);
      const tmps = [...readdirSync(ws), ...readdirSync(join(ws, 'b'))].filter((f) => f.endsWith('.tmp'));
      expect(tmps).toEqual([]);
    }
  });

  it('recovers an interrupted apply from the journal, and refuses an unknown state', () => {
    const ws = tempWs(original);
    const sess = join(ws, '.tug');
    const before = readTree(ws);
    const ps = buildPatchSet('s', filesOf(ws, Object.keys(original)), edits);
    const resolved = resolvePatch(ws, ps);
    // Simulate a crash after 2 renames: the journal and backups stay.
    let renames = 0;
    const crashing: ApplyIo = {
      ...realIo,
      rename: (a, b) => {
        if (++renames === 3) throw Object.assign(new Error('crash'), { crash: true });
        realIo.rename(a, b);
      },
      unlink: (p) => {
        if (renames >= 3) return; // the process "died": no cleanup
        realIo.unlink(p);
      },
      writeFile: (p, d) => {
        if (renames >= 3) throw new Error('dead');
        realIo.writeFile(p, d);
      },
    };
    expect(() => writeResolved(ws, resolved, { io: crashing, sessionDir: sess })).toThrow();
    expect(readTree(ws)).not.toEqual(before);
    expect(recoverJournal(ws, sess)).toBe(true);
    expect(readTree(ws)).toEqual(before);
    expect(existsSync(join(sess, 'apply.journal.json'))).toBe(false);

    const ws2 = tempWs(original);
    const sess2 = join(ws2, '.tug');
    const r2 = resolvePatch(ws2, buildPatchSet('s', filesOf(ws2, Object.keys(original)), edits));
    renames = 0;
    expect(() => writeResolved(ws2, r2, { io: crashing, sessionDir: sess2 })).toThrow();
    writeFileSync(join(ws2, 'a.ts'), 'something else\n');
    expect(code(() => recoverJournal(ws2, sess2))).toBe('SessionCorrupt');
    expect(existsSync(join(sess2, 'apply.journal.json'))).toBe(true);
  });
});

describe('unified diff', () => {
  it('passes git apply --check and matches the applied bytes', () => {
    const ws = tempWs({ 'a.ts': Array.from({ length: 20 }, (_, i) => `line${i} foo\n`).join('') });
    const t = readFileSync(join(ws, 'a.ts'), 'utf8');
    const at = (line: number) => t.indexOf(`line${line} foo`) + `line${line} `.length;
    const diff = checkDiffApplies(
      ws,
      [0, 3, 14, 19].map((l) => ({ path: 'a.ts', start: at(l), end: at(l) + 3, newText: 'barbaz' })),
    );
    expect(diff.match(/^@@/gm)?.length).toBe(2);
    expect(diff).toContain('@@ -1,7 +1,7 @@\n');
    expect(diff).toContain('@@ -12,9 +12,9 @@\n');
  });

  it('keeps CRLF and marks a missing final newline', () => {
    const ws = tempWs({ 'a.ts': '\ufefflet naïve = 1;\r\nnaïve + 😀;\r\nnaïve' });
    const t = readFileSync(join(ws, 'a.ts'));
    const idxs: number[] = [];
    for (let i = t.indexOf('naïve'); i !== -1; i = t.indexOf('naïve', i + 1)) idxs.push(i);
    const diff = checkDiffApplies(
      ws,
      idxs.map((i) => ({ path: 'a.ts', start: i, end: i + 6, newText: 'simple' })),
    );
    expect(diff).toContain('\r\n');
    expect(diff).toContain('\\ No newline at end of file\n');
  });

  it('handles inserts at the end, deleted newlines and empty files', () => {
    const ws = tempWs({ 'a.ts': 'a\nb\nc\n', 'e.ts': '', 'j.ts': 'x\ny\nz\n' });
    checkDiffApplies(ws, [
      { path: 'a.ts', start: 6, end: 6, newText: 'd\n' },
      { path: 'e.ts', start: 0, end: 0, newText: 'new' },
      { path: 'j.ts', start: 1, end: 2, newText: '' },
    ]);
  });

  it('shows deleted whole lines without the untouched line after them (organize-imports)', () => {
    // Deleting lines 2-3 ends at the start of line 4, which stays as it was and is context, not -/+.
    const src = "import { a } from './a';\nimport { b } from './b';\nimport { c } from './c';\nexport const q = a;\n";
    const ws = tempWs({ 'c.ts': src });
    const start = src.indexOf('import { b }');
    const diff = checkDiffApplies(ws, [{ path: 'c.ts', start, end: src.indexOf('export'), newText: '' }]);
    expect(diff).toContain(
      "@@ -1,4 +1,2 @@\n import { a } from './a';\n-import { b } from './b';\n-import { c } from './c';\n export const q = a;\n",
    );
    // Replacing whole lines with whole lines is the same.
    const ws2 = tempWs({ 'c.ts': src });
    const diff2 = diffFor(ws2, [
      { path: 'c.ts', start, end: src.indexOf('export'), newText: "import { bc } from './bc';\n" },
    ]).diff;
    expect(diff2).not.toContain('-export const q = a;');
  });
});
