/**
 * Per-key exponential back-off with upstream's semantics (client-go flowcontrol.Backoff,
 * without jitter, as the kubelet builds it): the first `next` of a key sets the initial
 * delay, every further `next` doubles it up to the maximum, and an entry whose last update is
 * older than `resetAfterMs` (upstream: twice the maximum) at the event's time starts over.
 *
 * Used for container restarts (key: pod UID, container name and spec hash; event time: when
 * the newest instance exited) and image pulls (key: pod UID and image; event time: now).
 * Time comes from the injected clock; nothing here schedules timers.
 */
import type { Clock } from '../../api/clock.js';

export interface BackOffSettings {
  /** The first delay (upstream: 10 s). */
  readonly initialMs: number;
  /** The longest delay (upstream: 5 min). */
  readonly maxMs: number;
  /** An entry not updated for this long before an event is forgotten (upstream: 2 × maxMs). */
  readonly resetAfterMs?: number;
}

export const DEFAULT_CONTAINER_BACKOFF: BackOffSettings = { initialMs: 10_000, maxMs: 300_000, resetAfterMs: 600_000 };
export const DEFAULT_IMAGE_BACKOFF: BackOffSettings = { initialMs: 10_000, maxMs: 300_000, resetAfterMs: 600_000 };

interface Entry {
  delayMs: number;
  lastUpdate: number;
}

export class BackOff {
  private readonly entries = new Map<string, Entry>();
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly resetAfterMs: number;

  constructor(
    settings: BackOffSettings,
    private readonly clock: Clock,
  ) {
    this.initialMs = Math.max(0, settings.initialMs);
    this.maxMs = Math.max(this.initialMs, settings.maxMs);
    this.resetAfterMs = settings.resetAfterMs ?? 2 * this.maxMs;
  }

  /** The current delay of `key` (0 when it has none). */
  get(key: string): number {
    return this.entries.get(key)?.delayMs ?? 0;
  }

  /** Records an event of `key` at `eventTime` (ms): the delay starts or doubles. */
  next(key: string, eventTime: number): void {
    const entry = this.entries.get(key);
    if (entry === undefined || this.expired(entry, eventTime)) {
      this.entries.set(key, { delayMs: this.initialMs, lastUpdate: this.clock.now() });
      return;
    }
    entry.delayMs = Math.min(entry.delayMs * 2, this.maxMs);
    entry.lastUpdate = this.clock.now();
  }

  /**
   * Milliseconds left of the back-off measured from `eventTime` (when the container exited),
   * or 0 when `key` is not backing off. upstream: IsInBackOffSince.
   */
  remainingSince(key: string, eventTime: number): number {
    const entry = this.entries.get(key);
    if (entry === undefined || this.expired(entry, eventTime)) return 0;
    return Math.max(0, entry.delayMs - (this.clock.now() - eventTime));
  }

  /**
   * Milliseconds left of the back-off measured from the key's last update (the last failed
   * pull), or 0 when `key` is not backing off. upstream: IsInBackOffSinceUpdate.
   */
  remainingSinceUpdate(key: string): number {
    const entry = this.entries.get(key);
    const now = this.clock.now();
    if (entry === undefined || this.expired(entry, now)) return 0;
    return Math.max(0, entry.delayMs - (now - entry.lastUpdate));
  }

  /** Forgets the entries whose last update is older than the reset time. */
  gc(): void {
    const now = this.clock.now();
    for (const [key, entry] of this.entries) if (this.expired(entry, now)) this.entries.delete(key);
  }

  /** Forgets every entry whose key starts with `prefix` (a removed pod's). */
  forgetPrefix(prefix: string): void {
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }

  /** How many keys have an entry (for tests and metrics). */
  size(): number {
    return this.entries.size;
  }

  private expired(entry: Entry, eventTime: number): boolean {
    return eventTime - entry.lastUpdate > this.resetAfterMs;
  }
}
