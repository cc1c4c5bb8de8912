/**
 * The log tail of one container, followed while the pod's page is open: pods/log with
 * follow=true and timestamps, read as lines. When the stream ends (the container restarted, the
 * agent went away) or fails (the container is not started yet), it is opened again after a
 * pause from the last timestamp seen, skipping lines already shown.
 */
import { ApiError, type Api } from './api.js';
import { LineSplitter } from './lines.js';
import type { Timers } from './reflector.js';

export interface LogLine {
  /** The runtime's timestamp (RFC 3339 with nanoseconds), '' when the line has none. */
  readonly time: string;
  readonly text: string;
}

export type LogState =
  | { readonly kind: 'connecting' }
  | { readonly kind: 'following' }
  | { readonly kind: 'waiting'; readonly why: string };

export interface LogTailOptions {
  readonly api: Api;
  readonly namespace: string;
  readonly pod: string;
  readonly container: string;
  readonly timers: Timers;
  /** Lines asked for at first (default 200). */
  readonly tailLines?: number;
  readonly retryMs?: number;
  readonly onLines: (lines: readonly LogLine[]) => void;
  readonly onState: (state: LogState) => void;
}

/** Splits `2024-05-01T10:00:00.123456789Z text` into its timestamp and text. */
export function parseLogLine(line: string): LogLine {
  const space = line.indexOf(' ');
  const head = space < 0 ? line : line.slice(0, space);
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(head)) return { time: head, text: space < 0 ? '' : line.slice(space + 1) };
  return { time: '', text: line };
}

/**
 * A timestamp that sorts as text: the runtime writes RFC 3339 with up to 9 digits of fraction,
 * trailing zeros dropped, so the fraction is padded to 9 digits.
 */
export function timeKey(time: string): string {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?/.exec(time);
  return m === null ? time : `${m[1] ?? ''}.${(m[2] ?? '').padEnd(9, '0')}`;
}

export class LogTail {
  private readonly o: LogTailOptions;
  private abort: AbortController | undefined;
  private timer: unknown;
  private lastTime = '';
  /** Lines already shown with the last timestamp (several lines can share one). */
  private atLastTime = 0;

  constructor(options: LogTailOptions) {
    this.o = options;
  }

  start(): void {
    if (this.abort !== undefined) return;
    const abort = new AbortController();
    this.abort = abort;
    void this.follow(abort.signal);
  }

  stop(): void {
    this.abort?.abort();
    this.abort = undefined;
    if (this.timer !== undefined) this.o.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private path(): string {
    const q = new URLSearchParams({ container: this.o.container, follow: 'true', timestamps: 'true' });
    if (this.lastTime === '') q.set('tailLines', String(this.o.tailLines ?? 200));
    else q.set('sinceTime', this.lastTime.replace(/\.\d+/, ''));
    return `/api/v1/namespaces/${encodeURIComponent(this.o.namespace)}/pods/${encodeURIComponent(this.o.pod)}/log?${q.toString()}`;
  }

  private async follow(signal: AbortSignal): Promise<void> {
    this.o.onState({ kind: 'connecting' });
    let why = 'the log stream ended';
    try {
      const reader = await this.o.api.stream(this.path(), signal);
      this.o.onState({ kind: 'following' });
      const splitter = new LineSplitter();
      const skipping = { time: timeKey(this.lastTime), count: this.atLastTime };
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        const lines = splitter.push(chunk.value).map(parseLogLine).filter((l) => this.fresh(l, skipping));
        if (lines.length > 0) this.o.onLines(lines);
      }
    } catch (err) {
      if (signal.aborted) return;
      why = err instanceof ApiError || err instanceof Error ? err.message : String(err);
    }
    if (signal.aborted) return;
    this.o.onState({ kind: 'waiting', why });
    this.abort = undefined;
    this.timer = this.o.timers.setTimeout(() => {
      this.timer = undefined;
      this.start();
    }, this.o.retryMs ?? 3000);
  }

  /** Whether a line is new: after the last timestamp shown, or at it beyond the lines shown then. */
  private fresh(line: LogLine, skipping: { time: string; count: number }): boolean {
    const key = timeKey(line.time);
    if (line.time !== '' && skipping.time !== '') {
      if (key < skipping.time) return false;
      if (key === skipping.time && skipping.count > 0) {
        skipping.count--;
        return false;
      }
    }
    if (line.time !== '') {
      if (line.time === this.lastTime) this.atLastTime++;
      else {
        this.lastTime = line.time;
        this.atLastTime = 1;
      }
    }
    return true;
  }
}
