/**
 * A deterministic JSON text of a value: object keys sorted (by UTF-16 code units), no
 * spaces, undefined members left out. Two values that are deep-equal as JSON give the same
 * text, whatever the order their keys were written in; the static pod UID hashes it and
 * the pod config merger compares with it.
 */
import { compareKeys } from '../../api/order.js';
export function canonicalJSON(value: unknown): string {
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    return `[${value.map((item: unknown) => (item === undefined ? 'null' : canonicalJSON(item))).join(',')}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(compareKeys);
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJSON(v)}`).join(',')}}`;
}
