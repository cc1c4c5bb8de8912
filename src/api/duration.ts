/**
 * Durations as the agent's flags and configuration files write them ("300ms", "2h45m",
 * "-1.5h"), parsed and printed with the rules of Go's `time.ParseDuration` and
 * `time.Duration.String()`, which users of the kubelet know. This file owns only that text
 * form and the conversions to milliseconds; it knows no flags and no timers.
 *
 * Representation: a duration is a plain `number` of nanoseconds.
 * - Why not bigint: every consumer (timers, back-off, comparisons, defaults such as
 *   `2 * MINUTE`) works in numbers, and bigint would force conversions at each of them.
 * - Exactness: parsing is done in bigint, with Go's int64 range and overflow rules, and only
 *   the result is converted. A number holds every integer up to 2^53 ns (about 104 days, or
 *   2501 hours) exactly, which covers every realistic period and timeout. Longer durations,
 *   up to Go's limit of about 292 years, are still accepted (users write "8760h" to mean
 *   "practically never") and are held to the nearest double: exact for round values such as
 *   "8760h", otherwise within about a microsecond.
 */
import { OrchError } from './errors.js';
import { quoteValue } from './quote.js';

export const NANOSECOND = 1;
export const MICROSECOND = 1_000;
export const MILLISECOND = 1_000_000;
export const SECOND = 1_000_000_000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

/** The code of every error thrown here: a text that is not a duration, or out of range. */
export const INVALID_DURATION = 'API_INVALID_DURATION';

const INT64_LIMIT = 1n << 63n; // |min int64|; the largest int64 is one less
const FORMS = 'a decimal number with a unit (ns, us, µs, ms, s, m, h), optionally signed and repeated, e.g. 300ms, 1.5h or 2h45m';

const UNITS: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['µs', 1_000n], // U+00B5 micro sign
  ['μs', 1_000n], // U+03BC Greek small letter mu
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

class DurationSyntaxError extends Error {}

/**
 * Parses a Go duration into nanoseconds. Accepts an optional sign and one or more
 * `<number><unit>` parts, the number having optional fraction digits (".5s" and "1.s" are
 * valid, as in Go); "0" alone needs no unit. Throws OrchError `API_INVALID_DURATION`
 * (category invalid) for anything else, and for a magnitude beyond Go's int64 nanoseconds.
 */
export function parseDuration(text: string): number {
  return parseWithSubject(text, undefined);
}

/** As parseDuration, but the error names `subject` (a field or flag) and carries it. */
export function parseDurationField(text: string, subject: string): number {
  return parseWithSubject(text, subject);
}

function parseWithSubject(text: string, subject: string | undefined): number {
  try {
    return Number(parseNanos(text));
  } catch (err) {
    if (!(err instanceof DurationSyntaxError)) throw err;
    const where = subject === undefined ? '' : ` for ${subject}`;
    throw new OrchError(
      INVALID_DURATION,
      'invalid',
      `invalid duration ${quoteValue(text)}${where}: ${err.message}; expected ${FORMS}`,
      subject === undefined ? {} : { subject },
    );
  }
}

/** The exact int64 nanoseconds of `text`, following Go's algorithm step by step. */
function parseNanos(text: string): bigint {
  let s = text;
  let negative = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    negative = s.startsWith('-');
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') throw new DurationSyntaxError(text === '' ? 'it is empty' : 'a sign needs a number and a unit after it');

  let total = 0n;
  while (s !== '') {
    if (!(s.startsWith('.') || isDigit(s[0]))) {
      throw new DurationSyntaxError(`${quoteValue(s[0])} cannot start a number`);
    }
    const whole = leadingInteger(s);
    s = s.slice(whole.length);
    let fraction = { digits: 0n, scale: 1, length: 0 };
    if (s.startsWith('.')) {
      s = s.slice(1);
      fraction = leadingFraction(s);
      s = s.slice(fraction.length);
    }
    if (whole.length === 0 && fraction.length === 0) throw new DurationSyntaxError('a number needs at least one digit');

    let unitLength = 0;
    while (unitLength < s.length && !(s[unitLength] === '.' || isDigit(s[unitLength]))) unitLength++;
    if (unitLength === 0) throw new DurationSyntaxError('a number is missing its unit');
    const unitText = s.slice(0, unitLength);
    s = s.slice(unitLength);
    const unit = UNITS.get(unitText);
    if (unit === undefined) throw new DurationSyntaxError(`unknown unit ${quoteValue(unitText)}`);

    if (whole.value > INT64_LIMIT / unit) throw new DurationSyntaxError('it is out of range (at most about 2562047h)');
    let part = whole.value * unit;
    if (fraction.digits > 0n) {
      // Go computes the fraction's share in float64 and truncates it; so do we, to agree to the
      // nanosecond (the share is below one unit, at most 3.6e12, so the double is exact enough).
      part += BigInt(Math.trunc(Number(fraction.digits) * (Number(unit) / fraction.scale)));
    }
    total += part;
    if (total > INT64_LIMIT) throw new DurationSyntaxError('it is out of range (at most about 2562047h)');
  }
  if (negative) return -total;
  if (total > INT64_LIMIT - 1n) throw new DurationSyntaxError('it is out of range (at most about 2562047h)');
  return total;
}

/** The leading decimal digits of `s` and their value; more than int64 holds is out of range. */
function leadingInteger(s: string): { value: bigint; length: number } {
  let length = 0;
  while (isDigit(s[length])) length++;
  const value = length === 0 ? 0n : BigInt(s.slice(0, length));
  if (value > INT64_LIMIT) throw new DurationSyntaxError('it is out of range (at most about 2562047h)');
  return { value, length };
}

/** Fraction digits, kept while they fit in int64 (further digits are consumed and ignored, as in Go). */
function leadingFraction(s: string): { digits: bigint; scale: number; length: number } {
  let length = 0;
  let digits = 0n;
  let scale = 1;
  let saturated = false;
  while (isDigit(s[length])) {
    if (!saturated) {
      const next = digits * 10n + BigInt(Number(s[length]));
      if (digits > (INT64_LIMIT - 1n) / 10n || next > INT64_LIMIT) {
        saturated = true;
      } else {
        digits = next;
        scale *= 10;
      }
    }
    length++;
  }
  return { digits, scale, length };
}

/**
 * Prints nanoseconds as Go's Duration.String() does: "0s", "1.5µs", "300ms", "1m30s",
 * "4h0m0s", "-1m0s". A value that is not an integer is rounded to the nearest nanosecond and
 * one beyond int64 is clamped to it; NaN and infinities throw `API_INVALID_DURATION`.
 */
export function formatDuration(ns: number): string {
  if (!Number.isFinite(ns)) {
    throw new OrchError(INVALID_DURATION, 'invalid', `cannot format ${ns} as a duration: only finite numbers of nanoseconds can`);
  }
  let value = BigInt(Math.sign(ns) * Math.round(Math.abs(ns)));
  if (value > INT64_LIMIT - 1n) value = INT64_LIMIT - 1n;
  if (value < -INT64_LIMIT) value = -INT64_LIMIT;
  const negative = value < 0n;
  let u = negative ? -value : value;
  const sign = negative ? '-' : '';

  if (u < 1_000_000_000n) {
    if (u === 0n) return '0s';
    if (u < 1_000n) return `${sign}${u}ns`;
    if (u < 1_000_000n) return `${sign}${decimal(u, 3)}µs`;
    return `${sign}${decimal(u, 6)}ms`;
  }
  const seconds = decimal(u % 60_000_000_000n, 9);
  u /= 60_000_000_000n; // whole minutes
  if (u === 0n) return `${sign}${seconds}s`;
  const minutes = u % 60n;
  u /= 60n; // whole hours; Go stops there, since days vary in length
  if (u === 0n) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${u}h${minutes}m${seconds}s`;
}

/** `value / 10^places` in decimal, without trailing zeros in the fraction (nor its point). */
function decimal(value: bigint, places: number): string {
  const divisor = 10n ** BigInt(places);
  const whole = value / divisor;
  const fraction = (value % divisor).toString().padStart(places, '0').replace(/0+$/, '');
  return fraction === '' ? whole.toString() : `${whole}.${fraction}`;
}

/**
 * Whole milliseconds of a duration, truncated toward zero like Go's Duration.Milliseconds()
 * (so 1.9ms gives 1 and -1.9ms gives -1). Suitable for setTimeout after a sign check.
 */
export function durationToMs(ns: number): number {
  const ms = (ns - (ns % MILLISECOND)) / MILLISECOND;
  return ms === 0 ? 0 : ms; // no -0
}

/** Nanoseconds of a number of milliseconds (which may be fractional). */
export function durationFromMs(ms: number): number {
  const ns = Math.sign(ms) * Math.round(Math.abs(ms * MILLISECOND));
  return ns === 0 ? 0 : ns; // no -0
}
