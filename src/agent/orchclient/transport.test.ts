import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { realClock } from '../../api/clock.js';
import { OrchError } from '../../api/errors.js';
import { createTransport, credentials, type Transport } from './transport.js';

// A server that closes a kept-alive connection when the next request comes on it, as one whose
// keep-alive timeout ran out while the client was taking that connection from its pool.
let server: ReturnType<typeof createServer>;
let url: string;
const served = new Set<Socket>();
let seen: { method: string; reused: boolean }[] = [];
let closeReused = true;

before(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const reused = served.has(req.socket);
    seen.push({ method: req.method ?? '', reused });
    if (reused && closeReused) {
      req.socket.destroy();
      return;
    }
    served.add(req.socket);
    req.resume();
    req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'); });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => { server.close(() => { resolve(); }); server.closeAllConnections(); }));
beforeEach(() => {
  seen = [];
  closeReused = true;
});

function transport(): Transport {
  return createTransport({ connection: { server: url, insecureSkipTLSVerify: false }, clock: realClock });
}

const send = (t: Transport, method: string): Promise<{ status: number }> =>
  t.send({ method, path: '/apis/coordination.orch.io/v1/namespaces/node-lease/leases/n1', accept: 'application/json', ...(method === 'GET' ? {} : { body: Buffer.from('{}') }) });

void describe('the transport on a kept-alive connection the server closed', () => {
  void it('sends a PUT again on a new connection (idempotent: the server never read the first)', async () => {
    const t = transport();
    try {
      assert.equal((await send(t, 'GET')).status, 200);
      assert.equal((await send(t, 'PUT')).status, 200);
      assert.deepEqual(seen, [{ method: 'GET', reused: false }, { method: 'PUT', reused: true }, { method: 'PUT', reused: false }]);
    } finally {
      t.close();
    }
  });

  void it('does not send a POST or PATCH again: the caller judges those', async () => {
    const t = transport();
    try {
      for (const method of ['POST', 'PATCH']) {
        assert.equal((await send(t, 'GET')).status, 200);
        await assert.rejects(send(t, method), (err: unknown) => err instanceof OrchError && err.category === 'unavailable' && /socket hang up/.test(err.message));
      }
      assert.deepEqual(seen.map((s) => s.method), ['GET', 'POST', 'GET', 'PATCH']);
    } finally {
      t.close();
    }
  });

  void it('does not retry a failure on a fresh connection', async () => {
    const t = transport();
    closeReused = false;
    const destroyAll = (req: IncomingMessage): void => { req.socket.destroy(); };
    server.prependListener('request', destroyAll);
    try {
      await assert.rejects(send(t, 'PUT'), /socket hang up/);
      assert.equal(seen.length, 1);
    } finally {
      server.removeListener('request', destroyAll);
      t.close();
    }
  });
});

void describe('TLS material', () => {
  void it('is parsed once for every connection object that shares it, whatever the token', () => {
    const ca = Buffer.from('no certificate in it');
    const a = credentials({ server: 'https://127.0.0.1:1', insecureSkipTLSVerify: false, token: 'sims.n-1' });
    const b = credentials({ server: 'https://127.0.0.1:1', insecureSkipTLSVerify: false, token: 'sims.n-2' });
    assert.ok('secureContext' in a && 'secureContext' in b);
    assert.equal(a.secureContext, b.secureContext);
    // Other material, another context; the same Buffer in a new connection object, the same one.
    const withCa = credentials({ server: 'https://127.0.0.1:1', insecureSkipTLSVerify: false, ca });
    assert.ok('secureContext' in withCa);
    assert.notEqual(withCa.secureContext, a.secureContext);
    const again = credentials({ server: 'https://127.0.0.1:1', insecureSkipTLSVerify: false, ca, token: 't' });
    assert.ok('secureContext' in again);
    assert.equal(again.secureContext, withCa.secureContext);
  });
});
