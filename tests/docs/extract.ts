/**
 * Pulls command lines and field names out of the prose: markdown code (fences, indented blocks, code
 * spans) through markdown-it, shell scripts whole, and the plugin manifest's server command. Then checks a
 * `tugcode …` / `tug …` command line against the real CLI model (cli-model.ts).
 */
import { readFileSync } from 'node:fs';
import MarkdownIt from 'markdown-it';
import type { CliModel, CmdNode } from './cli-model.js';

export interface CodeText {
  file: string;
  text: string;
  inline: boolean;
  /** A fenced block's info string (`json`, `bash`, …). */
  lang: string;
}

const md = new MarkdownIt();

export function codeOf(file: string, rel: string): CodeText[] {
  const src = readFileSync(file, 'utf8');
  if (rel.endsWith('.sh')) return [{ file: rel, text: src, inline: false, lang: 'bash' }];
  if (rel.endsWith('.json')) {
    const out: CodeText[] = [];
    const walk = (v: unknown): void => {
      if (!v || typeof v !== 'object') return;
      const o = v as Record<string, unknown>;
      if (typeof o.command === 'string' && Array.isArray(o.args))
        out.push({ file: rel, text: [o.command, ...(o.args as string[])].join(' '), inline: false, lang: 'bash' });
      Object.values(o).forEach(walk);
    };
    walk(JSON.parse(src));
    return out;
  }
  const out: CodeText[] = [];
  const walk = (tokens: ReturnType<typeof md.parse>): void => {
    for (const t of tokens) {
      if (t.type === 'fence' || t.type === 'code_block')
        out.push({ file: rel, text: t.content, inline: false, lang: t.info.trim() });
      else if (t.type === 'code_inline') out.push({ file: rel, text: t.content, inline: true, lang: '' });
      if (t.children) walk(t.children);
    }
  };
  walk(md.parse(src, {}));
  return out;
}

/** Shell-ish tokens of one line: quoted strings stay whole; a `#` comment ends the line. */
function tokens(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/"(?:[^"\\]|\\.)*"|'[^']*'|[^\s]+/g)) {
    const w = m[0];
    if (w.startsWith('#') && (w === '#' || /^#\s/.test(line.slice(m.index!)))) break;
    out.push(w);
  }
  return out;
}

const SEPARATORS = new Set(['|', '||', '&&', ';', '>', '2>&1', '>/dev/null']);

/** Every `tugcode …` / `tug …` command line in a code text, as token lists starting with the binary. */
export function commandLines(code: CodeText): string[][] {
  const text = code.text.replace(/\\\n/g, ' ');
  const out: string[][] = [];
  for (const line of text.split('\n')) {
    const toks = tokens(line);
    for (let i = 0; i < toks.length; i++) {
      const w = toks[i]!.replace(/^\$\(/, '');
      if (w !== 'tugcode' && w !== 'tug') continue;
      const prev = toks[i - 1];
      // Only at a command position: line start, after a separator, after npx/env assignments.
      if (
        prev !== undefined &&
        !SEPARATORS.has(prev) &&
        prev !== 'npx' &&
        !/^[A-Z_]+=/.test(prev) &&
        !toks[i]!.startsWith('$(')
      )
        continue;
      const cmd = [w];
      for (let j = i + 1; j < toks.length; j++) {
        let t = toks[j]!;
        if (SEPARATORS.has(t) || t.startsWith('>') || t.startsWith('2>')) break;
        const closes = t.endsWith(')') && !t.includes('(');
        if (closes) t = t.slice(0, -1);
        if (t.endsWith(';')) {
          cmd.push(t.slice(0, -1));
          break;
        }
        cmd.push(t);
        if (closes) break;
      }
      out.push(cmd);
    }
  }
  return out;
}

const clean = (t: string) => t.replace(/^\[+/, '').replace(/\]+$/, '');
const isEllipsis = (t: string) => t === '…' || t === '...';
const isFlag = (t: string) => /^--?[A-Za-z]/.test(t);
const flagName = (t: string) => t.split('=')[0]!;

export interface Resolved {
  /** `state claim`, `commit`, `tug run`, … (alternatives give several). */
  commands: string[];
  problems: string[];
}

/** Checks one command line against the real CLI; returns the commands it names and what is wrong. */
export function checkCommand(line: string[], model: CliModel): Resolved {
  const words = line
    .slice(1)
    .map(clean)
    .filter((t) => t !== '');
  if (line[0] === 'tug') return checkKernel(words, model, 'tug');
  const problems: string[] = [];
  let nodes: CmdNode[] = [model.program];
  let path: string[][] = [[]];
  let i = 0;
  let any = false; // an ellipsis where a subcommand goes: any subcommand of the group
  for (; i < words.length; i++) {
    const t = words[i]!;
    if (isFlag(t)) {
      if (!model.globals.has(flagName(t))) break; // a command's own flag: resolution ends here
      if (model.globalValues.has(flagName(t)) && !t.includes('=')) i++;
      continue;
    }
    if (nodes.every((n) => n.subcommands.size === 0)) break;
    if (nodes.length === 1 && nodes[0] === model.program && t === 'refactor') {
      const r = checkKernel(words.slice(i + 1), model, 'tugcode refactor');
      return r;
    }
    if (isEllipsis(t) || t.startsWith('<')) {
      if (nodes[0] === model.program) return { commands: [], problems };
      any = true;
      i++;
      break;
    }
    const alts = t.split('|');
    const next: CmdNode[] = [];
    const nextPath: string[][] = [];
    for (const n of nodes)
      for (const a of alts) {
        const s = n.subcommands.get(a);
        if (!s) {
          problems.push(`\`${line.join(' ')}\`: ${[...path[0]!, a].join(' ') || a} is not a tugcode command`);
          continue;
        }
        next.push(s);
        nextPath.push([...path[nodes.indexOf(n)]!, a]);
      }
    if (next.length === 0) return { commands: [], problems };
    nodes = next;
    path = nextPath;
  }
  if (any) {
    const subs = nodes.flatMap((n) => [...n.subcommands.values()]);
    nodes = subs;
  }
  for (; i < words.length; i++) {
    const t = words[i]!;
    if (!isFlag(t)) continue;
    const f = flagName(t);
    for (const n of nodes)
      if (!n.options.has(f) && !model.globals.has(f))
        problems.push(
          `\`${line.join(' ')}\`: ${f} is not an option of tugcode ${path[nodes.indexOf(n)]?.join(' ') ?? n.name}`,
        );
  }
  return { commands: any ? [] : path.map((p) => p.join(' ')).filter(Boolean), problems };
}

function checkKernel(words: string[], model: CliModel, prog: string): Resolved {
  const k = model.kernel;
  const problems: string[] = [];
  const where = `\`${prog} ${words.join(' ')}\``;
  let op: string | undefined;
  const bare: string[] = [];
  const step = words[0] !== undefined && k.stepFlags.has(words[0]) && prog === 'tugcode refactor';
  if (step) {
    const flags = k.stepFlags.get(words[0]!)!;
    for (const t of words.slice(1))
      if (isFlag(t) && !flags.has(flagName(t)))
        problems.push(`${where}: ${flagName(t)} is not an option of refactor ${words[0]}`);
    return { commands: [`refactor ${words[0]}`], problems };
  }
  for (let i = 0; i < words.length; i++) {
    const t = words[i]!;
    if (isFlag(t)) {
      const f = flagName(t);
      if (k.valueFlags.has(f)) {
        if (!t.includes('=')) i++;
      } else if (!k.boolFlags.has(f)) problems.push(`${where}: ${f} is not a ${prog} flag`);
      continue;
    }
    bare.push(t);
  }
  const [first, second] = bare;
  if (first === undefined || isEllipsis(first) || first.startsWith('<')) return { commands: [], problems };
  if (!k.commands.has(first)) {
    problems.push(`${where}: ${first} is not a ${prog} command`);
    return { commands: [], problems };
  }
  const command = first;
  if (first === 'session' && second !== undefined && !['status', 'clean'].includes(second))
    problems.push(`${where}: session ${second} is not a ${prog} command`);
  if (
    (first === 'run' || first === 'analyze-impact') &&
    second !== undefined &&
    !second.startsWith('<') &&
    !isEllipsis(second)
  ) {
    op = second;
    if (!k.ops.has(op)) problems.push(`${where}: ${op} is not a kernel operation`);
  }
  if (first === 'verify' && second !== undefined && !second.startsWith('<'))
    for (const m of second.split('|'))
      if (!['syntax', 'tests', 'typecheck'].includes(m)) problems.push(`${where}: verify ${m} is not a mode`);
  return { commands: [`tug ${command}`], problems };
}
