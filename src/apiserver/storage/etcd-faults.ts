/**
 * The etcd client's fault handling (etcd3's `faultHandling` policies), chosen for an API server
 * whose every request is one etcd call with a deadline.
 *
 * etcd3's default opens a per-member circuit breaker after 3 consecutive failures for 5 s and
 * retries every "recoverable" failure 3 times. With one member that turns a single stall into
 * seconds of refused calls after etcd recovered (nothing else could have served them), and a
 * call that ran into its deadline is retried with a fresh deadline (one request, three stalls).
 * Here:
 * - global: a call is tried again (at most `retries` times) only after a connection-level
 *   failure (unavailable, reset), never after its deadline passed;
 * - per member: with several members, a breaker opens after `failures` consecutive failures for
 *   `openMs` (calls go to the other members meanwhile), then lets one probe through; with one
 *   member, no breaker;
 * - a call that ran into its deadline leaves the channel alone. etcd3 resets a member's whole
 *   gRPC channel (`resetAllServices`) after any "recoverable" error, a deadline included: the
 *   next calls then wait for a new connection, and calls still waiting for the closed channel's
 *   connection fail as unavailable (are retried, and reset the channel again). A deadline says
 *   the call was slow, not that the connection is broken
 *   (gRPC keepalive finds a dead connection, etcd-clients.ts), so the member policies rethrow it
 *   as EtcdDeadlineError, which etcd3 does not count as recoverable; a breaker still counts it.
 */
import { GRPCDeadlineExceededError, GRPCGenericError, isRecoverableError, type IOptions } from 'etcd3';

type FaultHandling = NonNullable<IOptions['faultHandling']>;
type Policy = FaultHandling['global'] & object;
type Context = Parameters<Parameters<Policy['execute']>[0]>[0];

export interface EtcdFaultOptions {
  /** Consecutive failures that open a member's breaker (default 5). */
  readonly failures?: number;
  /** How long an open breaker refuses calls before one probe (default 1 s). */
  readonly openMs?: number;
  /** Extra attempts after a connection-level failure (default 2). */
  readonly retries?: number;
  readonly now?: () => number;
}

/** What a call refused by an open breaker throws (etcd3 then tries another member). */
export class BreakerOpenError extends Error {
  constructor(host: string) {
    super(`etcd member ${host}: circuit open after consecutive failures`);
    this.name = 'BreakerOpenError';
  }
}

/** A call that passed its deadline, as etcd3 must not take it: not "recoverable", so no channel reset. */
export class EtcdDeadlineError extends GRPCGenericError {
  constructor(cause: Error) {
    super(cause.message, { cause });
    this.name = 'EtcdDeadlineError';
  }
}

/** Rethrows a deadline as EtcdDeadlineError; every other error as it is. */
function rethrow(err: unknown): never {
  if (err instanceof GRPCDeadlineExceededError) throw new EtcdDeadlineError(err);
  throw err;
}

const noEvent = (): { dispose(): void } => ({ dispose: () => undefined });

/**
 * The signal of a call's policy context when the caller gave none. etcd3 never reads it (its
 * calls cannot be cancelled), so one that never aborts serves every call: an AbortController per
 * policy per call (two per etcd call; node 20 builds each signal as an EventTarget) was 0.6 % of
 * the server's busy time in the etcd cluster bench's profile.
 */
const NEVER_ABORTED = new AbortController().signal;

abstract class BasePolicy {
  // Declared by etcd3's policy type for its compile-time use only.
  declare readonly _altReturn: never;
  readonly onSuccess = noEvent;
  readonly onFailure = noEvent;

  protected context(signal?: AbortSignal): Context {
    return { signal: signal ?? NEVER_ABORTED };
  }
}

function connectionLevel(err: unknown): boolean {
  return err instanceof Error && isRecoverableError(err) && !(err instanceof GRPCDeadlineExceededError);
}

/** Tries a call again after a connection-level failure only. */
export class RetryPolicy extends BasePolicy {
  private readonly retries: number;

  constructor(retries: number) {
    super();
    this.retries = retries;
  }

  async execute<T>(fn: (context: Context) => PromiseLike<T> | T, signal?: AbortSignal): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn(this.context(signal));
      } catch (err) {
        if (attempt >= this.retries || !connectionLevel(err) || signal?.aborted === true) throw err;
      }
    }
  }
}

/** Lets every call through. */
export class PassPolicy extends BasePolicy {
  async execute<T>(fn: (context: Context) => PromiseLike<T> | T, signal?: AbortSignal): Promise<T> {
    try {
      return await fn(this.context(signal));
    } catch (err) {
      return rethrow(err);
    }
  }
}

/** Closed, open for `openMs` after `failures` consecutive failures, then one probe (half-open). */
export class Breaker extends BasePolicy {
  private readonly host: string;
  private readonly failures: number;
  private readonly openMs: number;
  private readonly now: () => number;
  private consecutive = 0;
  private openUntil = 0;
  private probing = false;

  constructor(host: string, options: Required<Pick<EtcdFaultOptions, 'failures' | 'openMs' | 'now'>>) {
    super();
    this.host = host;
    this.failures = options.failures;
    this.openMs = options.openMs;
    this.now = options.now;
  }

  get state(): 'closed' | 'open' | 'half-open' {
    if (this.consecutive < this.failures) return 'closed';
    return this.now() < this.openUntil ? 'open' : 'half-open';
  }

  async execute<T>(fn: (context: Context) => PromiseLike<T> | T, signal?: AbortSignal): Promise<T> {
    const state = this.state;
    if (state === 'open' || (state === 'half-open' && this.probing)) throw new BreakerOpenError(this.host);
    const probe = state === 'half-open';
    if (probe) this.probing = true;
    try {
      const result = await fn(this.context(signal));
      this.consecutive = 0;
      return result;
    } catch (err) {
      if (err instanceof Error && isRecoverableError(err)) {
        this.consecutive += 1;
        if (this.consecutive >= this.failures) this.openUntil = this.now() + this.openMs;
      }
      return rethrow(err);
    } finally {
      if (probe) this.probing = false;
    }
  }
}

/** The policies for a client of `endpoints` members. */
export function etcdFaultHandling(endpoints: number, options: EtcdFaultOptions = {}): FaultHandling {
  const breaker = { failures: options.failures ?? 5, openMs: options.openMs ?? 1000, now: options.now ?? Date.now };
  return {
    global: new RetryPolicy(options.retries ?? 2),
    host: (host: string) => (endpoints > 1 ? new Breaker(host, breaker) : new PassPolicy()),
  };
}
