import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/fake-clock.js';
import { WorkQueue } from './index.js';

void describe('the work queue', () => {
  void it('processes keys one at a time, each once however often it was added, and again when added while running', async () => {
    const clock = new FakeClock();
    const seen: string[] = [];
    let running = 0;
    let queue: WorkQueue | undefined = undefined;
    queue = new WorkQueue({
      clock, log: () => undefined, what: 'test',
      process: async (key) => {
        running++;
        assert.equal(running, 1);
        seen.push(key);
        if (key === 'a' && seen.length === 1) queue?.add('a');
        await clock.sleep(0);
        running--;
      },
    });
    queue.add('a');
    queue.add('b');
    queue.add('a');
    assert.deepEqual(seen, [], 'never run by the caller of add');
    await clock.advance(0);
    assert.deepEqual(seen, ['a', 'b', 'a']);
    await queue.close();
  });

  void it('tries a failed key again after a back-off that doubles, and resets it after a success', async () => {
    const clock = new FakeClock();
    const log: string[] = [];
    let fail = 2;
    const times: number[] = [];
    const queue = new WorkQueue({
      clock, log: (l) => log.push(l), what: 'test', initialBackoffMs: 100, maxBackoffMs: 150,
      process: (key) => {
        times.push(clock.now());
        return fail-- > 0 ? Promise.reject(new Error(`${key} is busy`)) : Promise.resolve();
      },
    });
    const start = clock.now();
    queue.add('k');
    await clock.advance(1_000);
    assert.deepEqual(times.map((t) => t - start), [0, 100, 250]);
    assert.deepEqual(log, ['test: k: k is busy (trying again in 100 ms)', 'test: k: k is busy (trying again in 150 ms)']);
    await queue.close();
    queue.add('k');
    await clock.advance(0);
    assert.equal(times.length, 3, 'a closed queue takes no key');
  });
});
