/**
 * Interprets a flag's text by its type, with the accumulation rules of upstream's flag
 * values: lists append on repeats, maps merge (the first occurrence replaces the default),
 * the header multimap appends same-named headers in order, reserved memory appends.
 * Every failure is a message naming the flag, the text and what is allowed.
 */
import { isIP } from 'node:net';
import { parseDuration } from '../../../api/duration.js';
import { messageOf } from '../../../api/errors.js';
import { parseTaints } from '../../../api/taints.js';
import type { FlagSpec } from './table.js';
import { quoteValue } from '../../../api/quote.js';

/** `unchanged`: the flag was given but leaves its target as it was (an empty --address=). */
export type FlagValueResult = { ok: true; value: unknown; unchanged?: true } | { ok: false; error: string };

/** Go's strconv.ParseBool. */
export function parseGoBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(text)) return false;
  return undefined;
}

/** Go's strconv.ParseInt(text, 0, bits): base prefixes 0x, 0o, 0b and a leading 0 for octal. */
export function parseGoInt(text: string, bits: 32 | 64): number | undefined {
  const m = /^([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.exec(text);
  if (m === null) return undefined;
  const sign = m[1] === '-' ? -1n : 1n;
  const digits = m[2] ?? '';
  let n: bigint;
  if (/^0[xXoObB]/.test(digits)) n = BigInt(digits.toLowerCase());
  else if (digits.length > 1 && digits.startsWith('0')) n = BigInt(`0o${digits.slice(1)}`);
  else n = BigInt(digits);
  n *= sign;
  const min = bits === 32 ? -(2n ** 31n) : BigInt(Number.MIN_SAFE_INTEGER);
  const max = bits === 32 ? 2n ** 31n - 1n : BigInt(Number.MAX_SAFE_INTEGER);
  if (n < min || n > max) return undefined;
  return Number(n);
}

function splitList(text: string): string[] {
  return text === '' ? [] : text.split(',').map((s) => s.trim());
}

/** Parses `k<sep>v` items of a comma-separated list into `into`. */
function parsePairs(text: string, sep: string, into: Record<string, string>, example: string): string | undefined {
  for (const item of splitList(text)) {
    if (item === '') continue;
    const at = item.indexOf(sep);
    if (at <= 0) return `malformed pair ${quoteValue(item)}, expected ${example}`;
    into[item.slice(0, at).trim()] = item.slice(at + 1).trim();
  }
  return undefined;
}

/**
 * The value of one occurrence of a flag. `previous` is the value produced by an earlier
 * occurrence of the same flag on this command line (undefined for the first one).
 */
export function parseFlagValue(spec: FlagSpec, text: string, previous: unknown): FlagValueResult {
  const bad = (allowed: string): FlagValueResult => ({
    ok: false,
    error: `invalid value ${quoteValue(text)} for flag --${spec.name}: ${allowed}`,
  });
  switch (spec.type) {
    case 'string':
      return { ok: true, value: text };
    case 'ip':
      if (text === '') return { ok: true, value: previous, unchanged: true };
      return isIP(text) === 0 ? bad('expected an IPv4 or IPv6 address') : { ok: true, value: text };
    case 'bool':
    case 'help': {
      const b = parseGoBool(text);
      return b === undefined ? bad('expected true or false') : { ok: true, value: b };
    }
    case 'int32':
    case 'int':
    case 'int64': {
      const n = parseGoInt(text, spec.type === 'int32' ? 32 : 64);
      return n === undefined ? bad(`expected an integer (${spec.type === 'int32' ? 'int32' : 'int64'})`) : { ok: true, value: n };
    }
    case 'level': {
      const n = parseGoInt(text, 32);
      return n === undefined || n < 0 ? bad('expected a verbosity level, a non-negative integer') : { ok: true, value: n };
    }
    case 'duration':
      try {
        return { ok: true, value: parseDuration(text) };
      } catch (err) {
        return bad(messageOf(err));
      }
    case 'strings': {
      const prev = Array.isArray(previous) ? (previous as string[]) : [];
      return { ok: true, value: [...prev, ...splitList(text)] };
    }
    case 'map':
    case 'langle-map': {
      const into: Record<string, string> = { ...(previous as Record<string, string> | undefined) };
      const sep = spec.type === 'map' ? '=' : '<';
      const err = parsePairs(text, sep, into, spec.type === 'map' ? 'key=value' : 'signal<threshold, e.g. memory.available<1Gi');
      return err === undefined ? { ok: true, value: into } : bad(err);
    }
    case 'map-bool': {
      const pairs: Record<string, string> = {};
      const err = parsePairs(text, '=', pairs, 'Name=true|false');
      if (err !== undefined) return bad(err);
      const into: Record<string, boolean> = { ...(previous as Record<string, boolean> | undefined) };
      for (const [k, v] of Object.entries(pairs)) {
        const b = parseGoBool(v);
        if (b === undefined) return bad(`the value of ${k} must be true or false, got ${quoteValue(v)}`);
        into[k] = b;
      }
      return { ok: true, value: into };
    }
    case 'header-map': {
      const into: Record<string, string[]> = {};
      for (const [k, v] of Object.entries((previous as Record<string, string[]> | undefined) ?? {})) into[k] = [...v];
      for (const item of splitList(text)) {
        if (item === '') continue;
        const at = item.indexOf(':');
        if (at <= 0) return bad(`malformed header ${quoteValue(item)}, expected name:value`);
        const name = item.slice(0, at).trim();
        (into[name] ??= []).push(item.slice(at + 1).trim());
      }
      return { ok: true, value: into };
    }
    case 'reserved-memory': {
      const out = [...((previous as { numaNode: number; limits: Record<string, string> }[] | undefined) ?? [])];
      for (const entry of text.split(';').map((s) => s.trim()).filter((s) => s !== '')) {
        const colon = entry.indexOf(':');
        const node = colon > 0 ? parseGoInt(entry.slice(0, colon).trim(), 32) : undefined;
        if (node === undefined || node < 0) {
          return bad('expected <numa-node>:<resource>=<quantity>[,<resource>=<quantity>...], e.g. 0:memory=1Gi,hugepages-2Mi=2Gi');
        }
        const limits: Record<string, string> = {};
        const err = parsePairs(entry.slice(colon + 1), '=', limits, 'resource=quantity');
        if (err !== undefined) return bad(err);
        out.push({ numaNode: node, limits });
      }
      return { ok: true, value: out };
    }
    case 'taints':
      try {
        return {
          ok: true,
          value: parseTaints(text).map((t) => ({ key: t.key, value: t.value ?? '', effect: t.effect, timeAdded: null })),
        };
      } catch (err) {
        return bad(messageOf(err));
      }
    case 'vmodule': {
      const out = [...((previous as { filePattern: string; verbosity: number }[] | undefined) ?? [])];
      for (const item of splitList(text)) {
        if (item === '') continue;
        const at = item.lastIndexOf('=');
        const level = at > 0 ? parseGoInt(item.slice(at + 1), 32) : undefined;
        if (level === undefined || level < 0) return bad(`malformed item ${quoteValue(item)}, expected pattern=N`);
        out.push({ filePattern: item.slice(0, at), verbosity: level });
      }
      return { ok: true, value: out };
    }
    case 'version':
      if (text === 'true' || text === 'false' || text === 'raw' || /^v\d+\.\d+\.\d+([-+][0-9A-Za-z.+-]+)?$/.test(text)) {
        return { ok: true, value: text };
      }
      return bad('expected true, false, raw or a version vX.Y.Z');
  }
}
