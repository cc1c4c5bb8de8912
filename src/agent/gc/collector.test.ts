import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { OrchError } from '../../api/errors.js';
import { FakeClock, settle } from '../../api/fake-clock.js';
import { FakeLogger } from '../logging/testing.js';
import { createGarbageCollector, type GcEvent } from './collector.js';
import type { ContainerGCResult } from './container-gc.js';
import type { ImageGCResult } from './image-gc.js';
import { createGcMetrics } from './metrics.js';

/** A collector whose next results (or errors) the test queues; it counts its passes. */
class Scripted<T> {
  passes = 0;
  readonly next: (T | Error)[] = [];
  constructor(private readonly ok: T) {}
  /** The options of each collect call. */
  readonly options: unknown[] = [];
  collect = (options?: unknown): Promise<T> => {
    this.passes++;
    this.options.push(options);
    const r = this.next.shift() ?? this.ok;
    return r instanceof Error ? Promise.reject(r) : Promise.resolve(r);
  };
  deleteUnused = (): Promise<T> => this.collect('deleteUnused');
}

const OK_CONTAINERS: ContainerGCResult = { containers: 0, sandboxes: 0, logDirectories: 0 };
const OK_IMAGES: ImageGCResult = { usagePercent: 10, wanted: 0, freed: 0, removed: [] };

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !cond(); i++) await settle(1);
  assert.ok(cond());
}

void describe('the garbage collection loops', () => {
  void it('run a pass at once and then a period after each, until stopped', async () => {
    const clock = new FakeClock();
    const containers = new Scripted(OK_CONTAINERS);
    const images = new Scripted(OK_IMAGES);
    const gc = createGarbageCollector({ containerGC: containers, imageGC: images, clock, logger: new FakeLogger(), containerPeriodMs: 1000, imagePeriodMs: 5000 });
    gc.start();
    await until(() => clock.pending().length === 2);
    assert.deepEqual([containers.passes, images.passes], [1, 1]);
    await clock.advance(5000);
    await until(() => containers.passes === 6 && images.passes === 2);
    await gc.stop();
    assert.equal(clock.pending().length, 0);
  });

  void it('record ContainerGCFailed at every failure, and ImageGCFailed only when image GC fails twice in a row', async () => {
    const clock = new FakeClock();
    const events: GcEvent[] = [];
    const containers = new Scripted(OK_CONTAINERS);
    const images = new Scripted(OK_IMAGES);
    containers.next.push(new Error('runtime down'));
    images.next.push(new Error('stats not ready'), new OrchError('GC_IMAGE_FREE_FAILED', 'internal', 'wanted to free 10 bytes, but freed 0 bytes'));
    const logger = new FakeLogger();
    const registry = new Registry();
    const gc = createGarbageCollector({
      containerGC: containers, imageGC: images, clock, logger, containerPeriodMs: 1000, imagePeriodMs: 1000,
      onEvent: (e) => events.push(e), metrics: createGcMetrics(registry),
    });
    gc.start();
    await until(() => clock.pending().length === 2);
    await clock.advance(1000);
    await until(() => images.passes === 2 && clock.pending().length === 2);
    await gc.stop();
    assert.deepEqual(events.map((e) => `${e.reason}: ${e.message}`), [
      'ContainerGCFailed: runtime down',
      'FreeDiskSpaceFailed: wanted to free 10 bytes, but freed 0 bytes',
      'ImageGCFailed: wanted to free 10 bytes, but freed 0 bytes',
    ]);
    assert.ok(logger.has('Image garbage collection failed once'));
    assert.ok(logger.has('Image garbage collection failed multiple times in a row'));
    const text = await registry.metrics();
    assert.match(text, /^nodeagent_container_gc_duration_seconds_count 2$/m);
    assert.match(text, /^nodeagent_image_gc_duration_seconds_count 2$/m);
  });

  void it('run no image pass when image GC is off', async () => {
    const clock = new FakeClock();
    const logger = new FakeLogger();
    const gc = createGarbageCollector({ containerGC: new Scripted(OK_CONTAINERS), clock, logger });
    gc.start();
    await until(() => clock.pending().length === 1);
    assert.equal(clock.pending()[0]?.delayMs, 60_000);
    assert.ok(logger.has('Periodic image garbage collection is off'));
    await gc.stop();
  });

  void it('run the eviction reclaim between passes, image reclaim even without periodic image passes', async () => {
    const clock = new FakeClock();
    const containers = new Scripted(OK_CONTAINERS);
    const images = new Scripted(OK_IMAGES);
    let release: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => { release = resolve; });
    const slow = containers.collect;
    containers.collect = async (options?: unknown) => {
      const r = await slow(options);
      if (containers.passes === 1) await blocked;
      return r;
    };
    const gc = createGarbageCollector({ containerGC: containers, imageGC: images, periodicImageGC: false, clock, logger: new FakeLogger() });
    gc.start();
    let reclaimed = false;
    const reclaim = gc.deleteAllUnusedContainers().then(() => { reclaimed = true; });
    await settle();
    assert.equal(reclaimed, false, 'the reclaim waits for the pass under way');
    release();
    await reclaim;
    assert.deepEqual(containers.options, [undefined, { evictTerminatedPods: true }]);
    await gc.deleteUnusedImages();
    assert.deepEqual(images.options, ['deleteUnused']);
    assert.equal(clock.pending().length, 1, 'no periodic image pass');
    await gc.stop();
  });
});
