/**
 * What a remote machine sends, checked before zod parses it. zod reports every failure of every
 * element (about twenty issues for one empty object where a terminal was due), so a hostile
 * remote's 4 MiB array of `{}` cost gigabytes of issues and ended the local process. This walk
 * stops at the first element that fails, and bounds the shape first: nodes, depth and array
 * lengths. Only what passes is parsed by zod, which then finds nothing to report.
 */
import type { z } from 'zod';

/** The most a remote message may hold: legitimate ones (a 5,000-record timeline page, 4,096 marks) stay well under. */
const remoteShapeBounds = { nodes: 400_000, depth: 24, array: 10_000 } as const;

type Def = { type: string; shape?: Record<string, z.ZodType>; element?: z.ZodType; innerType?: z.ZodType };

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

/** Whether `value` stays within the bounds (an iterative walk: no recursion for the remote to exhaust). */
export function withinShape(value: unknown, bounds: { nodes: number; depth: number; array: number } = remoteShapeBounds): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  let nodes = 0;
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (++nodes > bounds.nodes) return false;
    if (item === null || typeof item !== 'object') continue;
    if (depth >= bounds.depth) return false;
    if (Array.isArray(item)) {
      if (item.length > bounds.array) return false;
      for (const element of item) stack.push([element, depth + 1]);
    } else {
      for (const key in item) stack.push([(item as Record<string, unknown>)[key], depth + 1]);
    }
  }
  return true;
}

/** A first look that fails fast: arrays element by element, objects field by field; anything else zod checks (small by then). */
function passes(schema: z.ZodType, value: unknown): boolean {
  const def = defOf(schema);
  switch (def.type) {
    case 'optional':
      return value === undefined || passes(def.innerType!, value);
    case 'nullable':
      return value === null || passes(def.innerType!, value);
    case 'default':
      return value === undefined || passes(def.innerType!, value);
    case 'array':
      if (!Array.isArray(value)) return false;
      for (const element of value) if (!passes(def.element!, element)) return false;
      return true;
    case 'object': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
      const record = value as Record<string, unknown>;
      for (const [key, field] of Object.entries(def.shape!)) if (!passes(field, record[key])) return false;
      return true;
    }
    default:
      return schema.safeParse(value).success;
  }
}

/**
 * `schema`'s parse of `value`, or null where it is not that: too large or too deep a shape, or
 * the first element or field that fails (zod is not run on what fails).
 */
export function checkedRemote<T extends z.ZodType>(schema: T, value: unknown): z.output<T> | null {
  if (!withinShape(value) || !passes(schema, value)) return null;
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : null;
}
