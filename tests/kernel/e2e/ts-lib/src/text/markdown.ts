import { slugify } from './slug';

/** A small Markdown subset to HTML: headings (with ids), paragraphs, lists, code blocks, emphasis, links. */
export interface MarkdownOptions {
  /** Prefix for heading ids (`#sec-intro`). */
  idPrefix?: string;
  /** Called for every heading, e.g. to build a table of contents. */
  onHeading?: (level: number, text: string, id: string) => void;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ESCAPES[c]!);
}

/** Inline markup: `code`, **strong**, *em*, [text](url). Code spans are never processed further. */
export function inline(text: string): string {
  const parts = text.split(/(`[^`]*`)/);
  return parts
    .map((p) => {
      if (p.startsWith('`') && p.endsWith('`') && p.length >= 2) return `<code>${escapeHtml(p.slice(1, -1))}</code>`;
      return escapeHtml(p)
        .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
        .replace(/\*([^*]+)\*/g, '<em>$1</em>')
        .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, '<a href="$2">$1</a>');
    })
    .join('');
}

type Block =
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'para'; lines: string[] }
  | { kind: 'list'; ordered: boolean; items: string[] }
  | { kind: 'code'; lang: string; lines: string[] }
  | { kind: 'rule' };

/** Split source lines into blocks. */
export function blocks(source: string): Block[] {
  const out: Block[] = [];
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = /^```(\w*)\s*$/.exec(line);
    if (fence) {
      const body: string[] = [];
      for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
      out.push({ kind: 'code', lang: fence[1] ?? '', lines: body });
      continue;
    }
    const h = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      out.push({ kind: 'heading', level: h[1]!.length, text: h[2]! });
      continue;
    }
    if (/^(-{3,}|\*{3,})\s*$/.test(line)) {
      out.push({ kind: 'rule' });
      continue;
    }
    const item = /^\s*(?:([-*+])|(\d+)[.)])\s+(.*)$/.exec(line);
    if (item) {
      const ordered = item[2] !== undefined;
      const last = out[out.length - 1];
      if (last?.kind === 'list' && last.ordered === ordered) last.items.push(item[3]!);
      else out.push({ kind: 'list', ordered, items: [item[3]!] });
      continue;
    }
    if (line.trim() === '') continue;
    const last = out[out.length - 1];
    const prevBlank = i > 0 && lines[i - 1]!.trim() === '';
    if (last?.kind === 'para' && !prevBlank) last.lines.push(line.trim());
    else out.push({ kind: 'para', lines: [line.trim()] });
  }
  return out;
}

/** Render Markdown to HTML; heading ids are unique (`intro`, `intro-2`, …). */
export function markdown(source: string, o: MarkdownOptions = {}): string {
  const used = new Map<string, number>();
  const idFor = (text: string) => {
    const base = (o.idPrefix ?? '') + (slugify(text) || 'section');
    const n = (used.get(base) ?? 0) + 1;
    used.set(base, n);
    return n === 1 ? base : `${base}-${n}`;
  };
  return blocks(source)
    .map((b) => {
      switch (b.kind) {
        case 'heading': {
          const id = idFor(b.text);
          o.onHeading?.(b.level, b.text, id);
          return `<h${b.level} id="${id}">${inline(b.text)}</h${b.level}>`;
        }
        case 'para':
          return `<p>${inline(b.lines.join(' '))}</p>`;
        case 'list': {
          const tag = b.ordered ? 'ol' : 'ul';
          return `<${tag}>${b.items.map((it) => `<li>${inline(it)}</li>`).join('')}</${tag}>`;
        }
        case 'code':
          return `<pre><code${b.lang ? ` class="language-${b.lang}"` : ''}>${escapeHtml(b.lines.join('\n'))}</code></pre>`;
        case 'rule':
          return '<hr>';
      }
    })
    .join('\n');
}

/** A nested table of contents from the headings of a document. */
export function tableOfContents(source: string, maxLevel = 3): string {
  const lines: string[] = [];
  markdown(source, {
    onHeading: (level, text, id) => {
      if (level <= maxLevel) lines.push(`${'  '.repeat(level - 1)}- [${text}](#${id})`);
    },
  });
  return lines.join('\n');
}
