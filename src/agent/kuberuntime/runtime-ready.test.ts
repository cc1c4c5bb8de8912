import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, settle } from '../../api/fake-clock.js';
import { FakeLogger } from '../logging/testing.js';
import { FakeRuntime } from '../runtime/cri/testing.js';
import { waitForRuntime } from './runtime-ready.js';

void describe('waitForRuntime', () => {
  void it('retries with a doubling pause, logging once per reason, until the runtime answers', async () => {
    const clock = new FakeClock();
    const runtime = new FakeRuntime();
    const logger = new FakeLogger();
    for (let i = 0; i < 3; i++) runtime.failNext('version', new Error('connection refused'));
    let ready = false;
    void waitForRuntime(runtime, { endpoint: 'unix:///run/x.sock', logger, clock }).then(() => { ready = true; });
    await settle();
    assert.deepEqual(clock.pending().map((t) => t.delayMs), [200]);
    await clock.advance(200);
    assert.deepEqual(clock.pending().map((t) => t.delayMs), [400]);
    await clock.advance(400 + 800);
    assert.equal(ready, true);
    assert.equal(logger.at('error').length, 1, 'one line for the one reason');
    assert.equal(logger.at('info').length, 1);
  });

  void it('ends when its signal aborts', async () => {
    const runtime = new FakeRuntime();
    runtime.failNext('version', new Error('down'));
    const stop = new AbortController();
    stop.abort();
    await assert.rejects(waitForRuntime(runtime, { endpoint: 'e', logger: new FakeLogger(), clock: new FakeClock(), signal: stop.signal }), /stopped while waiting/);
  });
});
