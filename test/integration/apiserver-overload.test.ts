/**
 * orch-apiserver under overload: 200 clients hammering list and create while 50 nodes renew their
 * leases (API Priority and Fairness keeps the leases served and turns the excess away with 429);
 * a watcher that never reads costs the server a bounded amount of memory and is ended
 * (upstream's per-watcher queue), while the watchers that read get every event in order.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect, type TLSSocket } from 'node:tls';
import { setTimeout as delay } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { ApiClient, startApiServer, type ApiServer, type Response, type WatchStream } from '../helpers/apiserver.js';
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

const HAMMERERS = 200;
const NODES = 50;
/** A renewal must be answered before the next is due: the agent's renew interval, a quarter of its 40 s lease. */
const RENEW_DEADLINE_MS = 10_000;
/** The server's RSS under the hammering (about 120 MiB idle, about 310 MiB at its peak). */
const RSS_BOUND = 512 * 1024 * 1024;

interface Tally {
  readonly statuses: Map<number, number>;
  readonly problems: string[];
}

function count(tally: Tally, what: string, res: Response, expected: readonly number[]): void {
  tally.statuses.set(res.status, (tally.statuses.get(res.status) ?? 0) + 1);
  if (res.status === 429) {
    if (res.headers['retry-after'] === undefined) tally.problems.push(`${what}: a 429 without Retry-After`);
    if (res.headers['x-orch-pf-prioritylevel-uid'] === undefined) tally.problems.push(`${what}: a 429 without X-Orch-PF-PriorityLevel-UID`);
  } else if (!expected.includes(res.status) && tally.problems.length < 20) {
    tally.problems.push(`${what}: ${res.status} ${res.text.slice(0, 200)}`);
  }
}

void describe('orch-apiserver under overload', () => {
  void it('keeps 50 nodes\' lease renewals within their deadline while 200 clients hammering list and create get 429s with Retry-After, no 5xx, RSS bounded', async (t) => {
    const nodeTokens = Array.from({ length: NODES }, (_, i) => ({ token: `node-token-${i}`, user: `system:node:node-${i}`, groups: ['system:nodes', 'system:authenticated'] }));
    // One user's 200 workers (a runaway controller): its flow has a hand of 6 queues of 50 in
    // global-default, which two requests in flight per worker overfill.
    const hammerToken = { token: 'hammer-token', user: 'runaway-controller', groups: ['system:authenticated'] };
    // A server concurrency of 20: global-default gets 2 seats, node-high 4.
    const server = await startApiServer({ storage: 'sqlite', tokens: [...nodeTokens, hammerToken], args: ['--max-requests-inflight=10', '--max-mutating-requests-inflight=10'] });
    cleanups.push(() => server.stop());
    const pid = server.pid as number;
    const ns = 'hammered';
    assert.equal((await server.client.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status, 201);
    // Lists of 200 objects of 1 KiB: each takes a seat for a while.
    await Promise.all(Array.from({ length: 200 }, async (_, i) => {
      const res = await server.client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: `seed-${i}` }, data: { v: 'x'.repeat(1024) } } });
      assert.equal(res.status, 201, res.text);
    }));
    const leasePath = (i: number): string => `/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases/node-${i}`;
    const nodeClients = nodeTokens.map((n) => new ApiClient(server.url, server.client.ca, n.token));
    cleanups.push(() => {
      for (const c of nodeClients) c.close();
    });
    const leases = await Promise.all(nodeClients.map(async (c, i) => {
      const res = await c.request('POST', '/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases', {
        body: { metadata: { name: `node-${i}` }, spec: { holderIdentity: `node-${i}`, leaseDurationSeconds: 40, renewTime: new Date().toISOString() } },
      });
      assert.equal(res.status, 201, res.text);
      return res.body;
    }));
    const before = rssBytes(pid);
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssBytes(pid));
    }, 100);
    cleanups.push(() => {
      clearInterval(sampler);
    });
    let stopping = false;
    const hammer: Tally = { statuses: new Map(), problems: [] };
    const nodes: Tally = { statuses: new Map(), problems: [] };
    const renewals = new Array<number>(NODES).fill(0);
    let slowest = 0;
    const hammerClients = Array.from({ length: HAMMERERS }, () => new ApiClient(server.url, server.client.ca, hammerToken.token));
    cleanups.push(() => {
      for (const c of hammerClients) c.close();
    });
    let created = 0;
    const hammerLoop = async (c: ApiClient, w: number, op: 'list' | 'create'): Promise<void> => {
      while (!stopping) {
        const res = op === 'list' ? await c.request('GET', `/api/v1/namespaces/${ns}/configmaps`)
          : await c.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { generateName: `w${w}-` }, data: { v: 'y'.repeat(256) } } });
        count(hammer, op, res, op === 'list' ? [200] : [201]);
        if (res.status === 201) created += 1;
        // A well-behaved client waits as long as the server asks.
        if (res.status === 429) await delay(Number(res.headers['retry-after'] ?? '1') * 1000);
      }
    };
    const renewLoop = async (c: ApiClient, i: number): Promise<void> => {
      let lease = leases[i] as Record<string, unknown>;
      while (!stopping) {
        const started = Date.now();
        const res = await c.request('PUT', leasePath(i), { body: { ...lease, spec: { ...(lease.spec as object), renewTime: new Date().toISOString() } } });
        const took = Date.now() - started;
        slowest = Math.max(slowest, took);
        count(nodes, `renewal of node-${i}`, res, [200]);
        if (res.status !== 200) return;
        if (took > RENEW_DEADLINE_MS) nodes.problems.push(`node-${i}'s renewal took ${took} ms`);
        lease = res.body;
        renewals[i] = (renewals[i] as number) + 1;
        // The agents' pace, ten times faster: one renewal a second per node.
        await delay(Math.max(0, 1000 - took));
      }
    };
    const loops = [
      ...hammerClients.flatMap((c, w) => [hammerLoop(c, w, 'list'), hammerLoop(c, w, 'create')]),
      ...nodeClients.map(renewLoop),
    ];
    try {
      await waitFor('every node to renew its lease 5 times and the hammering clients to be turned away 100 times', () =>
        nodes.problems.length > 0 || hammer.problems.length > 0 || (renewals.every((n) => n >= 5) && (hammer.statuses.get(429) ?? 0) >= 100),
      { timeoutMs: 45_000, intervalMs: 200 });
    } finally {
      stopping = true;
      await Promise.all(loops);
      clearInterval(sampler);
    }
    const rejected = (await server.client.request('GET', '/metrics')).text.split('\n')
      .filter((l) => l.startsWith('apiserver_flowcontrol_rejected_requests_total{'));
    t.diagnostic(`hammering: ${JSON.stringify([...hammer.statuses])}, ${created} created; renewals ${renewals.reduce((a, b) => a + b, 0)}, slowest ${slowest} ms; RSS ${Math.round(before / 1048576)} -> peak ${Math.round(peak / 1048576)} MiB`);
    t.diagnostic(rejected.join('; '));
    assert.deepEqual(nodes.problems, [], 'every renewal is answered 200 within its deadline');
    assert.deepEqual(hammer.problems, [], 'the hammering clients get 200/201 or 429 with Retry-After, never a 5xx');
    assert.ok(renewals.every((n) => n >= 5), `every node renewed 5 times: ${renewals.join(',')}`);
    assert.ok((hammer.statuses.get(429) ?? 0) >= 100, 'the hammering clients were turned away');
    assert.ok(rejected.some((l) => l.includes('priority_level="global-default"')), 'the rejections are global-default\'s');
    assert.ok(!rejected.some((l) => l.includes('priority_level="node-high"')), 'node-high rejected nothing');
    assert.ok(peak < RSS_BOUND, `the server's RSS peaked at ${Math.round(peak / 1048576)} MiB (bound ${RSS_BOUND / 1048576} MiB)`);
  });

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
