/**
 * The settings that let one orch-apiserver hold thousands of nodes: the listen backlog, the etcd
 * client's fault handling after a stall, and grouped creates on etcd (each caller with its own
 * answer).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { isAlreadyExists } from '../../src/api/errors.js';
import { openEtcdStore, type ManagedStore, type StoredObject } from '../../src/apiserver/storage/index.js';
import { startApiServer } from '../helpers/apiserver.js';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { waitFor } from '../helpers/wait.js';

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function etcd(): Promise<EtcdCluster> {
  const cluster = await startEtcd();
  cleanups.push(() => cluster.stop());
  return cluster;
}

void describe('orch-apiserver at scale', () => {
  void it('listens with a backlog of 4096 (as far as net.core.somaxconn allows), not Node\'s 511', async () => {
    const server = await startApiServer({ storage: 'sqlite' });
    cleanups.push(() => server.stop());
    const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8').trim());
    // For a listening socket, ss shows the backlog in Send-Q.
    const out = execFileSync('ss', ['-Hltn', `sport = :${server.port}`], { encoding: 'utf8' });
    const fields = out.trim().split(/\s+/);
    assert.equal(Number(fields[2]), Math.min(4096, somaxconn), out);
  });

  void it('serves right after etcd comes back from a stall longer than the request deadline', async () => {
    const cluster = await etcd();
    const store = await openEtcdStore({ endpoints: cluster.endpoints, prefix: '/stall', requestTimeoutMs: 500, compactionIntervalMs: 0 });
    cleanups.push(() => store.close());
    await store.create('/leases/n1', { metadata: { name: 'n1' } });
    const pid = cluster.pids()[0] as number;
    process.kill(pid, 'SIGSTOP');
    try {
      // Enough failed calls to open etcd3's default breaker (3 in a row) several times over.
      const failed = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => store.get(`/leases/n${i}`)));
      assert.ok(failed.every((r) => r.status === 'rejected'), 'calls during the stall fail at their deadline');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const started = Date.now();
    const got = await store.get('/leases/n1');
    assert.equal((got.metadata as { name: string }).name, 'n1');
    assert.ok(Date.now() - started < 1000, `the first call after the stall took ${Date.now() - started} ms`);
  });

  void it('passes an indexed etcd watcher only the changes of objects that had or have its value', async () => {
    const cluster = await etcd();
    const store = await openEtcdStore({ endpoints: cluster.endpoints, prefix: '/index', compactionIntervalMs: 0 });
    cleanups.push(() => store.close());
    const nodeOf = (o: StoredObject): string => ((o.spec ?? {}) as { nodeName?: string }).nodeName ?? '';
    const seen: string[] = [];
    const all: string[] = [];
    const name = (o: StoredObject): string => (o.metadata as { name: string }).name;
    const indexed = await store.watch('/pods/', { index: { name: 'nodeName', value: 'a', of: nodeOf }, onEvent: (e) => { if (e.type !== 'BOOKMARK' && e.type !== 'ERROR') seen.push(`${e.type} ${name(e.object)} ${nodeOf(e.object)}`); } });
    const plain = await store.watch('/pods/', { onEvent: (e) => { if (e.type !== 'BOOKMARK' && e.type !== 'ERROR') all.push(e.type); } });
    await store.create('/pods/ns/p1', { metadata: { name: 'p1' }, spec: { nodeName: '' } });
    await store.create('/pods/ns/p2', { metadata: { name: 'p2' }, spec: { nodeName: 'b' } });
    await store.update('/pods/ns/p1', {}, (o) => ({ ...o, spec: { nodeName: 'a' } }));
    await store.update('/pods/ns/p1', {}, (o) => ({ ...o, spec: { nodeName: 'b' } }));
    await store.update('/pods/ns/p2', {}, (o) => ({ ...o, metadata: { name: 'p2', labels: { x: 'y' } } }));
    await store.delete('/pods/ns/p1');
    await waitFor('every change on the plain watch', () => all.length === 6);
    assert.deepEqual(seen, ['MODIFIED p1 a', 'MODIFIED p1 b']);
    await indexed.close();
    await plain.close();
  });

  void it('lets a watch that starts a little behind the shared etcd watch join it, with the changes it missed first', async () => {
    const cluster = await etcd();
    const store = await openEtcdStore({ endpoints: cluster.endpoints, prefix: '/join', compactionIntervalMs: 0 });
    cleanups.push(() => store.close());
    const etcdWatchers = async (): Promise<number> => {
      const text = await (await fetch(`${cluster.endpoints[0] ?? ''}/metrics`)).text();
      return Number(/^etcd_debugging_mvcc_watcher_total (\d+)/m.exec(text)?.[1] ?? NaN);
    };
    const before = await etcdWatchers();
    const first: string[] = [];
    const a = await store.watch('/pods/', { onEvent: (e) => { if (e.type === 'ADDED') first.push((e.object.metadata as { name: string }).name); } });
    const revisions: string[] = [];
    for (let i = 0; i < 5; i++) revisions.push(((await store.create(`/pods/ns/p${i}`, { metadata: { name: `p${i}` } })).metadata as { resourceVersion: string }).resourceVersion);
    await waitFor('the first watcher to see the 5 creates', () => first.length === 5);
    const late: string[] = [];
    const b = await store.watch('/pods/ns/', { resourceVersion: revisions[1] ?? '', onEvent: (e) => { if (e.type === 'ADDED') late.push((e.object.metadata as { name: string }).name); } });
    await store.create('/pods/ns/p5', { metadata: { name: 'p5' } });
    await waitFor('the late watcher to see the missed creates, then the new one', () => late.length === 4);
    assert.deepEqual(late, ['p2', 'p3', 'p4', 'p5']);
    assert.equal(await etcdWatchers(), before + 1, 'both watchers ride on one etcd watch');
    await a.close();
    await b.close();
  });

  void it('groups concurrent creates into transactions, each caller answered with its own result', async () => {
    const cluster = await etcd();
    const store: ManagedStore = await openEtcdStore({ endpoints: cluster.endpoints, prefix: '/group', compactionIntervalMs: 0 });
    cleanups.push(() => store.close());
    await store.create('/events/ns/exists', { metadata: { name: 'exists' } });
    const keys = [...Array.from({ length: 60 }, (_, i) => `/events/ns/e${i}`), '/events/ns/exists', '/events/ns/e7'];
    const results = await Promise.allSettled(keys.map((key, i) => store.create(key, { metadata: { name: key.slice(11) }, n: i }, { ttlSeconds: 60 + (i % 2) })));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.flatMap((r, i) => (r.status === 'rejected' ? [{ key: keys[i], err: r.reason as unknown }] : []));
    assert.equal(ok.length, 60);
    assert.deepEqual(refused.map((r) => r.key).sort(), ['/events/ns/e7', '/events/ns/exists']);
    assert.ok(refused.every((r) => isAlreadyExists(r.err)));
    const revisions = new Set(ok.map((r) => (r.value.metadata as { resourceVersion: string }).resourceVersion));
    assert.ok(revisions.size < 30, `60 concurrent creates took ${revisions.size} transactions`);
    for (const [i, key] of keys.slice(0, 60).entries()) {
      const stored = await store.get(key);
      assert.equal(stored.n, i, key);
    }
  });
});
