/**
 * The implementation log (04-git.md §4): one file per step under
 * `.tugtool/implementation-log/<slug>/<step-anchor>.md`, written by `tugcode commit`, so parallel step
 * commits never touch the same path; `.tugtool/tugplan-implementation-log.md` is an index that
 * `tugcode merge` regenerates from those files. Nothing is rotated.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { IMPLEMENTATION_LOG_INDEX } from './templates.js';

export const LOG_DIR = '.tugtool/implementation-log';
export const LOG_INDEX = '.tugtool/tugplan-implementation-log.md';

export interface LogEntryInput {
  planPath: string;
  slug: string;
  stepAnchor: string;
  stepTitle: string | null;
  date: string;
  summary: string;
  filesChanged: string[];
}

export function entryPath(slug: string, stepAnchor: string): string {
  return `${LOG_DIR}/${slug}/${stepAnchor}.md`;
}

export function renderEntry(e: LogEntryInput): string {
  const lines = [
    `# ${e.stepAnchor}${e.stepTitle ? `: ${e.stepTitle}` : ''}`,
    '',
    `- Plan: ${e.planPath}`,
    `- Step: ${e.stepAnchor}`,
    `- Date: ${e.date}`,
    '',
    '## Summary',
    '',
    e.summary.replace(/\r\n/g, '\n').replace(/\s+$/, ''),
    '',
    '## Files changed',
    '',
    ...(e.filesChanged.length ? e.filesChanged.map((f) => `- \`${f}\``) : ['- (none)']),
    '',
  ];
  return lines.join('\n');
}

/** Write a file atomically (temp file in the same directory + rename). */
export function writeFileAtomic(abs: string, text: string): void {
  mkdirSync(dirname(abs), { recursive: true });
  const tmp = join(dirname(abs), `.${process.pid}.${Date.now().toString(36)}.tmp`);
  writeFileSync(tmp, text);
  renameSync(tmp, abs);
}

/** Writes the entry under `root` (a work tree); returns its repo-relative path. */
export function writeEntry(root: string, e: LogEntryInput): string {
  const rel = entryPath(e.slug, e.stepAnchor);
  writeFileAtomic(join(root, rel), renderEntry(e));
  return rel;
}

interface IndexRow {
  slug: string;
  anchor: string;
  title: string | null;
  date: string | null;
  path: string;
}

function rowOf(path: string, text: string): IndexRow | null {
  const m = new RegExp(`^${LOG_DIR}/([^/]+)/([^/]+)\\.md$`).exec(path);
  if (!m) return null;
  const head = /^# ([^:\n]+)(?::\s*(.*))?$/m.exec(text);
  const date = /^- Date: (.+)$/m.exec(text);
  return { slug: m[1]!, anchor: m[2]!, title: head?.[2]?.trim() || null, date: date?.[1]?.trim() ?? null, path };
}

/** The index text for these entry files (`path` repo-relative, `text` their content). */
export function renderIndex(entries: { path: string; text: string }[]): string {
  const rows = entries.map((e) => rowOf(e.path, e.text)).filter((r): r is IndexRow => r !== null);
  const bySlug = new Map<string, IndexRow[]>();
  for (const r of rows) bySlug.set(r.slug, [...(bySlug.get(r.slug) ?? []), r]);
  const out = [IMPLEMENTATION_LOG_INDEX.replace(/\s+$/, ''), ''];
  for (const slug of [...bySlug.keys()].sort()) {
    out.push(`## ${slug}`, '');
    const list = bySlug
      .get(slug)!
      .sort((a, b) => (a.date ?? '').localeCompare(b.date ?? '') || a.anchor.localeCompare(b.anchor));
    for (const r of list) {
      const rel = r.path.slice('.tugtool/'.length);
      out.push(`- ${r.date ? `${r.date.slice(0, 10)} ` : ''}[${r.anchor}${r.title ? `: ${r.title}` : ''}](${rel})`);
    }
    out.push('');
  }
  return out.join('\n');
}
