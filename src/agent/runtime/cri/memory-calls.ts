/**
 * What the in-memory runtime's services share (memory-runtime.ts, memory-images.ts): the record of every
 * call, failures queued per method, the nanosecond clock of its timestamps, and the errors a
 * runtime answers with as the CRI client maps them. Used by the tests and by the simulated nodes.
 */
import { OrchError } from '../../../api/errors.js';
import type { StringMap } from './types-common.js';

export interface MemoryCall {
  readonly method: string;
  readonly arg: unknown;
}

/** gRPC NotFound as the CRI client maps it. */
export function notFound(what: string): OrchError {
  return new OrchError('CRI_NOT_FOUND', 'not-found', `${what} not found`);
}

/** Any other runtime failure (gRPC Unknown, FailedPrecondition, …) as the CRI client maps it. */
export function runtimeError(message: string): OrchError {
  return new OrchError('CRI_ERROR', 'internal', message);
}

/** True when every key of `selector` has its value in `labels`. */
export function matchesLabels(labels: StringMap, selector: StringMap | undefined): boolean {
  return Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
}

export class MemoryCalls {
  /** Every call, in order, with its first argument. */
  readonly calls: MemoryCall[] = [];
  private readonly failures = new Map<string, Error[]>();
  private seq = 0;
  private lastNs = 0n;

  private readonly recordCalls: boolean;

  /**
   * `nowMs`: the clock of the timestamps it reports (milliseconds since the epoch);
   * `recordCalls: false` keeps no record of the calls (a long-running simulated node).
   */
  constructor(private readonly nowMs: () => number = Date.now, options: { readonly recordCalls?: boolean } = {}) {
    this.recordCalls = options.recordCalls ?? true;
  }

  /** Makes the next call of `method` reject with `error` (queued: one error per call). */
  failNext(method: string, error: Error): void {
    this.failures.set(method, [...(this.failures.get(method) ?? []), error]);
  }

  /** The arguments of the calls of `method`, in order. */
  callsOf(method: string): unknown[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.arg);
  }

  /** A new number for ids, unique within this fake. */
  protected next(): number {
    return ++this.seq;
  }

  /** Now in nanoseconds; every reading is later than the one before, even within a millisecond. */
  protected tick(): bigint {
    const now = BigInt(this.nowMs()) * 1_000_000n;
    this.lastNs = now > this.lastNs ? now : this.lastNs + 1n;
    return this.lastNs;
  }

  /** Records the call, then throws the failure queued for `method`, if any. */
  protected record(method: string, arg: unknown): void {
    if (this.recordCalls) this.calls.push({ method, arg });
    if (this.failures.size === 0) return;
    const failure = this.failures.get(method)?.shift();
    if (failure !== undefined) throw failure;
  }

  /** Answers asynchronously (as a runtime does): records the call, then runs `body`. */
  protected answer<T>(method: string, arg: unknown, body: () => T): Promise<T> {
    return Promise.resolve().then(() => {
      this.record(method, arg);
      return body();
    });
  }
}
