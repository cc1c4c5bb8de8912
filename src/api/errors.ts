/**
 * The one error base of the project. Every error that crosses a module boundary is an
 * OrchError with a stable `code` (a registry of codes lives in error-codes.ts), a category
 * that the edges (HTTP Status bodies, gRPC codes, process exit) map from, the field, flag,
 * file or object it concerns, and the cause it wraps.
 *
 * Check errors with the category helpers (`isNotFound(err)`), never by message text.
 */

export type ErrorCategory =
  | 'invalid'
  | 'not-found'
  | 'already-exists'
  | 'conflict'
  | 'gone'
  | 'unavailable'
  | 'timeout'
  | 'forbidden'
  | 'unauthorized'
  | 'too-large'
  | 'internal';

export interface OrchErrorOptions {
  /** The field, flag, file or object the error is about, e.g. `--port` or `spec.containers[0].image`. */
  readonly subject?: string;
  readonly cause?: unknown;
}

export class OrchError extends Error {
  readonly code: string;
  readonly category: ErrorCategory;
  readonly subject: string | undefined;

  constructor(code: string, category: ErrorCategory, message: string, options: OrchErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'OrchError';
    this.code = code;
    this.category = category;
    this.subject = options.subject;
  }
}

/** Many validation problems reported at once; `problems` keeps each one (a line of text), in order. */
export class AggregateInvalidError extends OrchError {
  readonly problems: readonly string[];

  constructor(code: string, problems: readonly string[], heading: string) {
    super(code, 'invalid', `${heading}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'AggregateInvalidError';
    this.problems = problems;
  }
}

export function isOrchError(err: unknown): err is OrchError {
  return err instanceof OrchError;
}

function hasCategory(err: unknown, category: ErrorCategory): boolean {
  return err instanceof OrchError && err.category === category;
}

export const isInvalid = (err: unknown): boolean => hasCategory(err, 'invalid');
export const isNotFound = (err: unknown): boolean => hasCategory(err, 'not-found');
export const isAlreadyExists = (err: unknown): boolean => hasCategory(err, 'already-exists');
export const isConflict = (err: unknown): boolean => hasCategory(err, 'conflict');
export const isGone = (err: unknown): boolean => hasCategory(err, 'gone');
export const isUnavailable = (err: unknown): boolean => hasCategory(err, 'unavailable');
export const isTimeout = (err: unknown): boolean => hasCategory(err, 'timeout');

/** The message of any thrown value, for logs. */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
