/**
 * Where an agent run's usage comes from (docs/run.md §7.1): claude's result JSON, codex's `--json` events,
 * or the file `TUG_USAGE_OUT` names (any implementer). Pure parsers; the ledger (ledger.ts) records what
 * they return.
 */
import {
  emptyUsage,
  hasUsage,
  isReportedCost,
  isReportedCount,
  USAGE_MAX_TOKENS,
  USAGE_TOKEN_FIELDS,
  usageTokens,
  type Usage,
} from '../contract/usage.js';

export {
  addUsage,
  emptyTotals,
  emptyUsage,
  hasUsage,
  priced,
  usageTokens,
  USAGE_ROLES,
  type Prices,
  type Usage,
  type UsageRole,
  type UsageTotals,
} from '../contract/usage.js';

/** The most bytes of a `TUG_USAGE_OUT` file read; a bigger file is a warning. */
export const USAGE_FILE_MAX = 64 * 1024;

// As reported: a value past its bound is kept, for the ledger's one bound rule (boundUsage, docs/run.md
// §7.1) to count as the bound — never dropped, which would make a budget blind to it.
const count = (v: unknown): number | null => (isReportedCount(v) ? v : null);
const usd = (v: unknown): number | null => (isReportedCost(v) ? v : null);

/**
 * A report's fields that are there but neither a count nor a cost (a negative, a fraction, a string): each
 * counts nothing, and the ledger warns `UsageUnreadable` naming them (docs/run.md §7.1), never silently.
 */
function unreadable(fields: Record<string, unknown>, costs: readonly string[] = []): string[] {
  return Object.entries(fields)
    .filter(([k, v]) => v !== undefined && v !== null && (costs.includes(k) ? usd(v) : count(v)) === null)
    .map(([k, v]) => `${k} ${(JSON.stringify(v) ?? String(v)).slice(0, 40)}`);
}

/** Adds `found` to `list` (unreadable fields named in a warning), each once, the first few only. */
function keepFew(list: string[], found: readonly string[]): void {
  for (const b of found) if (list.length < 4 && !list.includes(b)) list.push(b);
}

/** `sum` plus `u`, token field by token field (a field stays null while both are); the cost is not summed. */
function addTokens(sum: Usage | null, u: Usage): Usage {
  const s = sum ?? emptyUsage();
  for (const k of USAGE_TOKEN_FIELDS) s[k] = s[k] === null && u[k] === null ? null : (s[k] ?? 0) + (u[k] ?? 0);
  return s;
}

/** The warning of unreadable fields (`unreadable`), or null when there were none. */
function unreadableWarning(agent: string, fields: readonly string[]): string | null {
  return fields.length === 0
    ? null
    : `${agent} reported ${fields.join(', ')}, which ${fields.length === 1 ? 'is' : 'are'} not usage: counted as 0`;
}

/**
 * claude's result object (or a message's `usage`) → its usage: `usage.input_tokens`, `output_tokens`,
 * `cache_read_input_tokens`, `cache_creation_input_tokens` and `total_cost_usd` (which claude prices
 * itself); null when the result carries none of them.
 */
export function claudeUsage(result: Record<string, unknown>): { usage: Usage | null; usage_warning: string | null } {
  const u = usageObject(result);
  const out: Usage = {
    input_tokens: count(u.input_tokens),
    output_tokens: count(u.output_tokens),
    cache_read_tokens: count(u.cache_read_input_tokens),
    cache_write_tokens: count(u.cache_creation_input_tokens),
    cost_usd: usd(result.total_cost_usd),
  };
  return { usage: hasUsage(out) ? out : null, usage_warning: unreadableWarning('claude', claudeUnreadable(result)) };
}

/** A claude result's (or message's) `usage` object; {} when it has none. */
function usageObject(result: Record<string, unknown>): Record<string, unknown> {
  return (typeof result.usage === 'object' && result.usage !== null ? result.usage : {}) as Record<string, unknown>;
}

/** The usage fields of a claude result (or message) that are there but no count or cost (`unreadable`). */
function claudeUnreadable(result: Record<string, unknown>): string[] {
  const { input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens } = usageObject(result);
  return unreadable(
    {
      input_tokens,
      output_tokens,
      cache_read_input_tokens,
      cache_creation_input_tokens,
      total_cost_usd: result.total_cost_usd,
    },
    ['total_cost_usd'],
  );
}

/**
 * The `TUG_USAGE_OUT` file's text → its usage: one JSON object with any of `input_tokens`, `output_tokens`,
 * `cache_read_tokens`, `cache_write_tokens` (non-negative integers) and `cost_usd` (a non-negative number),
 * each may be null; a value past its bound (a count past it need not be an integer) is kept (the ledger
 * holds it to the bound). Anything else is a reason (the caller's warning), never a failure of the step.
 */
export function parseUsageFile(text: string): { usage: Usage | null } | { reason: string } {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return { reason: `not JSON: ${(e as Error).message}` };
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { reason: 'not a JSON object' };
  const o = v as Record<string, unknown>;
  const out = emptyUsage();
  const bad: string[] = [];
  for (const k of USAGE_TOKEN_FIELDS) {
    if (o[k] === undefined || o[k] === null) continue;
    const n = count(o[k]);
    if (n === null)
      bad.push(`${k} must be a non-negative integer (past ${USAGE_MAX_TOKENS} any number counts as that bound)`);
    out[k] = n;
  }
  if (o.cost_usd !== undefined && o.cost_usd !== null) {
    out.cost_usd = usd(o.cost_usd);
    if (out.cost_usd === null) bad.push('cost_usd must be a non-negative number');
  }
  if (bad.length) return { reason: bad.join('; ') };
  return { usage: hasUsage(out) ? out : null };
}

/** A stdout line of an agent's JSON stream: its event, or the text the log keeps as it was printed. */
function jsonLine(raw: string): { event: Record<string, unknown> } | { text: string } {
  const l = raw.trim();
  if (!l.startsWith('{')) return { text: raw === '' ? '' : raw + '\n' };
  try {
    const v: unknown = JSON.parse(l);
    if (typeof v === 'object' && v !== null) return { event: v as Record<string, unknown> };
  } catch {
    // Not JSON: the log keeps it as it is.
  }
  return { text: raw + '\n' };
}

/**
 * codex's `exec --json` event stream, made readable for the step's log and summed (docs/agents.md §2):
 * each JSON line becomes the text codex would print without `--json` (commands and their output, the
 * agent's messages, `ERROR: …` lines), and each `turn.completed` adds its `usage`. codex counts cached
 * input inside `input_tokens` (OpenAI's convention); here they are apart, as everywhere in the ledger.
 */
export class CodexTranscript {
  private sum: Usage | null = null;
  /** Fields of `turn.completed` usage that were not counts (`unreadable`), the first few. */
  private bad: string[] = [];

  /** The usage of the turns completed so far; null when none completed. */
  usage(): Usage | null {
    return this.sum;
  }

  /** The warning of fields that were not counts, or null. */
  usageWarning(): string | null {
    return unreadableWarning('codex', this.bad);
  }

  /** One line of stdout → the text for the log (with its newline), or '' for nothing. */
  line(raw: string): string {
    const parsed = jsonLine(raw);
    if ('text' in parsed) return parsed.text;
    const e = parsed.event;
    const item = (e.item ?? {}) as Record<string, unknown>;
    const str = (v: unknown) => (typeof v === 'string' ? v : '');
    switch (e.type) {
      case 'thread.started':
        return `codex session ${str(e.thread_id)}\n`;
      case 'turn.started':
        return '';
      case 'turn.completed':
        this.add((e.usage ?? {}) as Record<string, unknown>);
        return `tokens used\n${this.turnTokens((e.usage ?? {}) as Record<string, unknown>)}\n`;
      case 'turn.failed':
        return `ERROR: ${str((e.error as Record<string, unknown> | undefined)?.message)}\n`;
      case 'error':
        return `ERROR: ${str(e.message)}\n`;
      case 'item.started':
        return item.type === 'command_execution' ? `exec\n${str(item.command)}\n` : '';
      case 'item.updated':
        return '';
      case 'item.completed':
        return itemText(item);
      default:
        return raw + '\n';
    }
  }

  /** What codex prints as `tokens used` without `--json`: input (cached included) plus output. */
  private turnTokens(u: Record<string, unknown>): number {
    return (count(u.input_tokens) ?? 0) + (count(u.output_tokens) ?? 0);
  }

  private add(u: Record<string, unknown>): void {
    const { input_tokens, cached_input_tokens, output_tokens, cache_write_input_tokens } = u;
    keepFew(this.bad, unreadable({ input_tokens, cached_input_tokens, output_tokens, cache_write_input_tokens }));
    const input = count(u.input_tokens);
    const cached = count(u.cached_input_tokens);
    // The cached part held to the bound before it is taken away: two counts past 1e308 are Infinity, and
    // Infinity - Infinity is NaN, which no bound holds. An input past the bound stays as reported, for
    // boundUsage to count as the bound (docs/run.md §7.1).
    const uncached = (n: number) =>
      n > USAGE_MAX_TOKENS ? n : Math.max(0, n - Math.min(cached ?? 0, USAGE_MAX_TOKENS));
    const turn: Usage = {
      input_tokens: input === null ? null : uncached(input),
      output_tokens: count(u.output_tokens),
      cache_read_tokens: cached,
      cache_write_tokens: count(u.cache_write_input_tokens),
      cost_usd: null,
    };
    if (hasUsage(turn)) this.sum = addTokens(this.sum, turn);
  }
}

/** claude's final result (the stream's `result` line), as the driver reads it. */
export interface ClaudeResult {
  message: string | null;
  is_error: boolean;
  subtype: string;
  usage: Usage | null;
  usage_warning: string | null;
}

/** How many model calls a claude transcript keeps apart (a call's usage is streamed again while it lasts). */
const CLAUDE_CALLS_KEPT = 64;

/** `sum` plus one claude model call's usage (its message's `usage` object). */
function addCall(sum: Usage | null, u: Record<string, unknown>): Usage | null {
  const call = claudeUsage({ usage: u }).usage;
  return call ? addTokens(sum, call) : sum;
}

/** The longest text of one tool call or tool result a claude transcript writes to the log. */
const CLAUDE_TOOL_TEXT_MAX = 4000;

/**
 * claude's `--output-format stream-json --verbose` stream, made readable for the step's log (docs/agents.md
 * §2) and counted. The `result` line at its end gives the final message and the run's usage and cost, as
 * `--output-format json` would. Until then each model call's `assistant` message carries the usage claude
 * streamed for it (input and cache tokens whole, output tokens as far as streamed): a run killed before its
 * result (a timeout, a stall, a stop) counts those, with no cost, instead of nothing (docs/run.md §7.1).
 */
export class ClaudeTranscript {
  private final: ClaudeResult | null = null;
  /** Per recent model call (message id), the latest usage claude streamed for it, oldest first. */
  private calls = new Map<string, Record<string, unknown>>();
  /** The usage of the calls no longer kept apart (a long run makes thousands), and their unreadable fields. */
  private earlier: Usage | null = null;
  private earlierBad: string[] = [];

  /** The final result, when the stream reached it. */
  result(): ClaudeResult | null {
    return this.final;
  }

  /** The result's usage, or before it the model calls' streamed so far; null when there was none. */
  usage(): Usage | null {
    if (this.final) return this.final.usage;
    let sum = this.earlier && { ...this.earlier };
    for (const u of this.calls.values()) sum = addCall(sum, u);
    return sum;
  }

  /** The warning of usage fields that were not counts, or null. */
  usageWarning(): string | null {
    if (this.final) return this.final.usage_warning;
    const bad = [...this.earlierBad];
    for (const u of this.calls.values()) keepFew(bad, claudeUnreadable({ usage: u }));
    return unreadableWarning('claude', bad);
  }

  /** A model call's latest streamed usage; past CLAUDE_CALLS_KEPT calls the oldest is summed into `earlier`. */
  private streamed(id: string, u: Record<string, unknown>): void {
    this.calls.delete(id);
    this.calls.set(id, u);
    if (this.calls.size <= CLAUDE_CALLS_KEPT) return;
    const [oldest, old] = this.calls.entries().next().value!;
    this.calls.delete(oldest);
    this.earlier = addCall(this.earlier, old);
    keepFew(this.earlierBad, claudeUnreadable({ usage: old }));
  }

  /** One line of stdout → the text for the log (with its newline), or '' for nothing. */
  line(raw: string): string {
    const parsed = jsonLine(raw);
    if ('text' in parsed) return parsed.text;
    const e = parsed.event;
    const str = (v: unknown) => (typeof v === 'string' ? v : '');
    const cut = (t: string) => (t.length > CLAUDE_TOOL_TEXT_MAX ? `${t.slice(0, CLAUDE_TOOL_TEXT_MAX)} …` : t);
    const message = (typeof e.message === 'object' && e.message !== null ? e.message : {}) as Record<string, unknown>;
    const content = Array.isArray(message.content) ? (message.content as Record<string, unknown>[]) : [];
    switch (e.type) {
      case 'system':
        return e.subtype === 'init' ? `claude session ${str(e.session_id)} (${str(e.model)})\n` : '';
      case 'assistant': {
        if (typeof message.id === 'string' && typeof message.usage === 'object' && message.usage !== null)
          this.streamed(message.id, message.usage as Record<string, unknown>);
        return content
          .map((c) =>
            c.type === 'text'
              ? `claude\n${str(c.text)}\n`
              : c.type === 'tool_use'
                ? `tool ${str(c.name)}\n${cut(JSON.stringify(c.input ?? {}))}\n`
                : '',
          )
          .join('');
      }
      case 'user':
        return content
          .map((c) => {
            if (c.type !== 'tool_result') return '';
            const parts = Array.isArray(c.content) ? (c.content as Record<string, unknown>[]) : [];
            const text = typeof c.content === 'string' ? c.content : parts.map((p) => str(p.text)).join('\n');
            return `${c.is_error === true ? 'tool error' : 'tool result'}\n${cut(text)}\n`;
          })
          .join('');
      case 'result': {
        this.final = {
          message: typeof e.result === 'string' ? e.result : null,
          is_error: e.is_error === true,
          subtype: str(e.subtype),
          ...claudeUsage(e),
        };
        const u = this.final.usage;
        const tokens = u ? usageTokens(u) : 0;
        return `result ${str(e.subtype)}${e.is_error === true ? ' (error)' : ''}: ${tokens} tokens${
          typeof e.total_cost_usd === 'number' ? `, $${e.total_cost_usd}` : ''
        }\n`;
      }
      default:
        return raw + '\n';
    }
  }
}

/** A completed item as codex's plain output shows it. */
function itemText(item: Record<string, unknown>): string {
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  switch (item.type) {
    case 'agent_message':
      return `codex\n${str(item.text)}\n`;
    case 'reasoning':
      return `thinking\n${str(item.text)}\n`;
    case 'command_execution': {
      const out = str(item.aggregated_output);
      const code = typeof item.exit_code === 'number' ? item.exit_code : null;
      const how = code === 0 ? ' succeeded' : code === null ? ` ${str(item.status)}` : ` exited ${code}`;
      return `${how}:\n${out}${out === '' || out.endsWith('\n') ? '' : '\n'}`;
    }
    case 'file_change': {
      const changes = Array.isArray(item.changes) ? (item.changes as Record<string, unknown>[]) : [];
      return `file update\n${changes.map((c) => `${str(c.kind)} ${str(c.path)}`).join('\n')}\n`;
    }
    case 'error':
      // An item of type error is a notice (unknown model metadata, …), not the turn's failure.
      return `warning: ${str(item.message)}\n`;
    default:
      return `${JSON.stringify(item)}\n`;
  }
}
