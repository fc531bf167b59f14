/**
 * `state graph` labels carry a step's title as it is, whatever its characters (docs/state.md §4): DOT
 * escapes a backslash and a double quote inside its quoted strings; Mermaid spells `"`, `<`, `>`, `&`, `#`
 * and a backslash as its entity codes, so no title is mangled or passes raw HTML into the label.
 */
import { describe, expect, it } from 'vitest';
import { planRepo, planText } from './helpers.js';
import { st } from './cli-helpers.js';

const TITLE_MD = 'Say "hi" <b> & \\\\ back #1';

function repo(): { root: string; title: string } {
  const plan = planText([
    { id: '1', title: TITLE_MD, tasks: ['One'] },
    { id: '2', title: 'Plain', tasks: ['Two'], deps: ['step-1'] },
  ]);
  const root = planRepo({ '.tugtool/tugplan-demo.md': plan });
  expect(st(root, ['init', 'demo']).json.status).toBe('ok');
  const title = st(root, ['show', 'demo']).json.plans[0].steps[0].title as string;
  expect(title).toContain('\\');
  expect(title).toContain('"hi"');
  return { root, title };
}

/** A DOT quoted string's text: `\\` and `\"` unescaped (its other backslash escapes are label escapes). */
function dotString(s: string): string {
  return s.replace(/\\(["\\])/g, '$1');
}

describe('state graph labels', () => {
  it('DOT: the title inside a quoted ID, backslash and double quote escaped', () => {
    const { root, title } = repo();
    const text = st(root, ['graph', 'demo', '--format', 'dot']).json.text as string;
    const m = /^ {2}"step-1" \[label="((?:[^"\\]|\\.)*)", fillcolor="[^"]*"\];$/m.exec(text);
    expect(m, text).not.toBeNull();
    expect(m![1]).toMatch(/\\n\[pending\]$/);
    expect(dotString(m![1]!.replace(/\\n\[pending\]$/, ''))).toBe(`Step 1: ${title}`);
  });

  it('Mermaid: entity codes for ", <, >, &, # and \\; nothing raw', () => {
    const { root, title } = repo();
    const text = st(root, ['graph', 'demo']).json.text as string;
    const m = /^ {2}step_1\["([^"]*)"\]:::pending$/m.exec(text);
    expect(m, text).not.toBeNull();
    const label = m![1]!;
    expect(label).not.toMatch(/<b>|[&\\]/);
    expect(label).toContain('#quot;hi#quot; #lt;b#gt; #amp; ');
    expect(label).toContain('#92;');
    expect(label.endsWith('<br/>pending')).toBe(true);
    const decoded = label
      .replace(/<br\/>pending$/, '')
      .replace(/#(\w+);/g, (_, c: string) =>
        /^\d+$/.test(c)
          ? String.fromCharCode(Number(c))
          : ({ quot: '"', lt: '<', gt: '>', amp: '&' } as Record<string, string>)[c]!,
      );
    expect(decoded).toBe(`Step 1: ${title}`);
  });
});
