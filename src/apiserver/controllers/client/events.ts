/**
 * The events the control loops record (events.orch.io/v1, as upstream's events recorder):
 * regarding an object, with the loop's reportingController (`default-scheduler`,
 * `node-controller`, ...) and reportingInstance `<controller>-<hostname>`. An event that repeats
 * within 10 minutes (same object, type, reason, action and note) updates the first one's series
 * (count, lastObservedTime) instead of making a new object. Recording never throws: a failed
 * write is logged and dropped, as a client's recorder does.
 */
import type { Clock } from '../../../api/clock.js';
import { isConflict, isNotFound, messageOf } from '../../../api/errors.js';
import { formatMicroTime } from '../../../api/time.js';
import { metaOf, nameOf, resourceVersionOf, str } from '../../registry/index.js';
import type { Log, ResourceClient, WireObject } from './types.js';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  /** Records an event about `regarding` (an object with kind, apiVersion and metadata). */
  record(regarding: WireObject, type: EventType, reason: string, action: string, note: string): void;
}

export interface ClientEventRecorderOptions {
  /** The events.orch.io/v1 events client. */
  readonly events: ResourceClient;
  readonly clock: Clock;
  readonly log: Log;
  readonly controller: string;
  readonly instance: string;
}

const SERIES_WINDOW_MS = 10 * 60_000;
/** As upstream's event correlator: the series of at most this many recent events are kept. */
const MAX_SERIES = 4096;
const MAX_NOTE = 1024;

interface Recorded {
  event: WireObject;
  count: number;
  at: number;
}

export class ClientEventRecorder implements EventRecorder {
  private readonly options: ClientEventRecorderOptions;
  private readonly recent = new Map<string, Recorded>();
  private sequence = 0;

  constructor(options: ClientEventRecorderOptions) {
    this.options = options;
  }

  record(regarding: WireObject, type: EventType, reason: string, action: string, note: string): void {
    this.write(regarding, type, reason, action, note.length > MAX_NOTE ? `${note.slice(0, MAX_NOTE - 3)}...` : note).catch((err: unknown) => {
      this.options.log(`${this.options.controller}: recording the event ${reason} of ${str(regarding.kind)} ${nameOf(regarding)} failed: ${messageOf(err)}`);
    });
  }

  private async write(regarding: WireObject, type: EventType, reason: string, action: string, note: string): Promise<void> {
    const now = this.options.clock.now();
    const meta = metaOf(regarding);
    const key = [str(meta.uid), str(meta.namespace), str(meta.name), type, reason, action, note].join('\u0000');
    this.forgetOld(now);
    const seen = this.recent.get(key);
    if (seen !== undefined) {
      seen.count++;
      seen.at = now;
      // Kept in the order of last use, so that forgetOld stops at the first recent one.
      this.recent.delete(key);
      this.recent.set(key, seen);
      const next = { ...seen.event, series: { count: seen.count, lastObservedTime: formatMicroTime(now) } };
      try {
        seen.event = await this.options.events.update(str(metaOf(seen.event).namespace), nameOf(seen.event), next);
        return;
      } catch (err) {
        // Expired (TTL) or changed by someone else: a new event starts a new series.
        if (!isNotFound(err) && !isConflict(err)) throw err;
        this.recent.delete(key);
      }
    }
    const namespace = str(meta.namespace) === '' ? 'default' : str(meta.namespace);
    const event: WireObject = {
      apiVersion: 'events.orch.io/v1',
      kind: 'Event',
      metadata: { name: `${str(meta.name)}.${(now * 1000 + (this.sequence++ % 1000)).toString(16)}`, namespace },
      eventTime: formatMicroTime(now),
      reportingController: this.options.controller,
      reportingInstance: this.options.instance,
      action,
      reason,
      note,
      type,
      regarding: {
        kind: str(regarding.kind), apiVersion: str(regarding.apiVersion), name: str(meta.name), uid: str(meta.uid),
        resourceVersion: resourceVersionOf(regarding), ...(str(meta.namespace) === '' ? {} : { namespace: str(meta.namespace) }),
      },
    };
    const created = await this.options.events.create(namespace, event);
    this.recent.set(key, { event: created, count: 1, at: now });
  }

  /** Drops the series past their window, and the least recently used beyond MAX_SERIES. */
  private forgetOld(now: number): void {
    for (const [key, r] of this.recent) {
      if (now - r.at <= SERIES_WINDOW_MS && this.recent.size < MAX_SERIES) return;
      this.recent.delete(key);
    }
  }
}
