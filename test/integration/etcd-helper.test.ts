/**
 * The etcd helper (test/helpers/etcd.ts) when a port it picked is taken before etcd binds it, as
 * a test running at the same time may do: the cluster starts on new ports instead of failing
 * with `address already in use`.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, describe, it } from 'node:test';
import { startEtcd } from '../helpers/etcd.js';
import { freePort } from '../helpers/loopback.js';

void describe('the etcd helper', () => {
  let squatter: Server | undefined;
  after(() => new Promise<void>((resolve) => {
    if (squatter === undefined) resolve();
    else squatter.close(() => { resolve(); });
  }));

  void it('starts on new ports when one it picked was taken first', async () => {
    // The squatter only holds the port: a health probe that reaches it is cut off at once, so no
    // accepted connection keeps server.close() (and this file's process) waiting.
    const server = createServer((socket) => { socket.destroy(); });
    squatter = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const taken = (server.address() as { port: number }).port;
    let picks = 0;
    const etcd = await startEtcd({ members: 1, pickPort: () => (++picks === 1 ? Promise.resolve(taken) : freePort()) });
    try {
      assert.ok(picks >= 4, `ports picked again after the taken one: ${picks}`);
      assert.equal(etcd.endpoints.length, 1);
      assert.doesNotMatch(etcd.endpoints[0] ?? '', new RegExp(`:${taken}$`));
    } finally {
      await etcd.stop();
    }
  });
});
