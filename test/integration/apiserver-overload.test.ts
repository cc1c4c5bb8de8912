/**
 * orch-apiserver under overload: a watcher that never reads costs the server a bounded amount of
 * memory and is ended (upstream's per-watcher queue), while the watchers that read get every
 * event in order.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect, type TLSSocket } from 'node:tls';
import { after, describe, it } from 'node:test';
import { startApiServer, type ApiServer, type WatchStream } from '../helpers/apiserver.js';
import { waitFor } from '../helpers/wait.js';

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:')) ?? '';
  return Number(/(\d+)/.exec(line)?.[1] ?? '0') * 1024;
}

/** A watch request on a raw TLS socket that stops reading after the response's first bytes. */
async function stalledWatcher(server: ApiServer, path: string): Promise<{ socket: TLSSocket; closed: Promise<void> }> {
  const socket = connect({ host: '127.0.0.1', port: server.port, ca: readFileSync(server.caFile), servername: 'localhost' });
  const closed = new Promise<void>((resolve) => socket.on('close', () => { resolve(); }));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${server.token}\r\nAccept: application/json\r\n\r\n`);
  await new Promise<void>((resolve) => socket.once('data', () => { resolve(); }));
  // From here on nothing is read: the kernel's buffers fill, then the server's.
  socket.pause();
  return { socket, closed };
}

/** Reads every event of a watch until `count` have come; their resourceVersions. */
async function collect(watch: WatchStream, count: number): Promise<number[]> {
  const rvs: number[] = [];
  while (rvs.length < count) {
    const event = await watch.next(60_000);
    assert.equal(event.type, 'ADDED', JSON.stringify(event).slice(0, 300));
    rvs.push(Number((event.object.metadata as { resourceVersion: string }).resourceVersion));
  }
  return rvs;
}

void describe('orch-apiserver under overload', () => {
  void it('ends a watcher that never reads while 10,000 events flow; its memory stays bounded and the others get every event in order', async (t) => {
    const server = await startApiServer({ storage: 'sqlite' });
    cleanups.push(() => server.stop());
    const pid = server.pid as number;
    const ns = 'default';
    const list = await server.client.request('GET', `/api/v1/namespaces/${ns}/configmaps`);
    const rv = (list.body.metadata as { resourceVersion: string }).resourceVersion;
    const path = `/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${rv}`;
    const readers = [await server.client.watch(path), await server.client.watch(path)];
    cleanups.push(() => {
      for (const w of readers) w.close();
    });
    const stalled = await stalledWatcher(server, path);
    cleanups.push(() => {
      stalled.socket.destroy();
    });
    const before = rssBytes(pid);
    const total = 10_000;
    // ~2 KiB per event: 20 MiB in all, more than loopback's socket buffers hold.
    const payload = 'x'.repeat(2048);
    const reading = readers.map((w) => collect(w, total));
    let next = 0;
    let peak = before;
    const worker = async (): Promise<void> => {
      while (next < total) {
        const i = next;
        next += 1;
        const res = await server.client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: `cm-${i}` }, data: { payload } } });
        assert.equal(res.status, 201, res.text.slice(0, 300));
        if (i % 500 === 0) peak = Math.max(peak, rssBytes(pid));
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    const got = await Promise.all(reading);
    peak = Math.max(peak, rssBytes(pid));
    for (const rvs of got) {
      assert.equal(rvs.length, total);
      for (let i = 1; i < rvs.length; i += 1) assert.ok((rvs[i] as number) > (rvs[i - 1] as number), `event ${i} out of order`);
    }
    await waitFor('the server to end the stalled watcher', async () => {
      const metrics = await server.client.request('GET', '/metrics');
      return /apiserver_terminated_watchers_total\{resource="configmaps"\} 1\b/.test(metrics.text);
    }, { timeoutMs: 30_000, intervalMs: 200 });
    // Reading again, the client finds the connection ended (after what the kernel still held).
    stalled.socket.resume();
    let closed = false;
    void stalled.closed.then(() => {
      closed = true;
    });
    await waitFor('the stalled watcher\'s connection to end', () => closed, { timeoutMs: 30_000 });
    const growth = peak - before;
    // The stored objects and SQLite's cache take some; the stalled watcher at most 16 MiB.
    const bound = 200 * 1024 * 1024;
    assert.ok(growth < bound, `the server's RSS grew by ${Math.round(growth / 1048576)} MiB (bound ${bound / 1048576} MiB)`);
    const reason = /ending the watch of configmaps[^\n]*/.exec(server.logs())?.[0];
    assert.ok(reason !== undefined, 'the server logs why it ended the watcher');
    t.diagnostic(`RSS growth ${Math.round(growth / 1048576)} MiB; ${reason}`);
  });
});
