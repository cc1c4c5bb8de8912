/**
 * Maps gRPC failures of CRI calls to OrchErrors: the one place where gRPC status codes are
 * known. Codes: CRI_TIMEOUT, CRI_UNAVAILABLE, CRI_NOT_FOUND, CRI_CANCELLED, CRI_CLOSED,
 * CRI_ERROR, plus CRI_INVALID_ENDPOINT (endpoint.ts) and CRI_PROTO_MISSING (proto.ts).
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { OrchError, messageOf } from '../../../api/errors.js';

export const CRI_ERROR_CODES = [
  'CRI_TIMEOUT',
  'CRI_UNAVAILABLE',
  'CRI_NOT_FOUND',
  'CRI_CANCELLED',
  'CRI_CLOSED',
  'CRI_ERROR',
  'CRI_INVALID_ENDPOINT',
  'CRI_PROTO_MISSING',
] as const;
export type CriErrorCode = (typeof CRI_ERROR_CODES)[number];

/** What the client knew when the call failed. */
export interface CriCallContext {
  /** The CRI method, e.g. `RunPodSandbox`. */
  readonly method: string;
  /** The endpoint as configured. */
  readonly endpoint: string;
  /** The deadline the client set, in ms; undefined for calls without one. */
  readonly timeoutMs: number | undefined;
  /** True when the client's own deadline had passed when the error arrived. */
  readonly deadlinePassed: boolean;
  /** True when the caller's AbortSignal cancelled the call. */
  readonly aborted: boolean;
}

const DEADLINE_EXCEEDED: number = GrpcStatus.DEADLINE_EXCEEDED;
const UNAVAILABLE: number = GrpcStatus.UNAVAILABLE;
const NOT_FOUND: number = GrpcStatus.NOT_FOUND;
const CODE_NAMES = new Map<unknown, string>(Object.entries(GrpcStatus).map(([name, value]) => [value, name]));

interface GrpcFailure {
  readonly code: number;
  readonly details: string;
}

function asGrpcFailure(err: unknown): GrpcFailure | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code: unknown = Reflect.get(err, 'code');
  const details: unknown = Reflect.get(err, 'details');
  if (typeof code !== 'number') return undefined;
  return { code, details: typeof details === 'string' ? details : messageOf(err) };
}

/** Converts whatever a CRI call failed with into the OrchError callers see. Pure. */
export function criCallError(err: unknown, ctx: CriCallContext): OrchError {
  const subject = `CRI ${ctx.method}`;
  const failure = asGrpcFailure(err);
  if (ctx.aborted) {
    return new OrchError('CRI_CANCELLED', 'internal', `CRI ${ctx.method} was cancelled by the caller`, {
      subject,
      cause: err,
    });
  }
  if (failure === undefined) {
    return new OrchError('CRI_ERROR', 'internal', `CRI ${ctx.method} failed: ${messageOf(err)}`, { subject, cause: err });
  }
  switch (failure.code) {
    case DEADLINE_EXCEEDED: {
      const message =
        ctx.deadlinePassed && ctx.timeoutMs !== undefined
          ? `CRI ${ctx.method} got no answer from ${ctx.endpoint} within ${ctx.timeoutMs} ms (runtimeRequestTimeout); the call was cancelled`
          : `CRI ${ctx.method} timed out in the runtime: ${failure.details}`;
      return new OrchError('CRI_TIMEOUT', 'timeout', message, { subject, cause: err });
    }
    case UNAVAILABLE:
      return new OrchError(
        'CRI_UNAVAILABLE',
        'unavailable',
        `CRI ${ctx.method}: the container runtime at ${ctx.endpoint} is unavailable (is it running?): ${failure.details}`,
        { subject: ctx.endpoint, cause: err },
      );
    case NOT_FOUND:
      return new OrchError('CRI_NOT_FOUND', 'not-found', `CRI ${ctx.method}: ${failure.details}`, { subject, cause: err });
    default:
      return new OrchError(
        'CRI_ERROR',
        'internal',
        `CRI ${ctx.method} failed (${CODE_NAMES.get(failure.code) ?? String(failure.code)}): ${failure.details}`,
        { subject, cause: err },
      );
  }
}
