/**
 * The etcd store against real etcd processes: the shared conformance suite on a single member,
 * a three-member cluster that keeps serving when one member stops, and `unavailable` when etcd
 * is down.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { isUnavailable } from '../../src/api/errors.js';
import { openEtcdStore, type EtcdStoreOptions, type ManagedStore, type WatchEvent } from '../../src/apiserver/storage/index.js';
import { runStoreConformance } from '../../src/apiserver/storage/conformance.js';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
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
