import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { createAuthenticator } from './index.js';
import { connectionCached } from './x509.js';
import type { IncomingMessage } from 'node:http';

/** A TLS connection that counts how often its peer certificate is read. */
class FakeConnection extends EventEmitter {
  reads = 0;
  authorized = true;
  destroyed = false;
  constructor(private readonly cn: string) {
    super();
  }
  getPeerCertificate(): object {
    this.reads += 1;
    return { subject: { CN: this.cn, O: ['system:nodes'] }, ext_key_usage: ['1.3.6.1.5.5.7.3.2'] };
  }
}

const request = (socket: FakeConnection): IncomingMessage => ({ socket: socket as unknown as TLSSocket, headers: {} }) as unknown as IncomingMessage;

void describe('x509 identity per connection', () => {
  void it('reads the certificate once per connection, and again on a new connection after close', async () => {
    const authn = createAuthenticator({});
    const first = new FakeConnection('system:node:n1');
    for (let i = 0; i < 5; i++) {
      const result = await authn.authenticate(request(first));
      assert.equal(result.kind, 'user');
      assert.equal(result.user.name, 'system:node:n1');
    }
    assert.equal(first.reads, 1);
    assert.ok(connectionCached(first));
    first.destroyed = true;
    first.emit('close');
    assert.ok(!connectionCached(first), 'the identity is dropped with the connection');
    const second = new FakeConnection('system:node:n2');
    const result = await authn.authenticate(request(second));
    assert.equal(result.kind === 'user' ? result.user.name : '', 'system:node:n2');
    assert.equal(second.reads, 1);
  });

  void it('does not cache on a connection that already closed', async () => {
    const authn = createAuthenticator({});
    const closed = new FakeConnection('u');
    closed.destroyed = true;
    await authn.authenticate(request(closed));
    await authn.authenticate(request(closed));
    assert.equal(closed.reads, 2);
    assert.ok(!connectionCached(closed));
  });
});
