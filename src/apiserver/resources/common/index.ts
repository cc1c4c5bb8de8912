/**
 * resources/common: small helpers the resource definitions share: reading untyped wire values
 * (objects, lists, numbers), the config-map key rule, base64 checks, the messages of immutable
 * fields, and compatibility views of a resource under another group.
 *
 * Must not: know any particular resource, HTTP or the store.
 */
import { jsonEqual } from '../../patch/index.js';
import { apiVersionOf, type ResourceDefinition, type WireObject } from '../../registry/index.js';
import type { FieldErrors } from '../../status/index.js';

export type Obj = Record<string, unknown>;

/** `value` as an object, or an empty one. */
export function rec(value: unknown): Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Obj) : {};
}

/** `value` as a list of objects (non-objects dropped), or an empty list. */
export function recs(value: unknown): Obj[] {
  return Array.isArray(value) ? value.filter((v): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)) : [];
}

export function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

export function num(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

export const IMMUTABLE = 'field is immutable';

/** Adds a FieldValueInvalid "field is immutable" cause when `field` of the two objects differs. */
export function immutable(errors: FieldErrors, field: string, now: unknown, before: unknown, message = IMMUTABLE): void {
  if (!jsonEqual(now ?? null, before ?? null)) errors.invalid(field, now, message);
}

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

/** The problems of a data key of a ConfigMap or Secret (upstream's IsConfigMapKey). */
export function configKeyProblems(key: string): string[] {
  const problems: string[] = [];
  if (key.length > 253) problems.push('must be no more than 253 characters');
  if (!CONFIG_KEY.test(key)) {
    problems.push("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name', or 'KEY_NAME', or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')");
  }
  if (key === '.') problems.push("must not be '.'");
  else if (key === '..') problems.push("must not be '..'");
  else if (key.startsWith('..')) problems.push("must not start with '..'");
  return problems;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Standard base64 with padding (Go's encoding/base64.StdEncoding, what []byte fields use). */
export function isBase64(text: string): boolean {
  return BASE64.test(text);
}

/** Where the first character that is not standard base64 is, for Go's "illegal base64 data at input byte N". */
export function base64ErrorOffset(text: string): number {
  const bad = text.search(/[^A-Za-z0-9+/=]/);
  if (bad >= 0) return bad;
  const pad = text.indexOf('=');
  return pad >= 0 && pad < text.length - 2 ? pad : Math.max(0, text.length - (text.length % 4));
}

/** Decoded size in bytes of a base64 text. */
export function base64Size(text: string): number {
  return Buffer.from(text, 'base64').length;
}

/** Quantities written as numbers (`cpu: 2`) become their text ("2"), as upstream reads them. */
export function normalizeQuantities(map: unknown): void {
  const m = rec(map);
  for (const [k, v] of Object.entries(m)) if (typeof v === 'number') m[k] = String(v);
}

/**
 * The same resource served under another group (a compatibility view for clients that hard-code
 * upstream's group names, as kubectl does for `certificate approve` and `auth can-i`): same
 * storage, schema and strategy; objects are stored with the canonical apiVersion and shown with
 * the view's. No short names or categories, so kubectl never finds it ambiguous. `version`
 * serves it under another version of the same shape (the beta names clients fall back to).
 */
export function compatibilityView(def: ResourceDefinition, group: string, hidden: boolean, version = def.version): ResourceDefinition {
  const canonical = apiVersionOf(def);
  const conversion = def.conversion;
  return {
    ...def,
    group,
    version,
    shortNames: [],
    categories: [],
    hidden,
    schema: { ...def.schema, gvk: [{ group, version, kind: def.kind }] },
    conversion: {
      toStorage: (o: WireObject) => ({ ...(conversion === undefined ? o : conversion.toStorage(o)), apiVersion: canonical }),
      fromStorage: (o) => (conversion === undefined ? o : conversion.fromStorage(o)),
    },
  };
}
