/**
 * The name rules of Kubernetes' apimachinery that labels, taints, annotations and object
 * names follow: qualified names (label keys), label values, DNS-1123 subdomains and labels,
 * DNS-1035 labels; and the `k1=v1,k2=v2` flag form of string maps. Validators return the
 * list of problems (empty when valid) so that callers can report every problem at once;
 * they accept and reject exactly what Kubernetes does, in messages of our own. This file
 * knows no particular field: callers add the subject to each problem.
 */
import { OrchError } from './errors.js';
import { quoteValue } from './quote.js';

export const QUALIFIED_NAME_MAX_LENGTH = 63;
export const LABEL_VALUE_MAX_LENGTH = 63;
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
export const DNS1123_LABEL_MAX_LENGTH = 63;
export const DNS1035_LABEL_MAX_LENGTH = 63;

/** A `key=value` list item without '='. */
export const INVALID_KEY_VALUE = 'API_INVALID_KEY_VALUE';

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

const QUALIFIED_CHARS =
  "must consist of letters, digits, '-', '_' or '.', and start and end with a letter or digit (e.g. 'MyName', 'my.name', '123-abc')";

/** Length in bytes, as Go counts it (the same as characters for every valid name). */
function byteLength(value: string): number {
  return Buffer.byteLength(value, 'utf8');
}

function tooLong(max: number, value: string): string {
  return `must be at most ${max} characters (it has ${byteLength(value)})`;
}

/**
 * A label key, annotation key or taint key: an optional DNS-1123 subdomain prefix and '/',
 * then a name of 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter
 * or digit. E.g. "app", "example.com/My_Name".
 */
export function validateQualifiedName(value: string): string[] {
  const parts = value.split('/');
  if (parts.length > 2) {
    return [`must be a name with an optional DNS subdomain prefix and a single '/' (e.g. 'example.com/my-name'), not ${parts.length - 1} '/'`];
  }
  const problems: string[] = [];
  const name = parts.length === 2 ? (parts[1] ?? '') : value;
  if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    if (prefix === '') problems.push('prefix part must not be empty');
    else problems.push(...validateDNS1123Subdomain(prefix).map((p) => `prefix part ${p}`));
  }
  if (name === '') {
    problems.push('name part must not be empty');
    return problems;
  }
  if (byteLength(name) > QUALIFIED_NAME_MAX_LENGTH) problems.push(`name part ${tooLong(QUALIFIED_NAME_MAX_LENGTH, name)}`);
  if (!QUALIFIED_NAME.test(name)) problems.push(`name part ${QUALIFIED_CHARS}`);
  return problems;
}

/** A label value (or taint value): empty, or up to 63 characters with the rules of a qualified name's name part. */
export function validateLabelValue(value: string): string[] {
  const problems: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) problems.push(tooLong(LABEL_VALUE_MAX_LENGTH, value));
  if (value !== '' && !QUALIFIED_NAME.test(value)) {
    problems.push(
      "must be empty or consist of letters, digits, '-', '_' or '.', and start and end with a letter or digit (e.g. 'MyValue', 'my_value', '12345')",
    );
  }
  return problems;
}

/**
 * A DNS-1123 subdomain (most object names): at most 253 characters, dot-separated labels of
 * lowercase letters, digits and '-', each starting and ending with a letter or digit.
 */
export function validateDNS1123Subdomain(value: string): string[] {
  const problems: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) problems.push(tooLong(DNS1123_SUBDOMAIN_MAX_LENGTH, value));
  if (!DNS1123_SUBDOMAIN.test(value)) {
    problems.push(
      "must be a lowercase DNS-1123 subdomain: labels of lowercase letters, digits and '-', separated by '.', each starting and ending with a letter or digit (e.g. 'example.com')",
    );
  }
  return problems;
}

/** A DNS-1123 label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit. */
export function validateDNS1123Label(value: string): string[] {
  const problems: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) problems.push(tooLong(DNS1123_LABEL_MAX_LENGTH, value));
  if (!DNS1123_LABEL.test(value)) {
    problems.push(
      "must be a lowercase DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit (e.g. 'my-name', '123-abc')",
    );
  }
  return problems;
}

/** A DNS-1035 label: as a DNS-1123 label, but starting with a letter. */
export function validateDNS1035Label(value: string): string[] {
  const problems: string[] = [];
  if (byteLength(value) > DNS1035_LABEL_MAX_LENGTH) problems.push(tooLong(DNS1035_LABEL_MAX_LENGTH, value));
  if (!DNS1035_LABEL.test(value)) {
    problems.push(
      "must be a lowercase DNS-1035 label: lowercase letters, digits and '-', starting with a letter and ending with a letter or digit (e.g. 'my-name', 'abc-123')",
    );
  }
  return problems;
}

/**
 * Reads a `k1=v1,k2=v2` flag value as the kubelet's map flags do (--node-labels,
 * --system-reserved): items split on ',', empty items skipped, each split at its first '='
 * (so values may contain '='), key and value trimmed of surrounding whitespace, a later
 * key replacing an earlier one. "" gives an empty map. Keys and values are not validated.
 * Throws OrchError `API_INVALID_KEY_VALUE` naming `subject` and the item without '='.
 */
export function parseKeyValuePairs(text: string, subject: string): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const item of text.split(',')) {
    if (item === '') continue;
    const at = item.indexOf('=');
    if (at < 0) {
      throw new OrchError(
        INVALID_KEY_VALUE,
        'invalid',
        `${subject}: item ${quoteValue(item)} is not of the form key=value (expected key=value pairs separated by ',', e.g. a=1,b=2)`,
        { subject },
      );
    }
    pairs.set(item.slice(0, at).trim(), item.slice(at + 1).trim());
  }
  return pairs;
}
