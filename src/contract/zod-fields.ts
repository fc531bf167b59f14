/**
 * Walks a zod output schema into flat field rows (`plans[].steps[].anchor: string`), for the generated
 * agent API (docs/AGENT_API.md) and the drift test of the prose (tests/docs/drift.test.ts). Zod 3 only:
 * reads `_def.typeName`. Loaded off the hot path (docs and tests).
 */
import type { z } from 'zod';

export interface FieldRow {
  /** Dotted path; `[]` marks an array element, `{}` a record value. */
  path: string;
  type: string;
  optional: boolean;
}

type Def = { typeName: string; [k: string]: unknown };
const def = (s: z.ZodTypeAny): Def => (s as unknown as { _def: Def })._def;

/** Unwraps optional / nullable / default / effects; says which wrappers were met. */
function unwrap(s: z.ZodTypeAny): { inner: z.ZodTypeAny; optional: boolean; nullable: boolean } {
  let optional = false;
  let nullable = false;
  for (;;) {
    const d = def(s);
    if (d.typeName === 'ZodOptional') optional = true;
    else if (d.typeName === 'ZodNullable') nullable = true;
    else if (d.typeName === 'ZodDefault') optional = true;
    else if (d.typeName !== 'ZodEffects') return { inner: s, optional, nullable };
    s = (d.typeName === 'ZodEffects' ? d.schema : d.innerType) as z.ZodTypeAny;
  }
}

/** A short type name of a leaf (or of a container, for its own row). */
function typeName(s: z.ZodTypeAny): string {
  const { inner, nullable } = unwrap(s);
  const d = def(inner);
  let t: string;
  switch (d.typeName) {
    case 'ZodString':
      t = 'string';
      break;
    case 'ZodNumber':
      t = (d.checks as { kind: string }[]).some((c) => c.kind === 'int') ? 'integer' : 'number';
      break;
    case 'ZodBoolean':
      t = 'boolean';
      break;
    case 'ZodLiteral':
      t = JSON.stringify(d.value);
      break;
    case 'ZodEnum':
      t = (d.values as string[]).map((v) => JSON.stringify(v)).join(' \\| ');
      break;
    case 'ZodArray':
      t = `array of ${typeName(d.type as z.ZodTypeAny)}`;
      break;
    case 'ZodObject':
      t = 'object';
      break;
    case 'ZodRecord':
      t = `object of ${typeName(d.valueType as z.ZodTypeAny)}`;
      break;
    case 'ZodTuple':
      t = `[${(d.items as z.ZodTypeAny[]).map(typeName).join(', ')}]`;
      break;
    case 'ZodUnion':
    case 'ZodDiscriminatedUnion':
      t = 'one of several shapes';
      break;
    case 'ZodUnknown':
    case 'ZodAny':
      t = 'any';
      break;
    default:
      t = d.typeName.replace(/^Zod/, '').toLowerCase();
  }
  return nullable ? `${t} \\| null` : t;
}

/** The object variants of a schema (one for an object, several for a union of objects). */
export function objectVariants(s: z.ZodTypeAny): z.ZodTypeAny[] {
  const { inner } = unwrap(s);
  const d = def(inner);
  if (d.typeName === 'ZodUnion' || d.typeName === 'ZodDiscriminatedUnion')
    return (d.options as z.ZodTypeAny[]).flatMap(objectVariants);
  return d.typeName === 'ZodObject' ? [inner] : [];
}

/** Every field of an object schema, depth first in declaration order. */
export function fieldRows(s: z.ZodTypeAny, prefix = ''): FieldRow[] {
  const rows: FieldRow[] = [];
  const { inner } = unwrap(s);
  const d = def(inner);
  if (d.typeName !== 'ZodObject') return rows;
  const shape = (d.shape as () => Record<string, z.ZodTypeAny>)();
  for (const [key, child] of Object.entries(shape)) {
    const path = prefix + key;
    const u = unwrap(child);
    rows.push({ path, type: typeName(child), optional: u.optional });
    rows.push(...childRows(u.inner, path));
  }
  return rows;
}

function childRows(s: z.ZodTypeAny, path: string): FieldRow[] {
  const d = def(s);
  switch (d.typeName) {
    case 'ZodObject':
      return fieldRows(s, path + '.');
    case 'ZodArray': {
      const el = unwrap(d.type as z.ZodTypeAny).inner;
      return childRows(el, path + '[]');
    }
    case 'ZodRecord':
      return childRows(unwrap(d.valueType as z.ZodTypeAny).inner, path + '{}');
    case 'ZodUnion':
    case 'ZodDiscriminatedUnion':
      return (d.options as z.ZodTypeAny[]).flatMap((o) => childRows(unwrap(o).inner, path));
    default:
      return [];
  }
}

/** Every key name at any depth, and every literal and enum value, of a schema (for the drift test). */
export function namesAndValues(s: z.ZodTypeAny): { keys: Set<string>; values: Set<string> } {
  const keys = new Set<string>();
  const values = new Set<string>();
  const seen = new Set<unknown>();
  const walk = (x: z.ZodTypeAny): void => {
    if (seen.has(x)) return;
    seen.add(x);
    const d = def(x);
    switch (d.typeName) {
      case 'ZodObject':
        for (const [k, c] of Object.entries((d.shape as () => Record<string, z.ZodTypeAny>)())) {
          keys.add(k);
          walk(c);
        }
        return;
      case 'ZodLiteral':
        if (typeof d.value === 'string') values.add(d.value);
        return;
      case 'ZodEnum':
        for (const v of d.values as string[]) values.add(v);
        return;
      case 'ZodArray':
        return walk(d.type as z.ZodTypeAny);
      case 'ZodRecord':
        return walk(d.valueType as z.ZodTypeAny);
      case 'ZodTuple':
        return (d.items as z.ZodTypeAny[]).forEach(walk);
      case 'ZodUnion':
      case 'ZodDiscriminatedUnion':
        return (d.options as z.ZodTypeAny[]).forEach(walk);
      case 'ZodEffects':
        return walk(d.schema as z.ZodTypeAny);
      case 'ZodOptional':
      case 'ZodNullable':
      case 'ZodDefault':
        return walk(d.innerType as z.ZodTypeAny);
      default:
        return;
    }
  };
  walk(s);
  return { keys, values };
}
