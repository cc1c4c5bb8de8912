/**
 * Strict decoding of a request body against a kind's schema, as apimachinery's strict JSON
 * decoder does: unknown fields are listed (the caller rejects, warns or drops them according to
 * `fieldValidation`), values of the wrong JSON type are errors, JSON nulls are dropped (Go's
 * decoder leaves the zero value), timestamps are checked and canonicalized to UTC
 * (`2006-01-02T15:04:05Z`, micro-times with six fraction digits).
 */
import type { Schema } from './types.js';
import { quoteValue } from '../../api/quote.js';

export interface DecodeResult {
  /** The value without nulls and unknown fields, timestamps canonical. */
  readonly value: Record<string, unknown>;
  /** Paths of unknown fields, e.g. `spec.foo` or `items[0].bar`. */
  readonly unknown: readonly string[];
  /** Type errors, e.g. `reason: expected string, got number`. */
  readonly typeErrors: readonly string[];
}

const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** `text` as UTC with `digits` fraction digits (0: none), or undefined when it is not RFC 3339. */
export function canonicalTime(text: string, digits: 0 | 6): string | undefined {
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [, seconds = '', fraction = '', zone = 'Z'] = m;
  const ms = Date.parse(`${seconds}${zone}`);
  if (Number.isNaN(ms)) return undefined;
  const base = new Date(ms).toISOString().slice(0, 19);
  return digits === 0 ? `${base}Z` : `${base}.${fraction.padEnd(9, '0').slice(0, 6)}Z`;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function isEmpty(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

/**
 * One walk over a body. The path of the value being walked is kept as a stack of keys and
 * indexes and turned into text (`spec.items[0].name`) only for a report: most bodies have none,
 * and building a string per field was a good part of the cost of decoding.
 */
class Walker {
  readonly unknown: string[] = [];
  readonly typeErrors: string[] = [];
  private readonly path: (string | number)[] = [];

  walk(schema: Schema, value: unknown): unknown {
    switch (schema.type) {
      case 'any':
        return value;
      case 'string':
        if (typeof value !== 'string') return this.fail('string', value);
        if (schema.format === 'date-time' || schema.format === 'micro-time') {
          const canonical = canonicalTime(value, schema.format === 'date-time' ? 0 : 6);
          return canonical ?? this.fail(`an RFC 3339 time such as "2006-01-02T15:04:05Z", not ${quoteValue(value)} as a`, value);
        }
        return value;
      case 'integer':
        if (typeof value !== 'number' || !Number.isInteger(value)) return this.fail(`an integer (${schema.format})`, value);
        if (schema.format === 'int32' && (value < -(2 ** 31) || value >= 2 ** 31)) return this.fail('an int32 in range', value);
        return value;
      case 'number':
        return typeof value === 'number' ? value : this.fail('number', value);
      case 'boolean':
        return typeof value === 'boolean' ? value : this.fail('boolean', value);
      case 'int-or-string':
        return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value)) ? value : this.fail('an integer or a string', value);
      case 'array':
        return Array.isArray(value) ? this.array(schema.items, value) : this.fail('array', value);
      case 'map':
        return jsonType(value) === 'object' ? this.map(schema.values, value as Record<string, unknown>) : this.fail('object', value);
      case 'object':
        return jsonType(value) === 'object' ? this.object(schema.properties, value as Record<string, unknown>) : this.fail('object', value);
    }
  }

  private array(items: Schema, value: readonly unknown[]): unknown[] {
    return value.map((item, i) => {
      if (item === null) return item;
      this.path.push(i);
      const walked = this.walk(items, item);
      this.path.pop();
      return walked;
    });
  }

  private map(values: Schema, value: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const k in value) {
      if (!Object.hasOwn(value, k)) continue;
      const v = value[k];
      if (v === null) continue;
      this.path.push(k);
      out[k] = this.walk(values, v);
      this.path.pop();
    }
    return out;
  }

  private object(properties: Readonly<Record<string, Schema>>, value: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const k in value) {
      if (!Object.hasOwn(value, k)) continue;
      const v = value[k];
      const field = Object.hasOwn(properties, k) ? properties[k] : undefined;
      this.path.push(k);
      if (field === undefined) {
        this.unknown.push(this.pathText());
      } else if (v !== null) {
        const walked = this.walk(field, v);
        // Go's omitempty: empty lists and maps are not kept.
        if (!(Array.isArray(walked) && walked.length === 0) && !(field.type === 'map' && isEmpty(walked))) out[k] = walked;
      }
      this.path.pop();
    }
    return out;
  }

  /** Records a type error at the current path; the value is kept (the caller rejects the body). */
  private fail(want: string, value: unknown): unknown {
    const path = this.pathText();
    this.typeErrors.push(`${path === '' ? '<root>' : path}: expected ${want}, got ${jsonType(value)}`);
    return value;
  }

  /** The current path as text: `a.b[0].c` ('' at the root). */
  private pathText(): string {
    let text = '';
    for (const part of this.path) {
      if (typeof part === 'number') text = `${text}[${part}]`;
      else text = text === '' ? part : `${text}.${part}`;
    }
    return text;
  }
}

/** Decodes `value` (the parsed body) against `schema`, never throwing. */
export function decodeStrict(schema: Schema, value: Record<string, unknown>): DecodeResult {
  const walker = new Walker();
  const out = walker.walk(schema, value);
  const decoded = typeof out === 'object' && out !== null && !Array.isArray(out) ? (out as Record<string, unknown>) : {};
  return { value: decoded, unknown: walker.unknown, typeErrors: walker.typeErrors };
}
