import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import { WatchBudget, type WatchSink } from './budget.js';

/** A response whose socket accepts `room` bytes before it needs a drain. */
class FakeSink extends EventEmitter implements WatchSink {
  buffered = 0;
  destroyed = false;
  writableNeedDrain = false;
  constructor(private readonly room: number) {
    super();
  }
  write(chunk: string | Buffer): boolean {
    this.buffered += chunk.length;
    if (this.buffered > this.room) this.writableNeedDrain = true;
    return !this.writableNeedDrain;
  }
  /** The client read everything. */
  flush(): void {
    this.buffered = 0;
    if (this.writableNeedDrain) {
      this.writableNeedDrain = false;
      this.emit('drain');
    }
  }
  destroy(): void {
    this.destroyed = true;
  }
}

function budget(overrides: Partial<{ maxWatcherBytes: number; maxTotalBytes: number }> = {}) {
  const clock = new FakeClock();
  const terminated: string[] = [];
  const b = new WatchBudget({
    queueEvents: 100, stallMs: 5_000, maxWatcherBytes: 1_000_000, maxTotalBytes: 10_000_000, ...overrides,
    clock, onTerminated: (resource) => terminated.push(resource),
  });
  return { b, clock, terminated };
}

void describe('WatchBudget', () => {
  void it('ends a watcher whose queue stays over 100 events for the stall time, and frees its bytes', async () => {
    const { b, clock, terminated } = budget();
    const sink = new FakeSink(10);
    const reasons: string[] = [];
    const outlet = b.outlet(sink, 'pods', (r) => reasons.push(r));
    for (let i = 0; i < 150; i += 1) assert.equal(outlet.write('0123456789'), true);
    assert.ok(b.queuedBytes > 0);
    await clock.advance(4_999);
    assert.equal(sink.destroyed, false);
    await clock.advance(1);
    assert.equal(sink.destroyed, true);
    assert.deepEqual(terminated, ['pods']);
    assert.match(reasons[0] ?? '', /more than 100 events waited for the client for 5000 ms/);
    assert.equal(b.queuedBytes, 0);
    assert.equal(outlet.write('x'), false, 'nothing is written after the end');
  });

  void it('keeps a watcher that drains within the stall time, however long its bursts', async () => {
    const { b, clock, terminated } = budget();
    const sink = new FakeSink(10);
    const outlet = b.outlet(sink, 'pods', () => undefined);
    for (let round = 0; round < 5; round += 1) {
      for (let i = 0; i < 500; i += 1) outlet.write('0123456789');
      await clock.advance(4_000);
      sink.flush();
      assert.equal(b.queuedBytes, 0, 'a drain gives the bytes back');
    }
    await clock.advance(60_000);
    assert.equal(sink.destroyed, false);
    assert.deepEqual(terminated, []);
  });

  void it('ends a watcher over its own byte ceiling at once', () => {
    const { b, terminated } = budget({ maxWatcherBytes: 100 });
    const sink = new FakeSink(10);
    const outlet = b.outlet(sink, 'configmaps', () => undefined);
    let open = true;
    for (let i = 0; i < 20 && open; i += 1) open = outlet.write('0123456789');
    assert.equal(open, false);
    assert.equal(sink.destroyed, true);
    assert.deepEqual(terminated, ['configmaps']);
  });

  void it('ends the watcher that passes the server-wide ceiling, not the ones that keep up', () => {
    const { b, terminated } = budget({ maxTotalBytes: 300 });
    const slow = [new FakeSink(0), new FakeSink(0)];
    const fast = new FakeSink(1_000_000);
    const outlets = slow.map((s) => b.outlet(s, 'pods', () => undefined));
    const fastOutlet = b.outlet(fast, 'pods', () => undefined);
    for (let i = 0; i < 20; i += 1) {
      for (const o of outlets) o.write('0123456789');
      assert.equal(fastOutlet.write('0123456789'), true);
    }
    assert.equal(fast.destroyed, false);
    assert.ok(slow.some((s) => s.destroyed));
    assert.ok(terminated.length >= 1);
    assert.ok(b.queuedBytes <= 300);
  });

  void it('gives a closed watch\'s bytes back without counting it as terminated', () => {
    const { b, terminated } = budget();
    const sink = new FakeSink(0);
    const outlet = b.outlet(sink, 'pods', () => undefined);
    outlet.write('0123456789');
    assert.equal(b.queuedBytes, 10);
    outlet.close();
    outlet.close();
    assert.equal(b.queuedBytes, 0);
    assert.deepEqual(terminated, []);
    assert.equal(b.terminated, 0);
  });
});
