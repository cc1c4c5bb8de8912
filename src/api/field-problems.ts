/**
 * The sink that validators shared by both binaries report into, one call per problem with the
 * field's path, in the four kinds of apimachinery's field errors. The API server's FieldErrors
 * (422 causes) implements it; `problemLines` turns the calls into the `field: message` lines of
 * the pod validation, which the node agent and the API server both read.
 */
import { quoteValue } from './quote.js';

export interface FieldProblems {
  /** The field is missing; `detail` says what is expected. */
  required(field: string, detail?: string): void;
  invalid(field: string, value: unknown, detail: string): void;
  notSupported(field: string, value: unknown, supported: readonly string[]): void;
  forbidden(field: string, detail: string): void;
}

/** A sink that appends `field: message` lines (messages as src/api/pod's validators word them). */
export function problemLines(lines: string[]): FieldProblems {
  return {
    required: (field, detail = '') => { lines.push(`${field}: is required${detail === '' ? '' : `: ${detail}`}`); },
    invalid: (field, value, detail) => { lines.push(`${field}: ${quoteValue(value)} ${detail}`); },
    notSupported: (field, value, supported) => {
      lines.push(`${field}: ${quoteValue(value)} is not supported: must be one of ${supported.join(', ')}`);
    },
    forbidden: (field, detail) => { lines.push(`${field}: ${detail}`); },
  };
}

/**
 * `value`, typed as possibly missing: decoded input may lack a field that its kubernetes-types
 * type calls required, and a validator must say so rather than fail.
 */
export function maybe<T>(value: T): T | undefined {
  return value;
}
