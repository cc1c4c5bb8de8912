/**
 * The etcd store against real etcd processes: the shared conformance suite on a single member,
 * a three-member cluster that keeps serving when one member stops, calls that run into their
 * deadline without touching the connections or the shared watch, and `unavailable` when etcd is
 * down.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { isUnavailable } from '../../src/api/errors.js';
import { openEtcdStore, type EtcdStoreOptions, type ManagedStore, type WatchEvent } from '../../src/apiserver/storage/index.js';
import { runStoreConformance } from '../../src/apiserver/storage/conformance.js';
import { connectionsTo, etcdWatchCounters, startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { waitFor } from '../helpers/wait.js';

const clusters: EtcdCluster[] = [];
async function cluster(members: 1 | 3): Promise<EtcdCluster> {
  const started = await startEtcd({ members });
  clusters.push(started);
  return started;
}
after(async () => {
  await Promise.all(clusters.map((c) => c.stop()));
});

const testOptions = { bookmarkIntervalMs: 100, compactionIntervalMs: 0, requestTimeoutMs: 2000 } satisfies Partial<EtcdStoreOptions>;

let shared: Promise<EtcdCluster> | undefined;
let stores = 0;
runStoreConformance('etcd', async () => {
  shared ??= cluster(1);
  const { endpoints } = await shared;
  stores += 1;
  const store = await openEtcdStore({ endpoints, prefix: `/conformance-${stores}`, ...testOptions });
  return { store, cleanup: () => store.close() };
});

async function withEtcdStore(options: EtcdStoreOptions, body: (store: ManagedStore) => Promise<void>): Promise<void> {
  const store = await openEtcdStore(options);
  try {
    await body(store);
  } finally {
    await store.close();
  }
}

void describe('etcd store on a cluster', () => {
  void it('keeps serving reads, writes and watches when one of three members stops', async () => {
    const etcd = await cluster(3);
    await withEtcdStore({ endpoints: etcd.endpoints, ...testOptions }, async (store) => {
      for (let i = 0; i < 10; i++) await store.create(`/things/ns/before-${i}`, { metadata: { name: `before-${i}` } });
      const events: WatchEvent[] = [];
      const watch = await store.watch('/things/ns/', { onEvent: (e) => events.push(e) });
      await etcd.stopMember(0);
      // Leadership may move: wait until a write goes through, then every request must succeed.
      await waitFor('a write after the member stopped', () => store.create('/things/ns/probe', { metadata: { name: 'probe' } }).then(() => true), {
        timeoutMs: 20_000,
        intervalMs: 200,
      });
      for (let i = 0; i < 20; i++) {
        await store.create(`/things/ns/after-${i}`, { metadata: { name: `after-${i}` } });
        await store.get(`/things/ns/before-${i % 10}`);
        await store.update(`/things/ns/after-${i}`, {}, (o) => ({ ...o, spec: { i } }));
      }
      const list = await store.list('/things/ns/', { limit: 7 });
      assert.equal((list.remainingItemCount ?? 0) + list.items.length, 31);
      await store.delete('/things/ns/probe');
      await waitFor('the watch to see every write', () => events.filter((e) => e.type !== 'BOOKMARK').length === 42, { timeoutMs: 20_000 });
      await watch.close();
    });
  });

  void it('keeps its connections and the shared watch when calls run into their deadline', async () => {
    const etcd = await cluster(1);
    const endpoint = etcd.endpoints[0] as string;
    await withEtcdStore({ endpoints: etcd.endpoints, ...testOptions, requestTimeoutMs: 300 }, async (store) => {
      const added: string[] = [];
      const watch = await store.watch('/things/', { onEvent: (e) => { if (e.type === 'ADDED') added.push((e.object.metadata as { name: string }).name); } });
      await store.create('/things/ns/before', { metadata: { name: 'before' } });
      await waitFor('the watch to see the first create', () => added.length === 1);
      const connections = connectionsTo(endpoint);
      const counters = await etcdWatchCounters(etcd.endpoints);
      assert.equal(connections.length >= 2, true, `a unary and a watch connection, got ${connections.join(', ')}`);
      const pid = etcd.pids()[0] as number;
      process.kill(pid, 'SIGSTOP');
      try {
        // The signal is delivered asynchronously: calls sent before etcd has stopped may be answered.
        await waitFor('etcd to be stopped', () => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('T') === true);
        const stalled = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => store.get(`/things/ns/missing-${i}`)));
        assert.ok(stalled.every((r) => r.status === 'rejected' && isUnavailable(r.reason)), 'calls during the stall fail at their deadline');
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      for (let i = 0; i < 3; i++) await store.create(`/things/ns/after-${i}`, { metadata: { name: `after-${i}` } });
      await waitFor('the watch to see the creates after the stall', () => added.length >= 4);
      assert.deepEqual(added, ['before', 'after-0', 'after-1', 'after-2'], 'every change once, in order');
      // A channel reset closes the connection it replaces; sockets this process opens meanwhile
      // (the metrics read's, still closing) may appear beside them.
      const after = connectionsTo(endpoint);
      assert.ok(connections.every((port) => after.includes(port)), `the connections to etcd are still open (no channel reset): before ${connections.join(', ')}, after ${after.join(', ')}`);
      assert.deepEqual(await etcdWatchCounters(etcd.endpoints), counters, 'no watch stream restarted');
      await watch.close();
    });
  });

  void it('lists more than gRPC\'s default 4 MiB message in one answer', async () => {
    shared ??= cluster(1);
    const { endpoints } = await shared;
    await withEtcdStore({ endpoints, prefix: '/big', ...testOptions }, async (store) => {
      const data = 'x'.repeat(1024 * 1024);
      for (let i = 0; i < 6; i++) await store.create(`/things/ns/big-${i}`, { metadata: { name: `big-${i}` }, data });
      const listed = await store.list('/things/');
      assert.equal(listed.items.length, 6);
    });
  });

  void it('reports unavailable when etcd is down', async () => {
    const etcd = await cluster(1);
    await withEtcdStore({ endpoints: etcd.endpoints, ...testOptions, requestTimeoutMs: 1000 }, async (store) => {
      await store.create('/things/ns/a', { metadata: { name: 'a' } });
      await etcd.stopMember(0);
      await assert.rejects(store.get('/things/ns/a'), (err: unknown) => isUnavailable(err));
      await assert.rejects(store.create('/things/ns/b', {}), (err: unknown) => isUnavailable(err));
      await assert.rejects(store.list('/things/'), (err: unknown) => isUnavailable(err));
      await assert.rejects(store.watch('/things/', { onEvent: () => undefined }), (err: unknown) => isUnavailable(err));
    });
  });
});
