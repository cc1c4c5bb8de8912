/**
 * status: the error side of the API, in the shape every Kubernetes client decodes: a `Status`
 * object (`kind: Status`, `apiVersion: v1`) with a reason, an HTTP code and details.
 *
 * Owns: the StatusError class (an OrchError that knows its HTTP code and reason), constructors
 * for each reason the server answers with, field errors for 422 Invalid, and the mapping of any
 * other thrown value (store errors by category) to a Status. Must not: write HTTP responses or
 * know resources beyond the names callers pass in.
 */
export * from './status.js';
export { FieldErrors, invalid, type FieldError, type FieldErrorType } from './field-errors.js';
