import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { listen } from './listen.js';

function open(port: number, host: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, host, () => { resolve(s); });
    s.on('error', reject);
  });
}

void describe('listening', () => {
  void it('takes 0.0.0.0 and :: as every family, and ends connections at their maximum lifetime', async () => {
    const server = createServer((_req, res) => { res.end('ok'); });
    const l = await listen(server, { address: '0.0.0.0', port: 0, maxLifetimeMs: 200 });
    try {
      assert.equal(l.address, '::');
      const v4 = await open(l.port, '127.0.0.1');
      const v6 = await open(l.port, '::1');
      const started = Date.now();
      await Promise.all([once(v4, 'close'), once(v6, 'close')]);
      assert.ok(Date.now() - started < 5000);
    } finally {
      await l.close();
    }
  });

  void it('binds one address when given one, and closes every connection on close', async () => {
    const server = createServer();
    const l = await listen(server, { address: '127.0.0.1', port: 0 });
    assert.equal(l.address, '127.0.0.1');
    const s = await open(l.port, '127.0.0.1');
    await l.close();
    await once(s, 'close');
    await l.close();
    await assert.rejects(open(l.port, '127.0.0.1'));
  });
});
