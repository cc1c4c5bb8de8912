/**
 * createEventRecorder: the agent's event recorder over events.orch.io/v1. event() logs the
 * event, folds it into the isomorphic cache (series) and queues the resulting writes for the
 * writer; timers drive the cache's 6-minute sweep and 30-minute series heartbeat. Without a
 * RestClient (standalone mode) events are only logged.
 */
import type { Clock, Timer } from '../../api/clock.js';
import { messageOf, OrchError } from '../../api/errors.js';
import { formatMicroTime } from '../../api/time.js';
import { createTokenBucket, NO_LIMIT, type TokenBucket } from '../../api/token-bucket.js';
import type { Logger } from '../logging/index.js';
import type { RestClient } from '../orchclient/index.js';
import {
  buildEvent, EVENT_TYPES, epochNanos, objectKey, type EventObject, type EventReference, type EventType,
} from './event-object.js';
import { createSeriesCache, FINISH_MS, REFRESH_MS } from './series-cache.js';
import {
  createEventWriter, DEFAULT_CONCURRENCY, DEFAULT_MAX_QUEUED, DEFAULT_RETRY, type EventWriter, type RetryPolicy,
} from './writer.js';

/** The reportingController of the agent's events: upstream's kubelet reports as `kubelet`. */
export const DEFAULT_REPORTING_CONTROLLER = 'nodeagent';
export const DEFAULT_STOP_TIMEOUT_MS = 5000;

/** Options of createEventRecorder are out of range. */
export const EVENTS_INVALID_OPTIONS = 'EVENTS_INVALID_OPTIONS';

export interface EventRecorder {
  /**
   * Records that `action` happened (or failed) to `regarding`, because of `reason`. Never
   * blocks, never throws: the write happens later, and may be folded into a series, paced,
   * or dropped (logged) when the queue overflows or the server rejects it.
   */
  event(regarding: EventReference, type: EventType, reason: string, action: string, note: string): void;
  /** Resolves when every queued write has been sent or given up (retries included). Never rejects. */
  flush(): Promise<void>;
  /**
   * Stops the timers, queues the unsent counts of open series, and waits for the writes up to
   * the stop timeout; then aborts what is left (one warning). Idempotent; never rejects.
   * Later events are only logged.
   */
  stop(): Promise<void>;
}

export interface EventRecorderOptions {
  /** The API server; undefined in standalone mode (events are only logged). */
  readonly rest: RestClient | undefined;
  /** Default `nodeagent` (the renamed `kubelet`). */
  readonly reportingController?: string;
  /** The node's name. */
  readonly reportingInstance: string;
  /** eventRecordQPS: writes per second; 0 = unlimited (a negative or non-finite value is refused). */
  readonly qps: number;
  /** eventBurst: used only when qps > 0; below 1 it is read as 1 (one write must always be possible). */
  readonly burst: number;
  readonly logger: Logger;
  /** Event times (fractions of its milliseconds kept to the microsecond), the pacing, retries and the series timers. */
  readonly clock: Clock;
  /** Queued writes at most (default 1000, as upstream's broadcaster). */
  readonly maxQueued?: number;
  /** Concurrent writes (default 4). */
  readonly concurrency?: number;
  readonly retry?: Partial<RetryPolicy>;
  /** How long stop() waits for pending writes (default 5 s). */
  readonly stopTimeoutMs?: number;
  /** Verbosity of the `Event occurred` log line; default 0 (info). Upstream's kubelet uses 3. */
  readonly logVerbosity?: number;
  /** In [0, 1), for the back-off jitter. Default Math.random. */
  readonly random?: () => number;
}

function checkCount(value: number, name: string): void {
  if (!Number.isFinite(value) || value < 0) {
    throw new OrchError(EVENTS_INVALID_OPTIONS, 'invalid', `${name} must be a finite number >= 0, got ${String(value)}`, { subject: name });
  }
}

/**
 * The write budget of eventRecordQPS/eventBurst: a qps of 0 is no limit (the configuration's
 * rule), a burst below 1 with a positive qps is 1. Throws EVENTS_INVALID_OPTIONS for a negative
 * or non-finite qps or burst.
 */
function writeBudget(qps: number, burst: number, clock: Clock): TokenBucket {
  checkCount(qps, 'eventRecordQPS');
  checkCount(burst, 'eventBurst');
  return qps === 0 ? NO_LIMIT : createTokenBucket({ qps, burst: Math.max(1, Math.floor(burst)), clock });
}

/** Throws EVENTS_INVALID_OPTIONS for a negative qps or burst, or an empty reportingInstance. */
export function createEventRecorder(options: EventRecorderOptions): EventRecorder {
  const { clock } = options;
  const now = (): number => clock.now();
  const logger = options.logger;
  const controller = options.reportingController ?? DEFAULT_REPORTING_CONTROLLER;
  const instance = options.reportingInstance;
  if (instance === '') {
    throw new OrchError(EVENTS_INVALID_OPTIONS, 'invalid', 'reportingInstance (the node name) must not be empty', { subject: 'reportingInstance' });
  }
  const limiter = writeBudget(options.qps, options.burst, clock);
  const logVerbosity = options.logVerbosity ?? 0;
  const cache = createSeriesCache();
  let lastNanos = 0n;
  let stopped = false;
  let stopping: Promise<void> | undefined;

  const writer: EventWriter | undefined = options.rest === undefined ? undefined : createEventWriter({
    rest: options.rest,
    logger,
    limiter,
    clock,
    retry: { ...DEFAULT_RETRY, ...options.retry },
    maxQueued: options.maxQueued ?? DEFAULT_MAX_QUEUED,
    concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
    random: options.random ?? Math.random,
  });

  function send(writes: readonly EventObject[]): void {
    if (writer === undefined) return;
    for (const w of writes) writer.enqueue(w);
  }

  // Periodic timers (re-armed after each run; they never keep the process alive).
  const handles = new Map<string, Timer>();
  function every(name: string, ms: number, fn: () => void): void {
    const arm = (): void => {
      const handle = clock.setTimer(ms, () => {
        if (stopped) return;
        try {
          fn();
        } catch (err) {
          logger.error('Event series timer failed', { timer: name, err: messageOf(err) });
        }
        arm();
      });
      handles.set(name, handle);
    };
    arm();
  }
  if (writer !== undefined) {
    every('sweep', FINISH_MS, () => {
      send(cache.sweep(now()));
    });
    every('heartbeat', REFRESH_MS, () => {
      send(cache.heartbeat());
    });
  }

  function logEvent(regarding: EventReference, type: string, reason: string, action: string, note: string): void {
    const fields = {
      object: objectKey(regarding), kind: regarding.kind, apiVersion: regarding.apiVersion ?? '',
      ...(regarding.fieldPath !== undefined ? { fieldPath: regarding.fieldPath } : {}),
      type, reason, action, note,
    };
    if (logVerbosity <= 0) logger.info('Event occurred', fields);
    else logger.v(logVerbosity, 'Event occurred', fields);
  }

  function nextNanos(ms: number): bigint {
    // Names must be unique: two events in the same microsecond get consecutive nanoseconds.
    let nanos = epochNanos(ms);
    if (nanos <= lastNanos) nanos = lastNanos + 1n;
    lastNanos = nanos;
    return nanos;
  }

  function record(regarding: EventReference, type: EventType, reason: string, action: string, note: string): void {
    logEvent(regarding, type, reason, action, note);
    if (!(EVENT_TYPES as readonly string[]).includes(type)) {
      logger.error('Unsupported event type, dropping the event', { object: objectKey(regarding), type, reason });
      return;
    }
    if (writer === undefined) return;
    if (stopped) {
      logger.v(4, 'Event recorder is stopped, event only logged', { object: objectKey(regarding), reason });
      return;
    }
    const t = now();
    const event = buildEvent({ regarding, type, reason, action, note, reportingController: controller, reportingInstance: instance }, nextNanos(t), formatMicroTime(t));
    send(cache.observe(event, t));
  }

  async function stopNow(): Promise<void> {
    stopped = true;
    for (const handle of handles.values()) handle.cancel();
    handles.clear();
    if (writer === undefined) return;
    send(cache.drain());
    let timer: Timer | undefined;
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = clock.setTimer(options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS, () => {
        resolve('timeout');
      }, { keepAlive: true });
    });
    const result = await Promise.race([writer.idle().then(() => 'idle' as const), deadline]);
    timer?.cancel();
    if (result === 'timeout') {
      const dropped = writer.abort();
      logger.warn('Event recorder stopped before every event was written', { dropped });
      await writer.idle();
    }
  }

  return {
    event(regarding, type, reason, action, note) {
      try {
        record(regarding, type, reason, action, note);
      } catch (err) {
        // Recording must never fail its caller; a failure here is a bug, logged.
        logger.error('Unable to record event', { object: String((regarding as Partial<EventReference> | undefined)?.name), reason, err: messageOf(err) });
      }
    },
    async flush() {
      if (writer !== undefined) await writer.idle();
    },
    stop() {
      stopping ??= stopNow();
      return stopping;
    },
  };
}
