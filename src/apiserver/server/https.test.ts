import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import { closeWhenIdle } from './https.js';

/** An HTTP/2 session as closeWhenIdle sees it: 'stream' and 'close' events, close(). */
class FakeSession extends EventEmitter {
  closed = false;
  destroyed = false;
  close(): void {
    this.closed = true;
    this.emit('close');
  }
}

void describe('HTTP/2 idle connections', () => {
  void it('closes a session once no stream has been open for the idle time, never while one is', async () => {
    const clock = new FakeClock();
    const session = new FakeSession();
    closeWhenIdle(session, 90_000, clock);
    const watch = new EventEmitter();
    await clock.advance(60_000);
    session.emit('stream', watch);
    // A watch open for longer than the idle time keeps its connection.
    await clock.advance(200_000);
    assert.equal(session.closed, false);
    watch.emit('close');
    await clock.advance(89_000);
    assert.equal(session.closed, false);
    const request = new EventEmitter();
    session.emit('stream', request);
    request.emit('close');
    await clock.advance(89_000);
    assert.equal(session.closed, false, 'a stream restarts the idle time');
    await clock.advance(1_000);
    assert.equal(session.closed, true);
  });

  void it('closes an unused session after the idle time', async () => {
    const clock = new FakeClock();
    const session = new FakeSession();
    closeWhenIdle(session, 90_000, clock);
    await clock.advance(90_000);
    assert.equal(session.closed, true);
  });
});
