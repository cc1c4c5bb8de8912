/** What every view gets, and the redraw scheduling they share. */
import type { Api } from '../api.js';
import type { Hub } from '../hub.js';
import type { Reflector, Timers } from '../reflector.js';

export interface ViewContext {
  readonly api: Api;
  readonly hub: Hub;
  readonly timers: Timers;
  readonly now: () => number;
}

export interface View {
  readonly element: HTMLElement;
  /** The tab's title. */
  readonly title: string;
  /** Stops its subscriptions, streams and timers. Idempotent. */
  dispose(): void;
}

/**
 * Redraws with `draw` on the next animation frame after any of `sources` changed, at most once
 * per `minGapMs`; calls `tick` every second (ages and lease times move on their own, and are
 * refreshed in place rather than redrawn). Returns the disposer.
 */
export function redrawOn(
  ctx: ViewContext, sources: readonly Pick<Reflector<unknown>, 'subscribe'>[], draw: () => void, options: { minGapMs?: number; tick?: () => void } = {},
): () => void {
  let frame = 0;
  let timer: unknown;
  let last = 0;
  let disposed = false;
  const run = (): void => {
    frame = 0;
    if (disposed) return;
    last = ctx.now();
    draw();
  };
  const schedule = (): void => {
    if (frame !== 0 || timer !== undefined || disposed) return;
    const wait = (options.minGapMs ?? 0) - (ctx.now() - last);
    if (wait > 0) {
      timer = ctx.timers.setTimeout(() => {
        timer = undefined;
        frame = requestAnimationFrame(run);
      }, wait);
      return;
    }
    frame = requestAnimationFrame(run);
  };
  const unsubscribes = sources.map((s) => s.subscribe(schedule));
  const tick = options.tick;
  const ticker = tick === undefined ? undefined : setInterval(() => {
    if (!disposed) tick();
  }, 1000);
  schedule();
  return () => {
    disposed = true;
    for (const u of unsubscribes) u();
    if (frame !== 0) cancelAnimationFrame(frame);
    if (timer !== undefined) ctx.timers.clearTimeout(timer);
    if (ticker !== undefined) clearInterval(ticker);
  };
}
