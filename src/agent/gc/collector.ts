/**
 * The garbage collection loops (upstream's StartGarbageCollection): container GC every
 * `containerPeriodMs` (upstream: 1 minute) and image GC every `imagePeriodMs` (5 minutes), each
 * pass at once at start and then a period after the previous one ended, on the agent's clock,
 * in the background (a pass never blocks a pod worker and two never overlap). A failed pass is
 * logged and tried again at the next period:
 *
 *   | failure                                   | event (Warning, on the Node)              |
 *   |-------------------------------------------|-------------------------------------------|
 *   | container GC                              | ContainerGCFailed, every time              |
 *   | image GC could not free enough            | FreeDiskSpaceFailed, every time            |
 *   | the image file system cannot be measured  | InvalidDiskCapacity, every time            |
 *   | image GC, twice or more in a row          | ImageGCFailed (a first failure may be a    |
 *   |                                           | runtime still starting: logged only)       |
 *
 * The eviction manager's node-level reclaim under disk pressure (deleteAllUnusedContainers,
 * deleteUnusedImages) runs through the same loops, so that it never overlaps their passes;
 * image GC's reclaim works even when its periodic pass is off (imageGCHighThresholdPercent 100),
 * as upstream's.
 */
import type { Clock, Timer } from '../../api/clock.js';
import { isOrchError, messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import type { ContainerGC } from './container-gc.js';
import { GC_IMAGE_FREE_FAILED, GC_IMAGE_FS_UNKNOWN, type ImageGC } from './image-gc.js';
import type { GcMetrics } from './metrics.js';

export type GcEventReason = 'ContainerGCFailed' | 'ImageGCFailed' | 'FreeDiskSpaceFailed' | 'InvalidDiskCapacity';

export interface GcEvent {
  readonly type: 'Warning';
  readonly reason: GcEventReason;
  readonly message: string;
}

export interface GarbageCollectionOptions {
  readonly containerGC: ContainerGC;
  /** Undefined: no image GC at all. */
  readonly imageGC?: ImageGC | undefined;
  /** False: no periodic image GC pass (imageGCHighThresholdPercent 100, as upstream); reclaim still works. Default true. */
  readonly periodicImageGC?: boolean;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Default 1 minute. */
  readonly containerPeriodMs?: number;
  /** Default 5 minutes. */
  readonly imagePeriodMs?: number;
  /** Each event, after it was logged (API-server mode records it on the Node). */
  readonly onEvent?: (event: GcEvent) => void;
  readonly metrics?: GcMetrics;
}

export interface GarbageCollector {
  /** Starts both loops (their first passes at once). Idempotent. */
  start(): void;
  /** Stops them, after the passes under way ended. */
  stop(): Promise<void>;
  /** Upstream's DeleteAllUnusedContainers: a container GC pass that also takes terminated pods' dead containers. */
  deleteAllUnusedContainers(): Promise<void>;
  /** Upstream's DeleteUnusedImages: every unused image old enough goes. */
  deleteUnusedImages(): Promise<void>;
}

export const CONTAINER_GC_PERIOD_MS = 60_000;
export const IMAGE_GC_PERIOD_MS = 5 * 60_000;

/**
 * A pass run now and then `periodMs` after each pass ended, until stopped; other work given to
 * `exclusive` runs between passes, never during one.
 */
class Loop {
  private timer: Timer | undefined;
  private running: Promise<void> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private on = false;

  constructor(private readonly clock: Clock, private readonly periodMs: number, private readonly pass: () => Promise<void>) {}

  start(): void {
    if (this.on) return;
    this.on = true;
    this.tick();
  }

  /** Runs `work` once the pass or work under way ended. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private tick(): void {
    this.running = this.exclusive(this.pass).finally(() => {
      this.running = undefined;
      if (this.on) this.timer = this.clock.setTimer(this.periodMs, () => { this.tick(); });
    });
  }

  async stop(): Promise<void> {
    this.on = false;
    this.timer?.cancel();
    this.timer = undefined;
    await this.running;
  }
}

export function createGarbageCollector(o: GarbageCollectionOptions): GarbageCollector {
  const log = o.logger;
  const emit = (reason: GcEventReason, message: string): void => { o.onEvent?.({ type: 'Warning', reason, message }); };
  const seconds = (start: number): number => (o.clock.now() - start) / 1000;
  let containerFailed = false;
  let imageFailed = false;

  const containerPass = async (): Promise<void> => {
    const start = o.clock.now();
    try {
      const r = await o.containerGC.collect();
      log.v(containerFailed ? 1 : 4, 'Container garbage collection succeeded', { ...r });
      containerFailed = false;
    } catch (err) {
      containerFailed = true;
      log.error('Container garbage collection failed', { err: messageOf(err) });
      emit('ContainerGCFailed', messageOf(err));
    } finally {
      o.metrics?.observeContainerPass(seconds(start));
    }
  };

  const imageGC = o.imageGC;
  const imagePass = async (): Promise<void> => {
    if (imageGC === undefined) return;
    const start = o.clock.now();
    try {
      const r = await imageGC.collect();
      log.v(imageFailed ? 1 : 4, 'Image garbage collection succeeded', { usage: r.usagePercent, freed: r.freed, removed: r.removed.length });
      imageFailed = false;
    } catch (err) {
      const code = isOrchError(err) ? err.code : '';
      if (code === GC_IMAGE_FREE_FAILED) emit('FreeDiskSpaceFailed', messageOf(err));
      if (code === GC_IMAGE_FS_UNKNOWN) emit('InvalidDiskCapacity', messageOf(err));
      if (imageFailed) {
        log.error('Image garbage collection failed multiple times in a row', { err: messageOf(err) });
        emit('ImageGCFailed', messageOf(err));
      } else {
        log.error('Image garbage collection failed once; the runtime may still be starting', { err: messageOf(err) });
      }
      imageFailed = true;
    } finally {
      o.metrics?.observeImagePass(seconds(start));
    }
  };

  const containerLoop = new Loop(o.clock, o.containerPeriodMs ?? CONTAINER_GC_PERIOD_MS, containerPass);
  const imageLoop = new Loop(o.clock, o.imagePeriodMs ?? IMAGE_GC_PERIOD_MS, imagePass);
  const loops = [containerLoop];
  if (imageGC !== undefined && o.periodicImageGC !== false) loops.push(imageLoop);
  else log.v(2, 'Periodic image garbage collection is off (imageGCHighThresholdPercent is 100)');
  return {
    start() { for (const l of loops) l.start(); },
    async stop() { await Promise.all(loops.map((l) => l.stop())); },
    async deleteAllUnusedContainers() {
      log.info('Attempting to delete unused containers');
      const r = await containerLoop.exclusive(() => o.containerGC.collect({ evictTerminatedPods: true }));
      log.v(2, 'Unused containers deleted', { ...r });
    },
    async deleteUnusedImages() {
      if (imageGC === undefined) return;
      const r = await imageLoop.exclusive(() => imageGC.deleteUnused());
      log.v(2, 'Unused images deleted', { freed: r.freed, removed: r.removed.length });
    },
  };
}
