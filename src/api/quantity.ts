/**
 * Resource quantities ("10Mi", "200m", "1.5G", "1e3") with the rules of Kubernetes'
 * resource.Quantity: the grammar, the exact value rounded up to nano precision, the format
 * remembered from the suffix, the canonical text, Value() and MilliValue(). Also the byte
 * sizes of the logging options. This file owns only the text form and the arithmetic
 * needed to read it; resource names and their validation live with the configuration.
 *
 * A quantity is held exactly as `mantissa × 10^exponent` (a bigint and an integer), never
 * as a float. Known divergences from Kubernetes, all about malformed text:
 * - a number without any digit ("", "-", ".", "Ki", "e3") is rejected (Kubernetes reads
 *   the last four as zero);
 * - a decimal exponent must fit in int32 (Kubernetes silently truncates a larger one);
 * - formatQuantity always prints the canonical form, where Kubernetes echoes some inputs
 *   verbatim ("+1", "1E3", "01"), which are equal in value.
 */
import { OrchError } from './errors.js';
import { quoteValue } from './quote.js';

/** How a quantity prints, remembered from the suffix it was written with. */
export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

export interface Quantity {
  /** The digits of the value; no trailing zero (they are moved into `exponent`). */
  readonly mantissa: bigint;
  /** The power of ten: value = mantissa × 10^exponent. Never below -9 (nano precision). */
  readonly exponent: number;
  readonly format: QuantityFormat;
}

/** Malformed quantity text. */
export const INVALID_QUANTITY = 'API_INVALID_QUANTITY';
/** A value asked for as an integer that is outside Go's int64 range (where Kubernetes' answer is undefined). */
export const QUANTITY_OUT_OF_RANGE = 'API_QUANTITY_OUT_OF_RANGE';

const FORMS =
  'expected a decimal number with an optional suffix: Ki, Mi, Gi, Ti, Pi, Ei (powers of 1024), ' +
  'n, u, m, k, M, G, T, P, E (powers of 1000) or e<n>/E<n> (powers of 10), e.g. 10Mi, 1.5G, 200m, 1e3';

const DECIMAL_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ['n', -9], ['u', -6], ['m', -3], ['', 0], ['k', 3], ['M', 6], ['G', 9], ['T', 12], ['P', 15], ['E', 18],
]);
const DECIMAL_SUFFIX_OF: ReadonlyMap<number, string> = new Map([...DECIMAL_SUFFIXES].map(([s, e]) => [e, s]));
const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const BINARY_POWERS: ReadonlyMap<string, number> = new Map(BINARY_SUFFIXES.slice(1).map((s, i) => [s, 10 * (i + 1)]));
const INT32_MAX = 2 ** 31 - 1;
const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);
const NANO = -9;

const NUMBER = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$/s;
const EXPONENT = /^[eE]([+-]?[0-9]+)$/;

/**
 * Parses a quantity. Throws OrchError `API_INVALID_QUANTITY` (category invalid) for text
 * outside the grammar, naming `subject` (a field or flag) when given.
 */
export function parseQuantity(text: string, subject?: string): Quantity {
  return parseAs(text, text, subject);
}

/** Parses `text`; errors quote `shown` (the user's text, when `text` is a rewrite of it). */
function parseAs(text: string, shown: string, subject: string | undefined): Quantity {
  const match = NUMBER.exec(text);
  const [, sign = '', whole = '', fraction = '', suffix = ''] = match ?? [];
  if (match === null || whole.length + fraction.length === 0) {
    throw invalid(shown, subject, text === '' ? 'it is empty' : 'it does not start with a number');
  }
  const { format, power } = interpretSuffix(suffix, shown, subject);

  let mantissa = BigInt(whole + fraction);
  let exponent = -fraction.length;
  if (format === 'BinarySI') mantissa <<= BigInt(power);
  else exponent += power;

  // Kubernetes keeps nano precision and rounds a finer non-zero value away from zero.
  if (exponent < NANO) {
    mantissa = divideAwayFromZero(mantissa, NANO - exponent);
    exponent = NANO;
  }
  let finalFormat = format;
  if (format === 'BinarySI') {
    // A binary quantity is capped, silently, at the largest int64 (so "8Ei" is 2^63-1).
    const limit = INT64_MAX * 10n ** BigInt(-exponent);
    if (mantissa > limit) mantissa = limit;
    // Between 0 and 1 it prints as decimal, to avoid rounding ("0.0001Ki" is "102400u").
    if (mantissa !== 0n && compareMagnitude(mantissa, exponent, 1n, 0) < 0) finalFormat = 'DecimalSI';
  }
  if (sign === '-') mantissa = -mantissa;
  return normalized(mantissa, exponent, finalFormat);
}

function interpretSuffix(
  suffix: string,
  text: string,
  subject: string | undefined,
): { format: QuantityFormat; power: number } {
  const decimal = DECIMAL_SUFFIXES.get(suffix);
  if (decimal !== undefined) return { format: 'DecimalSI', power: decimal };
  const binary = BINARY_POWERS.get(suffix);
  if (binary !== undefined) return { format: 'BinarySI', power: binary };
  const exponent = EXPONENT.exec(suffix)?.[1];
  if (exponent !== undefined) {
    const power = Number(exponent);
    if (Math.abs(power) > INT32_MAX) throw invalid(text, subject, `the exponent ${exponent} is out of range (at most ${INT32_MAX} in magnitude)`);
    return { format: 'DecimalExponent', power };
  }
  throw invalid(text, subject, `unknown suffix ${quoteValue(suffix)}`);
}

function invalid(text: string, subject: string | undefined, reason: string): OrchError {
  const where = subject === undefined ? '' : ` for ${subject}`;
  return new OrchError(
    INVALID_QUANTITY,
    'invalid',
    `invalid quantity ${quoteValue(text)}${where}: ${reason}; ${FORMS}`,
    subject === undefined ? {} : { subject },
  );
}

/** Moves trailing zeros of the mantissa into the exponent, so that equal values are equal objects. */
function normalized(mantissa: bigint, exponent: number, format: QuantityFormat): Quantity {
  if (mantissa === 0n) return { mantissa: 0n, exponent: 0, format };
  let m = mantissa;
  let e = exponent;
  while (m % 10n === 0n) {
    m /= 10n;
    e++;
  }
  return { mantissa: m, exponent: e, format };
}

function abs(value: bigint): bigint {
  return value < 0n ? -value : value;
}

function digitCount(value: bigint): number {
  return value === 0n ? 0 : abs(value).toString().length;
}

/** value / 10^places, rounded away from zero; bounded work however large `places` is. */
function divideAwayFromZero(value: bigint, places: number): bigint {
  if (value === 0n) return 0n;
  if (places > digitCount(value)) return value > 0n ? 1n : -1n; // |value| < 10^places
  const divisor = 10n ** BigInt(places);
  const quotient = value / divisor; // truncates toward zero
  if (quotient * divisor === value) return quotient;
  return value > 0n ? quotient + 1n : quotient - 1n;
}

/** Compares |ma × 10^ea| with |mb × 10^eb| without building huge powers of ten. */
function compareMagnitude(ma: bigint, ea: number, mb: bigint, eb: number): number {
  const a = abs(ma);
  const b = abs(mb);
  if (a === 0n || b === 0n) return a === b ? 0 : a === 0n ? -1 : 1;
  const orderA = digitCount(a) + ea;
  const orderB = digitCount(b) + eb;
  if (orderA !== orderB) return orderA < orderB ? -1 : 1;
  const low = Math.min(ea, eb); // same order, so each shift is at most the other's digit count
  const left = a * 10n ** BigInt(ea - low);
  const right = b * 10n ** BigInt(eb - low);
  return left === right ? 0 : left < right ? -1 : 1;
}

/** -1, 0 or 1 as `a` is less than, equal to or greater than `b` in value (formats are ignored). */
export function compareQuantities(a: Quantity, b: Quantity): -1 | 0 | 1 {
  const signA = a.mantissa === 0n ? 0 : a.mantissa < 0n ? -1 : 1;
  const signB = b.mantissa === 0n ? 0 : b.mantissa < 0n ? -1 : 1;
  if (signA !== signB) return signA < signB ? -1 : 1;
  const magnitude = compareMagnitude(a.mantissa, a.exponent, b.mantissa, b.exponent);
  const result = signA < 0 ? -magnitude : magnitude;
  return result === 0 ? 0 : result < 0 ? -1 : 1;
}

/**
 * The canonical text, as Kubernetes prints a quantity it did not keep the input of: the
 * largest suffix of the quantity's format that needs no fraction digits.
 * "1024Mi" gives "1Gi", "1.5Gi" "1536Mi", "1000m" "1", "0.5" "500m", "1.5G" "1500M", "1E3" "1e3".
 */
export function formatQuantity(quantity: Quantity): string {
  const q = normalized(quantity.mantissa, quantity.exponent, quantity.format);
  if (q.mantissa === 0n) return '0';
  // A binary quantity prints as decimal below 1024 in magnitude or when it has a fraction.
  const binary = q.format === 'BinarySI' && q.exponent >= 0 && compareMagnitude(q.mantissa, q.exponent, 1024n, 0) >= 0;
  if (binary) {
    let value = q.mantissa * 10n ** BigInt(q.exponent);
    let power = 0;
    while (power < BINARY_SUFFIXES.length - 1 && value % 1024n === 0n) {
      value /= 1024n;
      power++;
    }
    return `${value}${BINARY_SUFFIXES[power] ?? ''}`;
  }
  let mantissa = q.mantissa;
  let exponent = q.exponent;
  while (exponent % 3 !== 0) {
    mantissa *= 10n;
    exponent--;
  }
  const suffix = q.format === 'DecimalExponent' ? undefined : DECIMAL_SUFFIX_OF.get(exponent);
  // Past "E" DecimalSI has no suffix, and uses the exponent form as Kubernetes does.
  return `${mantissa}${suffix ?? (exponent === 0 ? '' : `e${exponent}`)}`;
}

/** ceil(|q| × 10^shift) with q's sign, as an int64 (Kubernetes' ScaledValue), or an error. */
function scaledInteger(q: Quantity, shift: number, what: string): bigint {
  const exponent = q.exponent + shift;
  let result: bigint;
  if (exponent >= 0) {
    if (digitCount(q.mantissa) + exponent > 19) result = INT64_MAX + 1n; // surely out of range
    else result = q.mantissa * 10n ** BigInt(exponent);
  } else {
    result = divideAwayFromZero(q.mantissa, -exponent);
  }
  if (result > INT64_MAX || result < INT64_MIN) {
    throw new OrchError(
      QUANTITY_OUT_OF_RANGE,
      'invalid',
      `the quantity ${formatQuantity(q)} is too large in magnitude for its ${what} to be an int64`,
    );
  }
  return result;
}

/**
 * The value rounded to an integer away from zero, as Quantity.Value(): "1.2" gives 2 and
 * "-1.2" gives -2. Exact up to 2^53 in magnitude, the nearest double beyond. Throws
 * `API_QUANTITY_OUT_OF_RANGE` beyond int64, where Kubernetes' result is undefined.
 */
export function quantityValue(q: Quantity): number {
  return Number(scaledInteger(q, 0, 'value'));
}

/** The value in thousandths, rounded away from zero, as Quantity.MilliValue(): "0.1m" gives 1. Same limits as quantityValue. */
export function quantityMilliValue(q: Quantity): number {
  return Number(scaledInteger(q, 3, 'milli-value'));
}

/**
 * A size in bytes, as the logging options' infoBufferSize and --log-json-info-buffer-size
 * take it: a quantity ("512", "2Ki", "3M", "5Mi", "6Gi") rounded up to whole bytes. "1K" is
 * accepted as 1000 bytes because the flag's documentation offers it (Kubernetes' parser
 * itself only knows a lowercase "k"). Negative sizes and sizes beyond 2^53 are rejected.
 */
export function parseByteSize(text: string, subject?: string): number {
  const quantity = parseAs(/^[+-]?[0-9.]*K$/.test(text) ? `${text.slice(0, -1)}k` : text, text, subject);
  const where = subject === undefined ? '' : ` for ${subject}`;
  const options = subject === undefined ? {} : { subject };
  if (quantity.mantissa < 0n) {
    throw new OrchError(INVALID_QUANTITY, 'invalid', `invalid byte size ${quoteValue(text)}${where}: it must not be negative`, options);
  }
  if (compareMagnitude(quantity.mantissa, quantity.exponent, BigInt(Number.MAX_SAFE_INTEGER), 0) > 0) {
    throw new OrchError(
      INVALID_QUANTITY,
      'invalid',
      `invalid byte size ${quoteValue(text)}${where}: it must be at most ${Number.MAX_SAFE_INTEGER} bytes`,
      options,
    );
  }
  return quantityValue(quantity);
}
