/**
 * The evented PLEG's hold on the runtime's event stream: subscribes, says when the stream is
 * live and when it failed, and subscribes again after a back-off (0.5 s doubling to 5 s, back
 * to 0.5 s once live) for as long as the PLEG runs. One warning when a live stream fails, one
 * line when it is live again; failed attempts in between are logged at V(2).
 */
import type { Clock, Timer } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import type { TaskEvent, TaskEventSource, TaskEventSubscription } from '../runtime/events/index.js';

export const RESUBSCRIBE_INITIAL_MS = 500;
export const RESUBSCRIBE_MAX_MS = 5000;

export interface StreamKeeperOptions {
  readonly source: TaskEventSource;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly onEvent: (event: TaskEvent) => void;
  /** The stream is live: nothing from now on is missed. */
  readonly onLive: () => void;
  /** The live stream failed: events may be missed until the next onLive. */
  readonly onDown: () => void;
}

export interface StreamKeeper {
  readonly live: boolean;
  stop(): void;
}

export function keepSubscribed(options: StreamKeeperOptions): StreamKeeper {
  const { clock, logger } = options;
  let live = false;
  let stopped = false;
  let backOff = RESUBSCRIBE_INITIAL_MS;
  let subscription: TaskEventSubscription | undefined;
  let retry: Timer | undefined;
  /** When the stream last went down (undefined: never live yet, or live now). */
  let downSince: number | undefined;
  let everLive = false;

  function subscribe(): void {
    retry = undefined;
    if (stopped) return;
    subscription = options.source.subscribe({
      onEvent: (event) => { if (!stopped) options.onEvent(event); },
      onLive: () => {
        if (stopped) return;
        live = true;
        backOff = RESUBSCRIBE_INITIAL_MS;
        if (!everLive) logger.info('The runtime\'s event stream is live; the PLEG relists only as a safety net');
        else logger.info('The runtime\'s event stream is live again; relisting once for what it missed', { downForMs: clock.now() - (downSince ?? clock.now()) });
        everLive = true;
        downSince = undefined;
        options.onLive();
      },
      onFailed: (err) => {
        subscription = undefined;
        if (stopped) return;
        if (live) {
          live = false;
          downSince = clock.now();
          logger.warn('The runtime\'s event stream failed; the PLEG relists every second until it is back', { err: messageOf(err) });
          options.onDown();
        } else {
          logger.v(2, 'Subscribing to the runtime\'s events failed', { err: messageOf(err), retryInMs: backOff });
        }
        retry = clock.setTimer(backOff, subscribe);
        backOff = Math.min(backOff * 2, RESUBSCRIBE_MAX_MS);
      },
    });
  }
  subscribe();

  return {
    get live() { return live; },
    stop() {
      stopped = true;
      live = false;
      retry?.cancel();
      subscription?.close();
    },
  };
}
