/**
 * What the fake runtime's services share (fake-runtime.ts, fake-images.ts): the record of every
 * call, failures queued per method, the nanosecond clock of its timestamps, and the errors a
 * runtime answers with as the CRI client maps them. Test code only.
 */
import { OrchError } from '../../../api/errors.js';
import type { StringMap } from './types-common.js';

export interface FakeCall {
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

export class FakeCalls {
  /** Every call, in order, with its first argument. */
  readonly calls: FakeCall[] = [];
  private readonly failures = new Map<string, Error[]>();
  private seq = 0;
  private lastNs = 0n;

  /** `nowMs`: the clock of the timestamps the fake reports (milliseconds since the epoch). */
  constructor(private readonly nowMs: () => number = Date.now) {}

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
    this.calls.push({ method, arg });
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
