import { describe, expect, it } from 'vitest';
import { validatePlan } from '../../src/plan/validate.js';
import { doc, parse } from './helpers.js';

/** A clean step: no warnings of its own. */
function cleanStep(id: string, deps = 'none', level = 4): string {
  return doc`
    ${'#'.repeat(level)} Step ${id}: Step ${id}

    **Depends on:** ${deps}

    **References:** (#context)

    **Tasks:**
    - [ ] t

    **Tests:**
    - [ ] t

    **Checkpoint:**
    - [ ] c
  `;
}

const HEAD = doc`
  ## Plan
  ### Context {#context}

  | Field | Value |
  |---|---|
  | Owner | ada |
  | Status | active |
  | Last updated | 2026-03-01 |

  ### Execution Steps
`;

function check(body: string, level: 'lenient' | 'normal' | 'strict' = 'normal') {
  return validatePlan(parse(HEAD + body), level);
}

describe('validation levels', () => {
  const body =
    cleanStep('1') +
    '\n#### Step 2: No tests\n\n**Depends on:** #nope\n\n**References:** (#context)\n\n**Tasks:**\n- [ ] t\n\n**Checkpoint:**\n- [ ] c\n';

  it('reports only errors at lenient, and the plan is invalid only through errors', () => {
    const r = check(body, 'lenient');
    expect(r.diagnostics.map((d) => d.code)).toEqual(['E010']);
    expect(r.valid).toBe(false);
    const ok = check(cleanStep('1') + '\n#### Step 2: Bare\n', 'lenient');
    expect(ok).toEqual({ valid: true, diagnostics: [] });
  });

  it('reports errors and warnings at normal, where warnings do not invalidate', () => {
    expect(check(body, 'normal').diagnostics.map((d) => d.code)).toEqual(['W002', 'E010']);
    const warnOnly = check(cleanStep('1') + '\n#### Step 2: Bare\n', 'normal');
    expect(warnOnly.valid).toBe(true);
    expect(warnOnly.diagnostics.map((d) => d.code)).toEqual(['W001', 'W002', 'W003', 'W004']);
  });

  it('adds info at strict and treats warnings as errors', () => {
    const implicit = validatePlan(
      parse(
        HEAD +
          '#### Step 1: A\n\n**References:** (#context)\n\n**Tasks:**\n- [ ] t\n\n**Tests:**\n- [ ] t\n\n**Checkpoint:**\n- [ ] c\n',
      ),
      'strict',
    );
    expect(implicit).toEqual({
      valid: true,
      diagnostics: [expect.objectContaining({ code: 'I001', severity: 'info' })],
    });
    expect(check(cleanStep('1') + '\n#### Step 2: Bare\n', 'strict').valid).toBe(false);
    expect(validatePlan(parse(HEAD + '#### Step 1: A\n'), 'normal').diagnostics.map((d) => d.code)).not.toContain(
      'I001',
    );
  });

  it('sorts diagnostics by line, unlocated ones first', () => {
    const r = validatePlan(parse('#### Step 1: A\n\n**Depends on:** #x\n#### Step 2: B\n'), 'strict');
    const lines = r.diagnostics.map((d) => d.line ?? 0);
    expect(lines).toEqual([...lines].sort((a, b) => a - b));
    expect(r.diagnostics[0]!.line).toBeUndefined();
  });
});

describe('errors', () => {
  it('E006 names both lines of a duplicate anchor', () => {
    const r = check(cleanStep('1') + cleanStep('1'));
    const e = r.diagnostics.find((d) => d.code === 'E006')!;
    expect(e.message).toBe('duplicate anchor "step-1" on line 25 (first defined on line 11)');
    expect(e.line).toBe(25);
  });

  it('E007 flags explicit anchors of an invalid form, on steps too', () => {
    const r = check(cleanStep('1').replace('Step 1: Step 1', 'Step 1: Step 1 {#Step_1}'));
    expect(r.diagnostics.map((d) => [d.code, d.anchor])).toEqual([['E007', 'Step_1']]);
  });

  it('E011 shows the declared cycle path, including a self-dependency, one diagnostic per cycle', () => {
    const r = check(
      cleanStep('1', '#step-3') + cleanStep('2', '#step-1') + cleanStep('3', '#step-2') + cleanStep('4', '#step-4'),
    );
    const e = r.diagnostics.filter((d) => d.code === 'E011');
    expect(e.map((d) => d.message)).toEqual([
      'dependency cycle: step-1 -> step-3 -> step-2 -> step-1',
      'dependency cycle: step-4 -> step-4',
    ]);
    expect(e[0]!.line).toBe(13);
  });

  it('E011 finds cycles that appear only after lifting, without repeating declared ones', () => {
    const lifted = check(
      cleanStep('1', '#step-3') + cleanStep('2', '#step-1') + cleanStep('3') + cleanStep('3.1', '#step-2', 5),
    );
    expect(lifted.diagnostics.filter((d) => d.code === 'E011').map((d) => d.message)).toEqual([
      'dependency cycle after lifting substep dependencies to their top-level steps: step-1 -> step-3 -> step-2 -> step-1',
    ]);
    const declared = check(cleanStep('1', '#step-2-1') + cleanStep('2') + cleanStep('2.1', '#step-1', 5));
    expect(declared.diagnostics.filter((d) => d.code === 'E011').map((d) => d.message)).toEqual([
      'dependency cycle: step-1 -> step-2-1 -> step-1',
    ]);
  });

  it('E012 flags a dependency on an ancestor or a descendant', () => {
    const r = check(cleanStep('1', '#step-1-1-1') + cleanStep('1.1', 'none', 5) + cleanStep('1.1.1', '#step-1', 6));
    expect(r.diagnostics.filter((d) => d.code === 'E012').map((d) => d.message)).toEqual([
      'step-1 depends on its own descendant step-1-1-1',
      'step-1-1-1 depends on its own ancestor step-1',
    ]);
  });

  it('E020 flags refactor items without exactly one code span, unparsable commands and unknown or unsupported ops', () => {
    const refactors = doc`
      **Refactors:**
      - [ ] no span
      - [ ] \`one\` \`two\`
      - [ ] \`rename-symbol --symbol a.ts::f\`
      - [ ] \`frobnicate --file a.ts\`
      - [ ] \`extract-function --at a.ts:1:1\`
      - [ ] \`organize-imports --file a.ts --apply\`
      - [ ] \`rename-symbol --symbol "a b.ts::f" --to g --verify tests\`
    `;
    const r = check(cleanStep('1') + '\n' + refactors);
    const e = r.diagnostics.filter((d) => d.code === 'E020');
    expect(e.map((d) => d.line)).toEqual([27, 28, 29, 30, 31, 32]);
    expect(e[2]!.message).toContain('needs --to');
    expect(e[3]!.message).toContain('unknown operation');
    expect(e[4]!.message).toContain('not supported');
    expect(e[5]!.message).toContain('--apply');
    expect(r.diagnostics.map((d) => d.code)).not.toContain('W008');
  });

  it("E020 flags a new name the file's language refuses, as the kernel would at run time", () => {
    const refactors = `
**Refactors:**
- [ ] \`rename-symbol --symbol src/util.ts::Client --to class\`
- [ ] \`rename-symbol --symbol pkg/core.py::compute --to lambda\`
- [ ] \`rename-symbol --at src/lib.rs:3:5 --expect f --to 9lives\`
- [ ] \`rename-symbol --symbol src/util.ts::Client --to Klass\`
- [ ] \`rename-symbol --symbol notes.txt::x --to class\`
    `;
    const r = check(cleanStep('1') + '\n' + refactors);
    const e = r.diagnostics.filter((d) => d.code === 'E020');
    expect(e.map((d) => d.message)).toEqual([
      'step-1 Refactors item 0: invalid new name "class": reserved_word (in `rename-symbol --symbol src/util.ts::Client --to class`)',
      'step-1 Refactors item 1: invalid new name "lambda": reserved_word (in `rename-symbol --symbol pkg/core.py::compute --to lambda`)',
      'step-1 Refactors item 2: invalid new name "9lives": not_an_identifier (in `rename-symbol --at src/lib.rs:3:5 --expect f --to 9lives`)',
    ]);
  });
});

describe('warnings', () => {
  it('W005 flags undefined decisions and anchors cited in References, but not issue numbers', () => {
    const p = HEAD.replace('### Context {#context}', '### Context {#context}\n#### [D01] Defined (DECIDED)');
    const r = validatePlan(
      parse(p + cleanStep('1').replace('(#context)', '[D01], [D02] x, (#context, #missing) see #123')),
      'normal',
    );
    expect(r.diagnostics.map((d) => d.message)).toEqual([
      'step-1 cites [D02], which is never defined',
      'step-1 cites #missing, which is not defined',
    ]);
  });

  it('W006 flags missing or placeholder Owner, Status and Last updated', () => {
    const r = validatePlan(
      parse(
        '| Field | Value |\n|---|---|\n| Owner | <name> |\n| Status | |\n\n' +
          cleanStep('1').replace('(#context)', 'x'),
      ),
      'normal',
    );
    expect(r.diagnostics.map((d) => d.message)).toEqual([
      'metadata Owner is a placeholder (<name>)',
      'metadata Status is missing',
      'metadata Last updated is missing',
    ]);
  });

  it('W007 flags a dependency on a substep of another top-level step', () => {
    const r = check(cleanStep('1') + cleanStep('1.1', 'none', 5) + cleanStep('2', '#step-1-1'));
    expect(r.diagnostics.map((d) => [d.code, d.anchor])).toEqual([['W007', 'step-2']]);
  });

  it('W008 flags --at selectors in refactors', () => {
    const r = check(cleanStep('1') + '\n**Refactors:**\n- [ ] `rename-symbol --at a.ts:1:5 --expect f --to g`\n');
    expect(r.diagnostics.map((d) => d.code)).toEqual(['W008']);
  });

  it('passes the parser diagnostics through', () => {
    const r = check(
      cleanStep('1') + '\n- [ ] stray after Checkpoint? no: still a checkpoint\n\n**Commit:** `x`\n\n- [ ] stray\n',
    );
    expect(r.diagnostics.map((d) => d.code)).toEqual(['P008']);
  });
});

describe('scale', () => {
  it('validates a 5000-step dependency chain with a cycle without overflowing the stack', () => {
    let body = '';
    for (let i = 1; i <= 5000; i++) body += `### Step ${i}: s\n\n**Depends on:** #step-${i === 5000 ? 1 : i + 1}\n`;
    const r = validatePlan(parse(body), 'lenient');
    expect(r.diagnostics.map((d) => d.code)).toEqual(['E011']);
    expect(r.diagnostics[0]!.message).toMatch(/^dependency cycle: step-1 -> step-2 -> .* -> step-5000 -> step-1$/);
  });
});

describe('duplicate step anchors', () => {
  const lenient = (body: string) =>
    check(body, 'lenient').diagnostics.map((d) => [d.code, d.line, d.message.replace(/ \(.*/, '')]);

  it('are reported as E006, not as the cycle the shared anchor would make (implicit order)', () => {
    const body = '#### Step 1: A {#step-1}\n\n#### Step 2: B {#step-1}\n';
    expect(lenient(body)).toEqual([['E006', 13, 'duplicate anchor "step-1" on line 13']]);
  });

  it('are reported as E006 when the duplicate depends on the first step of that anchor', () => {
    const body = cleanStep('1') + '\n#### Step 2: B {#step-1}\n\n**Depends on:** #step-1\n';
    expect(lenient(body).map(([code]) => code)).toEqual(['E006']);
  });

  it('keep real cycles among the first steps of each anchor', () => {
    const body =
      '#### Step 1: A {#step-1}\n\n**Depends on:** #step-2\n\n#### Step 2: B {#step-2}\n\n**Depends on:** #step-1\n\n#### Step 3: C {#step-2}\n';
    expect(lenient(body).map(([code]) => code)).toEqual(['E011', 'E006']);
  });
});
