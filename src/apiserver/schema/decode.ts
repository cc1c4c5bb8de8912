/**
 * Strict decoding of a request body against a kind's schema, as apimachinery's strict JSON
 * decoder does: unknown fields are listed (the caller rejects, warns or drops them according to
 * `fieldValidation`), values of the wrong JSON type are errors, JSON nulls are dropped (Go's
 * decoder leaves the zero value), timestamps are checked and canonicalized to UTC
 * (`2006-01-02T15:04:05Z`, micro-times with six fraction digits).
 */
import type { Schema } from './types.js';

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

/** The current time as a micro-time (microseconds are zero: the clock has milliseconds). */
export function nowMicroTime(now: Date): string {
  return `${now.toISOString().slice(0, 23)}000Z`;
}

/** The current time as an RFC 3339 timestamp with seconds. */
export function nowTime(now: Date): string {
  return `${now.toISOString().slice(0, 19)}Z`;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function isEmpty(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

function join(path: string, field: string): string {
  return path === '' ? field : `${path}.${field}`;
}

class Walker {
  readonly unknown: string[] = [];
  readonly typeErrors: string[] = [];

  walk(schema: Schema, value: unknown, path: string): unknown {
    const fail = (want: string): unknown => {
      this.typeErrors.push(`${path === '' ? '<root>' : path}: expected ${want}, got ${jsonType(value)}`);
      return value;
    };
    switch (schema.type) {
      case 'any':
        return value;
      case 'string':
        if (typeof value !== 'string') return fail('string');
        if (schema.format === 'date-time' || schema.format === 'micro-time') {
          const canonical = canonicalTime(value, schema.format === 'date-time' ? 0 : 6);
          return canonical ?? fail(`an RFC 3339 time such as "2006-01-02T15:04:05Z", not ${JSON.stringify(value)} as a`);
        }
        return value;
      case 'integer':
        if (typeof value !== 'number' || !Number.isInteger(value)) return fail(`an integer (${schema.format})`);
        if (schema.format === 'int32' && (value < -(2 ** 31) || value >= 2 ** 31)) return fail('an int32 in range');
        return value;
      case 'number':
        return typeof value === 'number' ? value : fail('number');
      case 'boolean':
        return typeof value === 'boolean' ? value : fail('boolean');
      case 'int-or-string':
        return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value)) ? value : fail('an integer or a string');
      case 'array':
        if (!Array.isArray(value)) return fail('array');
        return (value as unknown[]).map((item, i) => (item === null ? item : this.walk(schema.items, item, `${path}[${i}]`)));
      case 'map': {
        if (jsonType(value) !== 'object') return fail('object');
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
          if (v !== null) out[k] = this.walk(schema.values, v, join(path, k));
        }
        return out;
      }
      case 'object': {
        if (jsonType(value) !== 'object') return fail('object');
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
          const field = Object.hasOwn(schema.properties, k) ? schema.properties[k] : undefined;
          if (field === undefined) {
            this.unknown.push(join(path, k));
          } else if (v !== null) {
            const walked = this.walk(field, v, join(path, k));
            // Go's omitempty: empty lists and maps are not kept.
            if (!(Array.isArray(walked) && walked.length === 0) && !(field.type === 'map' && isEmpty(walked))) out[k] = walked;
          }
        }
        return out;
      }
    }
  }
}

/** Decodes `value` (the parsed body) against `schema`, never throwing. */
export function decodeStrict(schema: Schema, value: Record<string, unknown>): DecodeResult {
  const walker = new Walker();
  const out = walker.walk(schema, value, '');
  const decoded = typeof out === 'object' && out !== null && !Array.isArray(out) ? (out as Record<string, unknown>) : {};
  return { value: decoded, unknown: walker.unknown, typeErrors: walker.typeErrors };
}
