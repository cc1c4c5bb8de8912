import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { FakeClock } from '../../api/fake-clock.js';
import { within } from '../../../test/helpers/wait.js';
import { closeWhenIdle, startHttpsServer } from './https.js';
import { ensureCa, ensureServing } from './pki.js';

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

void describe('closing the HTTPS listener', () => {
  void it('ends a connection whose TLS handshake finishes after close() began, so close() resolves', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'https-close-'));
    try {
      const ca = await ensureCa(dir);
      const serving = await ensureServing(dir, ca, ['127.0.0.1']);
      const server = await startHttpsServer({
        bindAddress: '127.0.0.1', port: 0, certPem: serving.certPem, keyPem: serving.keyPem, clientCaPems: [],
        handler: (_req, res) => { res.end('ok'); },
      });
      // Accepted, not yet shaken hands: the server accepts in order, so once a later connection
      // has been answered, this one has been accepted too.
      const late = connect(server.port, '127.0.0.1');
      await once(late, 'connect');
      const answered = await new Promise<number>((resolve, reject) => {
        const req = httpsRequest({ host: '127.0.0.1', port: server.port, path: '/', rejectUnauthorized: false, agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(answered, 200);
      const closing = server.close(100);
      const tlsLate = tlsConnect({ socket: late, rejectUnauthorized: false, ALPNProtocols: ['h2'] });
      tlsLate.on('error', () => undefined);
      await within('the late connection to be ended', once(tlsLate, 'close'), 5_000);
      await within('close() to resolve', closing, 5_000);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
