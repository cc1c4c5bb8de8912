/**
 * The name a write is recorded under: the `fieldManager` query parameter, else (upstream's
 * managerOrUserAgent) the User-Agent up to its first `/`, printable characters only, cut to
 * 128 bytes: `kubectl/v1.30.13 (linux/amd64) kubernetes/...` is `kubectl`, the node agent's
 * `nodeagent`. An apply must name its manager.
 */
import { invalid, type FieldErrorType, type StatusError } from '../status/index.js';

/** Upstream's FieldManagerMaxLength. */
export const FIELD_MANAGER_MAX_LENGTH = 128;

/** Control characters, separators other than the space, and lone surrogates: not printable (Go's unicode.IsPrint). */
const NOT_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]|(?! )\p{Zs}/u;

export function managerFromUserAgent(userAgent: string | undefined): string {
  const first = (userAgent ?? '').split('/')[0] ?? '';
  let out = '';
  let bytes = 0;
  for (const ch of first) {
    if (NOT_PRINTABLE.test(ch)) continue;
    const size = Buffer.byteLength(ch);
    if (bytes + size > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
    bytes += size;
  }
  return out;
}

/** The problem with a `fieldManager` parameter, as upstream's ValidateFieldManager, or undefined. */
function problemOf(manager: string): { type: FieldErrorType; message: string } | undefined {
  if (Buffer.byteLength(manager) > FIELD_MANAGER_MAX_LENGTH) {
    return { type: 'FieldValueTooLong', message: `Too long: may not be more than ${FIELD_MANAGER_MAX_LENGTH} bytes` };
  }
  for (const ch of manager) {
    if (NOT_PRINTABLE.test(ch)) return { type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(manager)}: invalid characters` };
  }
  return undefined;
}

/**
 * The manager of a write: `given` (the query parameter) when set, else from the User-Agent. For
 * an apply the parameter is required. Throws 422 (kind of the options: CreateOptions,
 * UpdateOptions, PatchOptions) naming the field.
 */
export function resolveManager(given: string | undefined, userAgent: string | undefined, options: { apply: boolean; kind: string }): string {
  if (given !== undefined && given !== '') {
    const problem = problemOf(given);
    if (problem !== undefined) throw fieldManagerInvalid(options.kind, problem.type, problem.message);
    return given;
  }
  if (options.apply) throw fieldManagerInvalid(options.kind, 'FieldValueRequired', 'Required value: is required for apply patch');
  return managerFromUserAgent(userAgent);
}

function fieldManagerInvalid(kind: string, type: FieldErrorType, message: string): StatusError {
  return invalid(kind, 'meta.k8s.io', '', [{ type, field: 'fieldManager', message }]);
}
