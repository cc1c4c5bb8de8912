/**
 * The API server's failure answers as errors: an HTTP status and its Status body (kind Status:
 * message, reason, code, details) become an OrchApiError, an OrchError whose category follows
 * the status (409 AlreadyExists already-exists, other 409 conflict, 410 gone, 429/5xx
 * unavailable, 504 timeout, …) and which keeps the decoded Status on `status`, so callers can
 * tell AlreadyExists from Conflict or see a 410 without parsing messages: `statusOf(err)`.
 */
import { OrchError, type ErrorCategory } from '../../api/errors.js';
import type { WatchEvent } from './rest-types.js';

export const ORCHCLIENT_REQUEST_FAILED = 'ORCHCLIENT_REQUEST_FAILED';
export const ORCHCLIENT_TIMEOUT = 'ORCHCLIENT_TIMEOUT';
export const ORCHCLIENT_UNAVAILABLE = 'ORCHCLIENT_UNAVAILABLE';
/** The caller's AbortSignal fired, or the client was closed, before the answer came. */
export const ORCHCLIENT_ABORTED = 'ORCHCLIENT_ABORTED';

export interface ApiStatusCause {
  readonly reason?: string;
  readonly message?: string;
  readonly field?: string;
}

/** A meta/v1 Status as the server sends it (every field optional: proxies send other things). */
export interface ApiStatus {
  readonly kind?: string;
  readonly apiVersion?: string;
  readonly status?: string;
  readonly message?: string;
  /** AlreadyExists, Conflict, NotFound, Gone, Expired, Invalid, TooManyRequests, … */
  readonly reason?: string;
  readonly code?: number;
  readonly details?: {
    readonly name?: string;
    readonly group?: string;
    readonly kind?: string;
    readonly uid?: string;
    readonly causes?: readonly ApiStatusCause[];
    readonly retryAfterSeconds?: number;
  };
}

/** A failure answer of the API server (or a watch ERROR event), with its Status. */
export class OrchApiError extends OrchError {
  /** The HTTP status (for a watch ERROR event: the Status's code). */
  readonly httpCode: number;
  readonly status: ApiStatus;

  constructor(httpCode: number, status: ApiStatus, message: string, subject: string) {
    super(ORCHCLIENT_REQUEST_FAILED, categoryOf(httpCode, status.reason), message, { subject });
    this.name = 'OrchApiError';
    this.httpCode = httpCode;
    this.status = status;
  }
}

/** The category of an HTTP failure status (the reason tells AlreadyExists from Conflict). */
export function categoryOf(httpCode: number, reason?: string): ErrorCategory {
  if (httpCode === 409) return reason === 'AlreadyExists' ? 'already-exists' : 'conflict';
  if (httpCode === 410) return 'gone';
  if (httpCode === 413) return 'too-large';
  if (httpCode === 504) return 'timeout';
  if (httpCode === 401) return 'unauthorized';
  if (httpCode === 403) return 'forbidden';
  if (httpCode === 404) return 'not-found';
  if (httpCode === 429 || httpCode >= 500) return 'unavailable';
  if (httpCode >= 400 && httpCode < 500) return 'invalid';
  return 'internal';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Decodes a failure body: the Status when it is one, else a Status made of the text. */
export function decodeStatus(httpCode: number, text: string): ApiStatus {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (isRecord(parsed) && (parsed.kind === 'Status' || typeof parsed.message === 'string')) {
      return { ...(parsed as ApiStatus), code: typeof parsed.code === 'number' ? parsed.code : httpCode };
    }
  } catch {
    // Not JSON (a proxy's page, plain text): the text itself is the best message there is.
  }
  const message = text.trim().slice(0, 300);
  return { kind: 'Status', status: 'Failure', code: httpCode, ...(message === '' ? {} : { message }) };
}

/** The error of a non-2xx answer to `method path`. */
export function errorFromResponse(method: string, path: string, httpCode: number, text: string): OrchApiError {
  const status = decodeStatus(httpCode, text);
  const message = status.message ?? status.reason ?? '';
  return new OrchApiError(httpCode, status, `${method} ${path}: ${httpCode} ${message}`.trimEnd(), path);
}

/** The error an ERROR watch event carries (its object is a Status; code 410 means re-list). */
export function errorFromWatchEvent(path: string, event: WatchEvent<unknown>): OrchApiError {
  const object: Record<string, unknown> = isRecord(event.object) ? event.object : {};
  const code = typeof object.code === 'number' ? object.code : 500;
  const status: ApiStatus = { ...(object as ApiStatus), code };
  return new OrchApiError(code, status, `watch ${path}: ${code} ${status.message ?? status.reason ?? 'error event'}`, path);
}

/** The Status kept on an error from this client, or undefined for any other error. */
export function statusOf(err: unknown): ApiStatus | undefined {
  return err instanceof OrchApiError ? err.status : undefined;
}

/** True for a 410 Gone/Expired answer or ERROR event: the resourceVersion is too old, list again. */
export function isResourceExpired(err: unknown): boolean {
  return err instanceof OrchApiError && (err.httpCode === 410 || err.status.reason === 'Expired' || err.status.reason === 'Gone');
}

/**
 * A read asked for a resourceVersion the server (its watch cache) has not reached: 504 with the
 * cause ResourceVersionTooLarge (upstream's isTooLargeResourceVersionError).
 */
export function isResourceVersionTooLarge(err: unknown): boolean {
  if (!(err instanceof OrchApiError)) return false;
  if ((err.status.details?.causes ?? []).some((c) => c.reason === 'ResourceVersionTooLarge')) return true;
  return err.httpCode === 504 && (err.status.message ?? '').includes('Too large resource version');
}
