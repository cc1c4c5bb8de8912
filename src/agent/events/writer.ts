/**
 * The event writer: a bounded queue of Event writes drained by a few workers, paced by a
 * token bucket (eventRecordQPS/eventBurst; every request, retries included, takes a token, as
 * upstream's rate-limited event client does), with bounded retries.
 *
 * A write is a create (POST) for a single event, or for a series a strategic-merge PATCH of
 * `{"series": …}` (what upstream sends), falling back to a create when the event is gone (404:
 * its time to live ended). Outcomes, after upstream's recordEvent:
 *
 * | failure                                          | then                                    |
 * |--------------------------------------------------|-----------------------------------------|
 * | network, timeout, 429, 5xx, 409 Conflict          | retried with back-off, then dropped (warning) |
 * | create of a series finds it exists (409 AlreadyExists) | retried (the next try patches it)   |
 * | create of a single event finds it exists          | dropped (verbosity 5; a duplicate)       |
 * | other 4xx (invalid, forbidden, unauthorized, …)   | dropped with a warning naming the event  |
 *
 * Back-off: attempts (default 5) spaced 500 ms, 1 s, 2 s, 4 s (doubling, capped at 8 s, ±25 %
 * jitter) — shorter than upstream's 12 tries 10 s apart, so that a stopping agent can drain.
 * Writes of one event name are sent in order (never two at once); a newer series write
 * replaces a queued one of the same event. A full queue drops its oldest write (one warning
 * per overflow episode; each drop at verbosity 4).
 */
import type { Clock, Timer } from '../../api/clock.js';
import { isOrchError, messageOf } from '../../api/errors.js';
import type { TokenBucket } from '../../api/token-bucket.js';
import type { Logger } from '../logging/index.js';
import type { RestCallOptions, RestClient } from '../orchclient/index.js';
import { eventsPath, objectKey, type EventObject } from './event-object.js';

export interface RetryPolicy {
  /** Tries per write, the first included (>= 1). */
  readonly attempts: number;
  readonly initialMs: number;
  readonly maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, initialMs: 500, maxMs: 8000 };
export const DEFAULT_MAX_QUEUED = 1000;
export const DEFAULT_CONCURRENCY = 4;

export interface EventWriterOptions {
  readonly rest: RestClient;
  readonly logger: Logger;
  readonly limiter: TokenBucket;
  readonly clock: Clock;
  readonly retry: RetryPolicy;
  readonly maxQueued: number;
  readonly concurrency: number;
  /** In [0, 1): the jitter of back-offs. */
  readonly random: () => number;
}

export interface EventWriter {
  /** Queues a write. Never blocks, never throws. */
  enqueue(event: EventObject): void;
  /** Resolves when nothing is queued or being written. Never rejects. */
  idle(): Promise<void>;
  /** Stops sending: aborts requests and back-offs, drops what is queued; returns how many were dropped. */
  abort(): number;
}

type Outcome = 'done' | 'retry' | 'drop';

interface Failure {
  readonly kind: 'not-found' | 'already-exists' | 'transient' | 'rejected';
}

function statusOf(err: unknown): { code?: unknown; reason?: unknown } {
  if (typeof err !== 'object' || err === null) return {};
  const status = (err as { status?: unknown }).status;
  return typeof status === 'object' && status !== null ? status : {};
}

/** Sorts a failed request by the error's category (and the Status reason and code when present). */
export function classifyFailure(err: unknown): Failure {
  const status = statusOf(err);
  if (status.reason === 'AlreadyExists') return { kind: 'already-exists' };
  if (isOrchError(err)) {
    switch (err.category) {
      case 'not-found': return { kind: 'not-found' };
      case 'already-exists': return { kind: 'already-exists' };
      case 'conflict': case 'unavailable': case 'timeout': case 'internal': return { kind: 'transient' };
      default: return { kind: 'rejected' };
    }
  }
  const code = typeof status.code === 'number' ? status.code : undefined;
  if (code === 404) return { kind: 'not-found' };
  if (code !== undefined && code >= 400 && code < 500 && code !== 409 && code !== 429) return { kind: 'rejected' };
  // Network and transport errors, 409, 429, 5xx: worth another try.
  return { kind: 'transient' };
}

export function createEventWriter(options: EventWriterOptions): EventWriter {
  const { rest, logger, limiter, clock, retry } = options;
  const queue: EventObject[] = [];
  const inFlight = new Set<string>();
  let workers = 0;
  let overflowing = false;
  let idleWaiters: (() => void)[] = [];
  const controller = new AbortController();
  const signal = controller.signal;

  const nameOf = (e: EventObject): string => `${e.metadata.namespace}/${e.metadata.name}`;
  const fieldsOf = (e: EventObject): Record<string, unknown> => ({
    event: nameOf(e), object: objectKey(e.regarding), kind: e.regarding.kind, reason: e.reason, ...(e.series !== undefined ? { count: e.series.count } : {}),
  });
  const call = (): RestCallOptions => ({ exempt: true, retries: 0, signal });

  /** A wait for a token or a retry; it keeps the process alive (a stopping agent drains its events). */
  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) {
        resolve();
        return;
      }
      const done = (): void => {
        timer.cancel();
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer: Timer = clock.setTimer(ms, done, { keepAlive: true });
      signal.addEventListener('abort', done, { once: true });
    });
  }

  async function takeToken(): Promise<boolean> {
    while (!signal.aborted) {
      if (limiter.tryTake()) return true;
      await sleep(Math.max(1, limiter.delayMs()));
    }
    return false;
  }

  async function attempt(event: EventObject): Promise<Outcome> {
    const path = eventsPath(event.metadata.namespace);
    const series = event.series;
    if (series !== undefined) {
      try {
        await rest.patch(`${path}/${encodeURIComponent(event.metadata.name)}`, 'strategic', { series }, call());
        return 'done';
      } catch (err) {
        const failure = classifyFailure(err);
        if (failure.kind !== 'not-found') return judge(event, err, failure);
        logger.v(4, 'Event series is gone from the server, creating it anew', fieldsOf(event));
        if (!(await takeToken())) return 'drop';
      }
    }
    try {
      await rest.create(path, event, call());
      return 'done';
    } catch (err) {
      return judge(event, err, classifyFailure(err));
    }
  }

  function judge(event: EventObject, err: unknown, failure: Failure): Outcome {
    if (signal.aborted) return 'drop';
    switch (failure.kind) {
      case 'already-exists':
        if (event.series !== undefined) return 'retry';
        logger.v(5, 'Server rejected event as a duplicate (will not retry)', { ...fieldsOf(event), err: messageOf(err) });
        return 'drop';
      case 'transient':
        logger.v(2, 'Unable to write event (will retry)', { ...fieldsOf(event), err: messageOf(err) });
        return 'retry';
      default:
        logger.warn('Server rejected event (will not retry)', { ...fieldsOf(event), err: messageOf(err) });
        return 'drop';
    }
  }

  function backoffMs(tries: number): number {
    const base = Math.min(retry.maxMs, retry.initialMs * 2 ** (tries - 1));
    return Math.round(base * (0.75 + 0.5 * options.random()));
  }

  async function write(event: EventObject): Promise<void> {
    for (let tries = 1; ; tries++) {
      if (!(await takeToken())) return;
      const outcome = await attempt(event);
      if (outcome !== 'retry') return;
      if (tries >= Math.max(1, retry.attempts)) {
        logger.warn('Unable to write event (retry limit exceeded), dropping it', { ...fieldsOf(event), tries });
        return;
      }
      await sleep(backoffMs(tries));
      if (signal.aborted) return;
    }
  }

  function nextIndex(): number {
    return queue.findIndex((e) => !inFlight.has(nameOf(e)));
  }

  async function work(): Promise<void> {
    for (;;) {
      if (signal.aborted) return;
      const index = nextIndex();
      if (index < 0) return;
      const event = queue.splice(index, 1)[0];
      if (event === undefined) return;
      if (queue.length === 0) overflowing = false;
      const name = nameOf(event);
      inFlight.add(name);
      try {
        await write(event);
      } catch (err) {
        // write() handles every failure of a request; this is a bug, logged and survived.
        logger.error('Event writer failed unexpectedly', { ...fieldsOf(event), err: messageOf(err) });
      } finally {
        inFlight.delete(name);
      }
    }
  }

  function settleIdle(): void {
    if (workers > 0 || (queue.length > 0 && !signal.aborted)) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const w of waiters) w();
  }

  function startWorkers(): void {
    // A new worker takes its write synchronously (before its first await), so this stops
    // when every write that may be sent now has a worker, or at `concurrency`.
    while (!signal.aborted && workers < options.concurrency && nextIndex() >= 0) {
      workers++;
      void work().finally(() => {
        workers--;
        startWorkers();
        settleIdle();
      });
    }
  }

  return {
    enqueue(event) {
      if (signal.aborted) return;
      const name = nameOf(event);
      if (event.series !== undefined) {
        const queued = queue.findIndex((e) => nameOf(e) === name && e.series !== undefined);
        if (queued >= 0) {
          queue[queued] = event;
          return;
        }
      }
      if (queue.length >= options.maxQueued) {
        const dropped = queue.shift();
        if (!overflowing) {
          overflowing = true;
          logger.warn('Event queue is full, dropping the oldest events', { maxQueued: options.maxQueued });
        }
        if (dropped !== undefined) logger.v(4, 'Dropped event from the full queue', fieldsOf(dropped));
      }
      queue.push(event);
      startWorkers();
    },

    idle() {
      return new Promise((resolve) => {
        idleWaiters.push(resolve);
        settleIdle();
      });
    },

    abort() {
      const dropped = queue.length;
      queue.length = 0;
      controller.abort();
      settleIdle();
      return dropped;
    },
  };
}
