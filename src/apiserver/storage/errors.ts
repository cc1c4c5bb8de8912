/**
 * The error codes of the storage layer and the constructors that make them. The HTTP layer maps
 * categories to Status codes: not-found 404, already-exists 409, conflict 409, gone 410,
 * timeout 504, unavailable 503, invalid 400.
 */
import { OrchError, type ErrorCategory } from '../../api/errors.js';

export const StoreErrorCode = {
  /** No object at the key. */
  notFound: 'STORE_NOT_FOUND',
  /** create: an object exists at the key. */
  alreadyExists: 'STORE_ALREADY_EXISTS',
  /** The object's resourceVersion is not the expected one. */
  conflict: 'STORE_CONFLICT',
  /** delete: the object's uid is not the expected one. */
  preconditionFailed: 'STORE_PRECONDITION_FAILED',
  /** watch or exact list: the history after that resourceVersion was compacted. */
  rvTooOld: 'STORE_RV_TOO_OLD',
  /** list: the revision of the continue token was compacted; list again from the start. */
  continueExpired: 'STORE_CONTINUE_EXPIRED',
  /** The resourceVersion is newer than the store's revision. */
  rvTooLarge: 'STORE_RV_TOO_LARGE',
  /** A key or prefix is malformed. */
  invalidKey: 'STORE_INVALID_KEY',
  /** A resourceVersion is not a decimal revision. */
  invalidResourceVersion: 'STORE_INVALID_RESOURCE_VERSION',
  /** A continue token was not made by this store for this prefix. */
  invalidContinue: 'STORE_INVALID_CONTINUE',
  /** The object is not a JSON object (or its metadata is not). */
  invalidObject: 'STORE_INVALID_OBJECT',
  /** An option is out of range (limit, ttlSeconds, resourceVersionMatch without a resourceVersion). */
  invalidOption: 'STORE_INVALID_OPTION',
  /** The backing database cannot be reached or failed (etcd down, disk error, store closed). */
  unavailable: 'STORE_UNAVAILABLE',
  /** Something the store did not expect from its backing database. */
  internal: 'STORE_INTERNAL',
} as const;

export type StoreErrorCodeValue = (typeof StoreErrorCode)[keyof typeof StoreErrorCode];

function storeError(
  code: StoreErrorCodeValue,
  category: ErrorCategory,
  message: string,
  subject: string,
  cause?: unknown,
): OrchError {
  return new OrchError(code, category, message, cause === undefined ? { subject } : { subject, cause });
}

export const notFound = (key: string): OrchError =>
  storeError(StoreErrorCode.notFound, 'not-found', `no object at ${key}`, key);

export const alreadyExists = (key: string): OrchError =>
  storeError(StoreErrorCode.alreadyExists, 'already-exists', `an object already exists at ${key}`, key);

export const conflict = (key: string, expected: string, actual: string): OrchError =>
  storeError(
    StoreErrorCode.conflict,
    'conflict',
    `the object at ${key} has been modified: expected resourceVersion ${expected}, found ${actual}`,
    key,
  );

export const uidMismatch = (key: string, expected: string, actual: string): OrchError =>
  storeError(
    StoreErrorCode.preconditionFailed,
    'conflict',
    `precondition failed for ${key}: expected uid ${expected}, found ${actual === '' ? 'none' : actual}`,
    key,
  );

export const tooOld = (revision: number, compacted: number): OrchError =>
  storeError(
    StoreErrorCode.rvTooOld,
    'gone',
    `resourceVersion ${revision} is too old: history before ${compacted} was compacted`,
    'resourceVersion',
  );

export const continueExpired = (revision: number): OrchError =>
  storeError(
    StoreErrorCode.continueExpired,
    'gone',
    `the continue token expired: revision ${revision} was compacted; list again without continue`,
    'continue',
  );

export const tooLarge = (revision: number, current: number): OrchError =>
  storeError(
    StoreErrorCode.rvTooLarge,
    'timeout',
    `Too large resource version: ${revision}, current: ${current}`,
    'resourceVersion',
  );

export const invalid = (
  code: StoreErrorCodeValue,
  message: string,
  subject: string,
): OrchError => storeError(code, 'invalid', message, subject);

export const unavailable = (message: string, subject: string, cause?: unknown): OrchError =>
  storeError(StoreErrorCode.unavailable, 'unavailable', message, subject, cause);

export const internal = (message: string, subject: string, cause?: unknown): OrchError =>
  storeError(StoreErrorCode.internal, 'internal', message, subject, cause);
