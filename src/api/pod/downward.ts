/**
 * The pod's own metadata as the downward API shows it, to environment variables and to
 * downwardAPI volume files alike: metadata.name, namespace, uid, labels and annotations (sorted
 * `key="value"` lines, values quoted as Go's %q, no final newline: upstream's FormatMap), and
 * metadata.labels['k'] / metadata.annotations['k'] (the value, or empty).
 */
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';
import { compareCodeUnits } from '../order.js';

const ESCAPES: ReadonlyMap<string, string> = new Map([
  ['\u0007', '\\a'], ['\b', '\\b'], ['\f', '\\f'], ['\n', '\\n'], ['\r', '\\r'], ['\t', '\\t'], ['\v', '\\v'], ['"', '\\"'], ['\\', '\\\\'],
]);
/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** `s` quoted as Go's strconv.Quote (fmt's %q) does. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    const escape = ESCAPES.get(ch);
    if (escape !== undefined) out += escape;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\uFFFD'; // a lone surrogate: Go would hold U+FFFD
    else if (PRINTABLE.test(ch)) out += ch;
    else if (cp < 0x80) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

/** Labels or annotations as a downwardAPI file holds them: sorted `key="value"` lines, no final newline. */
export function formatMap(map: Readonly<Record<string, string>> | undefined): string {
  return Object.keys(map ?? {})
    .sort(compareCodeUnits)
    .map((key) => `${key}=${goQuote(map?.[key] ?? '')}`)
    .join('\n');
}

/** The value of a metadata field path, or undefined when the path is not a metadata one. */
export function metadataFieldValue(meta: ObjectMeta, fieldPath: string): string | undefined {
  const subscript = /^(metadata\.labels|metadata\.annotations)\['(.*)'\]$/s.exec(fieldPath);
  if (subscript !== null) {
    const key = subscript[2] ?? '';
    return (subscript[1] === 'metadata.labels' ? meta.labels?.[key] : meta.annotations?.[key]) ?? '';
  }
  switch (fieldPath) {
    case 'metadata.name':
      return meta.name ?? '';
    case 'metadata.namespace':
      return meta.namespace ?? '';
    case 'metadata.uid':
      return meta.uid ?? '';
    case 'metadata.labels':
      return formatMap(meta.labels);
    case 'metadata.annotations':
      return formatMap(meta.annotations);
    default:
      return undefined;
  }
}
