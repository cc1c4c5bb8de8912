/**
 * Keys, key ranges, resourceVersions and continue tokens: the pure parts of the store's contract,
 * shared by both implementations.
 */
import { invalid, StoreErrorCode } from './errors.js';
import { quoteValue } from '../../api/quote.js';

/** Keys in [start, end), compared byte-wise (UTF-8), as etcd and SQLite's BINARY collation do. */
export interface KeyRange {
  readonly start: string;
  readonly end: string;
}

const SEGMENTS = /^(\/[^/]+)+$/;

/** Throws invalid unless `key` names one object: `/a/b/c`. */
export function checkKey(key: string): void {
  if (!SEGMENTS.test(key) || key.includes('\0')) {
    throw invalid(StoreErrorCode.invalidKey, `invalid key ${quoteValue(key)}: want /segment/.../name`, key);
  }
}

/** Throws invalid unless `prefix` names a set of keys: `/a/` or `/a/b/`. */
export function checkPrefix(prefix: string): void {
  if (!prefix.endsWith('/') || !SEGMENTS.test(prefix.slice(0, -1)) || prefix.includes('\0')) {
    throw invalid(StoreErrorCode.invalidKey, `invalid prefix ${quoteValue(prefix)}: want /segment/.../`, prefix);
  }
}

/** The range of every key under a prefix ending with `/`: `/pods/` -> [`/pods/`, `/pods0`). */
export function prefixRange(prefix: string): KeyRange {
  return { start: prefix, end: `${prefix.slice(0, -1)}0` };
}

/** The range of exactly one key. */
export function keyRange(key: string): KeyRange {
  return { start: key, end: `${key}\0` };
}

/** A prefix (ends with `/`) or a key. */
export function watchRange(keyOrPrefix: string): KeyRange {
  if (keyOrPrefix.endsWith('/')) {
    checkPrefix(keyOrPrefix);
    return prefixRange(keyOrPrefix);
  }
  checkKey(keyOrPrefix);
  return keyRange(keyOrPrefix);
}

const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;

/** "" and absent -> undefined; "0" -> 0; "N" -> N; anything else throws invalid. */
export function parseResourceVersion(value: string | undefined, subject = 'resourceVersion'): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = DECIMAL.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) {
    throw invalid(
      StoreErrorCode.invalidResourceVersion,
      `invalid resourceVersion ${quoteValue(value)}: want a decimal revision`,
      subject,
    );
  }
  return n;
}

interface ContinueToken {
  /** Token format version. */
  readonly v: 1;
  /** The revision of the first page. */
  readonly rv: number;
  /** The last key returned, relative to the listed prefix. */
  readonly after: string;
}

/** Encodes where the next page starts: after `lastKey`, read at `revision`. */
export function encodeContinue(prefix: string, lastKey: string, revision: number): string {
  const token: ContinueToken = { v: 1, rv: revision, after: lastKey.slice(prefix.length) };
  return Buffer.from(JSON.stringify(token), 'utf8').toString('base64url');
}

function badToken(token: string, why: string): Error {
  return invalid(StoreErrorCode.invalidContinue, `invalid continue token ${quoteValue(token)}: ${why}`, 'continue');
}

/** The revision and the first key of the next page (always under `prefix`); throws invalid for a garbled token. */
export function decodeContinue(prefix: string, token: string): { revision: number; start: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch (err) {
    throw badToken(token, `not base64url JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (typeof parsed !== 'object' || parsed === null) throw badToken(token, 'not an object');
  const { v, rv, after } = parsed as Partial<Record<keyof ContinueToken, unknown>>;
  if (v !== 1) throw badToken(token, 'unknown version');
  if (typeof rv !== 'number' || !Number.isSafeInteger(rv) || rv <= 0) throw badToken(token, 'bad revision');
  if (typeof after !== 'string' || after === '' || after.includes('\0')) throw badToken(token, 'bad key');
  // The next page starts right after the last key, and stays under the prefix.
  return { revision: rv, start: `${prefix}${after}\0` };
}
