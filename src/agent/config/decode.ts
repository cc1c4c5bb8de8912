/**
 * Decodes a plain value (parsed from YAML or JSON) against a schema, the way upstream's JSON
 * decoding of the configuration types behaves: only the fields present are returned (a
 * "patch"), with durations converted to nanoseconds; a value of the wrong type is a problem
 * naming the field, its position and what is allowed; an unknown field is a warning (upstream
 * falls back to lenient decoding with a warning); `null` clears maps, lists and optional
 * values and is ignored for scalars, as Go's decoder does.
 */
import { parseDuration } from '../../api/duration.js';
import { messageOf } from '../../api/errors.js';
import type { Field, Schema } from './schema.js';
import { quoteValue } from '../../api/quote.js';

export interface DecodeResult {
  /** Only the fields present, converted; nested structs are nested objects. */
  readonly patch: Record<string, unknown>;
  /** Dotted paths of the leaf fields present (maps and lists count as leaves). */
  readonly present: readonly string[];
  readonly problems: readonly string[];
  readonly warnings: readonly string[];
}

/** Where a field is in the source, e.g. "12:3", or undefined when unknown. */
export type PositionOf = (path: readonly (string | number)[]) => string | undefined;

interface Ctx {
  readonly present: string[];
  readonly problems: string[];
  readonly warnings: string[];
  readonly positionOf: PositionOf;
  readonly ignore: ReadonlySet<string>;
}

const INT_RANGES = {
  32: { min: -(2 ** 31), max: 2 ** 31 - 1 },
  64: { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER },
} as const;

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `string ${quoteValue(v)}`;
  return `${typeof v} ${(JSON.stringify(v) as string | undefined) ?? 'undefined'}`;
}

function dotted(path: readonly (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Decodes `raw` (an object) against `schema`. `ignore` names top-level keys that are not
 * fields (apiVersion, kind).
 */
export function decodeObject(
  schema: Schema,
  raw: unknown,
  options: { positionOf?: PositionOf; ignore?: readonly string[] } = {},
): DecodeResult {
  const ctx: Ctx = {
    present: [],
    problems: [],
    warnings: [],
    positionOf: options.positionOf ?? (() => undefined),
    ignore: new Set(options.ignore ?? []),
  };
  const patch: Record<string, unknown> = {};
  if (!isObject(raw)) {
    ctx.problems.push(`the document must be an object, got ${describe(raw)}`);
  } else {
    decodeStruct(schema, raw, [], patch, ctx);
  }
  return { patch, present: ctx.present, problems: ctx.problems, warnings: ctx.warnings };
}

/** Edit distance, for suggestions. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_v, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/** The known name closest to `key` (case-insensitively within two edits), if any. */
function closest(key: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const name of names) {
    const d = distance(key.toLowerCase(), name.toLowerCase());
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

function problem(ctx: Ctx, path: readonly (string | number)[], text: string): void {
  const pos = ctx.positionOf(path);
  ctx.problems.push(`${pos === undefined ? '' : `${pos}: `}field ${dotted(path)}: ${text}`);
}

function decodeStruct(
  schema: Schema,
  raw: Record<string, unknown>,
  path: readonly (string | number)[],
  out: Record<string, unknown>,
  ctx: Ctx,
): void {
  for (const [key, value] of Object.entries(raw)) {
    const here = [...path, key];
    const field = schema[key];
    if (field === undefined) {
      if (path.length === 0 && ctx.ignore.has(key)) continue;
      const pos = ctx.positionOf(here);
      const close = closest(key, Object.keys(schema));
      ctx.warnings.push(
        `${pos === undefined ? '' : `${pos}: `}unknown field ${dotted(here)} ignored` +
          (close === undefined ? '' : ` (did you mean ${close}? field names are case-sensitive)`),
      );
      continue;
    }
    decodeField(field, value, here, out, key, ctx);
  }
}

function decodeField(
  field: Field,
  value: unknown,
  path: readonly (string | number)[],
  out: Record<string, unknown>,
  key: string,
  ctx: Ctx,
): void {
  const name = path.filter((p) => typeof p === 'string').join('.');
  if (value === null) {
    // Go's decoder: null sets maps, slices and pointers to nil and leaves scalars alone.
    if (['strings', 'map-string', 'map-bool', 'map-strings', 'list', 'optional-int', 'optional-string'].includes(field.kind) ||
      (field.kind === 'struct' && field.nullable === true)) {
      out[key] = null;
      ctx.present.push(name);
    }
    return;
  }
  if (field.kind === 'struct') {
    if (!isObject(value)) { problem(ctx, path, `expected an object, got ${describe(value)}`); return; }
    const nested: Record<string, unknown> = {};
    decodeStruct(field.fields, value, path, nested, ctx);
    out[key] = nested;
    if (field.nullable === true) ctx.present.push(name);
    return;
  }
  const converted = convertLeaf(field, value, path, ctx);
  if (converted.ok) {
    out[key] = converted.value;
    ctx.present.push(name);
  }
}

type Converted = { ok: true; value: unknown } | { ok: false };
const FAIL: Converted = { ok: false };

function convertLeaf(field: Field, value: unknown, path: readonly (string | number)[], ctx: Ctx): Converted {
  const fail = (text: string): Converted => {
    problem(ctx, path, text);
    return FAIL;
  };
  switch (field.kind) {
    case 'bool':
      return typeof value === 'boolean' ? { ok: true, value } : fail(`expected true or false, got ${describe(value)}`);
    case 'int':
    case 'optional-int': {
      const range = INT_RANGES[field.bits];
      const min = field.kind === 'int' && field.unsigned === true ? 0 : range.min;
      const max = field.kind === 'int' && field.unsigned === true ? 2 ** 32 - 1 : range.max;
      if (typeof value !== 'number' || !Number.isInteger(value)) return fail(`expected an integer, got ${describe(value)}`);
      if (value < min || value > max) return fail(`${value} is outside the range of the type (${min} to ${max})`);
      return { ok: true, value };
    }
    case 'float':
      return typeof value === 'number' ? { ok: true, value } : fail(`expected a number, got ${describe(value)}`);
    case 'string':
    case 'optional-string':
      return typeof value === 'string' ? { ok: true, value } : fail(`expected a string, got ${describe(value)}`);
    case 'duration':
    case 'time-or-duration': {
      if (field.kind === 'time-or-duration' && typeof value === 'number' && Number.isInteger(value)) {
        return { ok: true, value };
      }
      if (typeof value !== 'string') {
        return fail(`expected a duration string such as "300ms", "1m30s" or "2h45m", got ${describe(value)}`);
      }
      try {
        return { ok: true, value: parseDuration(value) };
      } catch (err) {
        return fail(messageOf(err));
      }
    }
    case 'strings':
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
        return fail(`expected a list of strings, got ${describe(value)}`);
      }
      return { ok: true, value: [...value] };
    case 'map-string':
    case 'map-bool':
    case 'map-strings': {
      if (!isObject(value)) return fail(`expected a map, got ${describe(value)}`);
      const want = field.kind === 'map-string' ? 'a string' : field.kind === 'map-bool' ? 'true or false' : 'a list of strings';
      for (const [k, v] of Object.entries(value)) {
        const ok =
          field.kind === 'map-string' ? typeof v === 'string'
            : field.kind === 'map-bool' ? typeof v === 'boolean'
              : Array.isArray(v) && v.every((e) => typeof e === 'string');
        if (!ok) return fail(`the value of key ${quoteValue(k)} must be ${want}, got ${describe(v)}`);
      }
      return { ok: true, value: structuredClone(value) };
    }
    case 'list': {
      if (!Array.isArray(value)) return fail(`expected a list, got ${describe(value)}`);
      const items: Record<string, unknown>[] = [];
      let good = true;
      for (const [i, item] of (value as unknown[]).entries()) {
        const itemPath = [...path, i];
        if (!isObject(item)) {
          problem(ctx, itemPath, `expected an object, got ${describe(item)}`);
          good = false;
          continue;
        }
        const decoded: Record<string, unknown> = {};
        const before = ctx.problems.length;
        const presentBefore = ctx.present.length;
        decodeStruct(field.element, item, itemPath, decoded, ctx);
        ctx.present.length = presentBefore; // the list as a whole is the leaf
        for (const [name, f] of Object.entries(field.element)) {
          if (!(name in decoded)) {
            if (f.required === true && f.kind !== 'struct') {
              problem(ctx, [...itemPath, name], 'required field is missing');
            } else if (f.kind !== 'struct') {
              decoded[name] = structuredClone(f.default);
            }
          }
        }
        if (ctx.problems.length !== before) good = false;
        items.push(decoded);
      }
      return good ? { ok: true, value: items } : FAIL;
    }
    case 'struct':
      return FAIL; // handled by decodeField
  }
}
