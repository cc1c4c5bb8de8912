/**
 * The small rules that the pod validators share: the problem list, enumerations, port
 * numbers and names, paths, IP addresses and quantities. Every problem is one line,
 * `field.path: message`.
 */
import { isIP } from 'node:net';

import { messageOf } from '../errors.js';
import { validateDNS1123Label, validateDNS1123Subdomain, validateQualifiedName } from '../labels.js';
import { parseQuantity, type Quantity } from '../quantity.js';
import { quoteValue } from '../quote.js';

/** Collects problems as `path: message` lines. */
export class Problems {
  readonly lines: string[] = [];

  add(path: string, message: string): void {
    this.lines.push(`${path}: ${message}`);
  }

  /** One line per message of a name rule, each saying which value broke it. */
  addEach(path: string, value: string, messages: readonly string[]): void {
    for (const m of messages) this.add(path, `${quoteValue(value)} ${m}`);
  }
}

export function quote(value: string): string {
  return quoteValue(value);
}

/** Checks that `value` is one of `allowed`; an empty or missing value is "required". */
export function checkEnum(p: Problems, path: string, value: string | undefined, allowed: readonly string[]): void {
  if (value === undefined || value === '') {
    p.add(path, `is required: one of ${allowed.join(', ')}`);
    return;
  }
  if (!allowed.includes(value)) p.add(path, `${quote(value)} is not supported: must be one of ${allowed.join(', ')}`);
}

/** Checks an optional value against `allowed` (an empty value is allowed when '' is in the list). */
export function checkOptionalEnum(p: Problems, path: string, value: string | undefined, allowed: readonly string[]): void {
  if (value === undefined) return;
  if (!allowed.includes(value)) {
    const shown = allowed.map((a) => (a === '' ? "'' (empty)" : a)).join(', ');
    p.add(path, `${quote(value)} is not supported: must be one of ${shown}`);
  }
}

export function checkDNSLabel(p: Problems, path: string, value: string): void {
  p.addEach(path, value, validateDNS1123Label(value));
}

export function checkDNSSubdomain(p: Problems, path: string, value: string): void {
  p.addEach(path, value, validateDNS1123Subdomain(value));
}

/** A number that must lie in [min, max]. */
export function checkRange(p: Problems, path: string, value: number | undefined, min: number, max: number): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || value < min || value > max) {
    p.add(path, `${value} is out of range: must be an integer from ${min} to ${max}`);
  }
}

export function checkNonNegative(p: Problems, path: string, value: number | undefined): void {
  if (value !== undefined && value < 0) p.add(path, `${value} must not be negative`);
}

const IANA_SVC_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/** The problems of a named port (IANA service name rules: at most 15 characters, lowercase letters, digits, '-'). */
export function ianaServiceNameProblems(name: string): string[] {
  const problems: string[] = [];
  if (name.length > 15) problems.push(`must be at most 15 characters (it has ${name.length})`);
  if (!IANA_SVC_NAME.test(name)) {
    problems.push("must consist of lowercase letters, digits and '-', and start and end with a letter or digit (e.g. 'http')");
  }
  if (name.includes('--')) problems.push("must not contain two '-' in a row");
  if (!/[a-z]/.test(name)) problems.push("must contain at least one letter (e.g. 'web1')");
  return problems;
}

/** A port given as a number (1-65535) or a port name. */
export function checkPortNumberOrName(p: Problems, path: string, port: number | string | undefined): void {
  if (port === undefined || port === '') {
    p.add(path, 'is required: a port number (1-65535) or a port name');
    return;
  }
  if (typeof port === 'number') checkRange(p, path, port, 1, 65535);
  else p.addEach(path, port, ianaServiceNameProblems(port));
}

export function checkIP(p: Problems, path: string, value: string): void {
  if (isIP(value) === 0) p.add(path, `${quote(value)} is not a valid IPv4 or IPv6 address`);
}

/** A path that must be absolute and, when `noBacksteps`, have no '..' element. */
export function checkAbsolutePath(p: Problems, path: string, value: string | undefined, noBacksteps: boolean): void {
  if (value === undefined || value === '') {
    p.add(path, 'is required: an absolute path');
    return;
  }
  if (!value.startsWith('/')) p.add(path, `${quote(value)} must be an absolute path (starting with '/')`);
  if (noBacksteps && value.split('/').includes('..')) p.add(path, `${quote(value)} must not contain '..'`);
}

/** A path that must be relative and stay below its base: not absolute, no '..' element. */
export function checkRelativePath(p: Problems, path: string, value: string): void {
  if (value.startsWith('/')) p.add(path, `${quote(value)} must be a relative path (not starting with '/')`);
  if (value.split('/').includes('..')) p.add(path, `${quote(value)} must not contain '..'`);
}

/** Parses a quantity field; records the problem and returns undefined when it is malformed. */
export function checkQuantity(p: Problems, path: string, text: string): Quantity | undefined {
  try {
    return parseQuantity(text);
  } catch (err) {
    p.add(path, messageOf(err));
    return undefined;
  }
}

/** Counts the keys of `obj` (among `keys`) whose value is set; for "exactly one of" rules. */
export function setKeys<T extends object>(obj: T, keys: readonly (keyof T & string)[]): string[] {
  return keys.filter((k) => obj[k] !== undefined);
}

/** The file mode of volume files: 0 to 0777. */
export function checkFileMode(p: Problems, path: string, mode: number | undefined): void {
  if (mode === undefined) return;
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) {
    p.add(path, `${mode} must be a file mode from 0 to 0777 (511 in decimal)`);
  }
}

/** The pod fields that environment variables may read through the downward API. */
export const ENV_FIELD_PATHS = [
  'metadata.name', 'metadata.namespace', 'metadata.uid', 'spec.nodeName', 'spec.serviceAccountName',
  'status.hostIP', 'status.hostIPs', 'status.podIP', 'status.podIPs',
] as const;
/** The pod fields that downwardAPI volume files may hold. */
export const VOLUME_FIELD_PATHS = ['metadata.name', 'metadata.namespace', 'metadata.uid', 'metadata.labels', 'metadata.annotations'] as const;

const SUBSCRIPTED = /^(metadata\.labels|metadata\.annotations)\['(.*)'\]$/s;

/** A downward API reference `{ apiVersion, fieldPath }` whose path is in `allowed` or subscripts labels/annotations. */
export function checkFieldRef(
  p: Problems,
  path: string,
  ref: { readonly apiVersion?: string; readonly fieldPath: string },
  allowed: readonly string[],
): void {
  const version = ref.apiVersion ?? '';
  if (version === '') p.add(`${path}.apiVersion`, 'is required (v1)');
  else if (version !== 'v1') p.add(`${path}.apiVersion`, `${quote(version)} is not supported: the only version is v1`);
  const fieldPath = ref.fieldPath as string | undefined;
  if (fieldPath === undefined || fieldPath === '') {
    p.add(`${path}.fieldPath`, `is required: one of ${allowed.join(', ')}, metadata.labels['<key>'] or metadata.annotations['<key>']`);
    return;
  }
  const subscripted = SUBSCRIPTED.exec(fieldPath);
  if (subscripted !== null) {
    const key = subscripted[2] ?? '';
    const problems = subscripted[1] === 'metadata.labels' ? validateQualifiedName(key) : validateQualifiedName(key.toLowerCase());
    p.addEach(`${path}.fieldPath`, fieldPath, problems.map((m) => `has a key that ${m}`));
    return;
  }
  if (!allowed.includes(fieldPath)) {
    p.add(
      `${path}.fieldPath`,
      `${quote(fieldPath)} is not supported: must be one of ${allowed.join(', ')}, metadata.labels['<key>'] or metadata.annotations['<key>']`,
    );
  }
}

/**
 * `value`, typed as possibly missing: decoded input may lack a field that the core/v1 type
 * calls required (spec.containers), and validation must say so rather than fail.
 */
export function maybe<T>(value: T): T | undefined {
  return value;
}
