/**
 * Deep equality of JSON values, key order ignored: whether two values would be written as the
 * same JSON document. A key whose value is undefined counts as absent, as JSON.stringify leaves
 * it out. Stops at the first difference and allocates nothing (the agent compares each pod
 * status it computes with the last one this way, several times per pod and sync).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let keys = 0;
  for (const key of Object.keys(left)) {
    const value = left[key];
    if (value === undefined) continue;
    keys++;
    if (!Object.hasOwn(right, key) || !jsonEqual(value, right[key])) return false;
  }
  for (const key of Object.keys(right)) if (right[key] !== undefined) keys--;
  return keys === 0;
}
