/**
 * The agent's REST client and reflector against a real orch-apiserver (SQLite): CRUD of a
 * configmap, the three patch types, Status kept on errors, a watch, the rate limit, and the
 * reflector resuming from its last resourceVersion after server-side watch timeouts and after
 * the connection to the server was cut (a TCP proxy in between that drops and refuses
 * connections), and re-listing on 410 once the server compacted the history it needed
 * (a second server with --etcd-compaction-interval=500ms).
 */
import assert from 'node:assert/strict';
import { createServer as createNetServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { realClock } from '../../src/api/clock.js';
import { OrchError } from '../../src/api/errors.js';
import type { Logger } from '../../src/agent/logging/index.js';
import {
  createReflector, createRestClient, loadOrchconfig, statusOf,
  type OrchConnection, type RestClient, type WatchEvent, type WatchHandle,
} from '../../src/agent/orchclient/index.js';
import { startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { waitFor } from '../helpers/wait.js';

interface ConfigMap {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; uid?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}

function recordingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger: Logger = {
    info: (m) => { lines.push(`I ${m}`); },
    warn: (m) => { lines.push(`W ${m}`); },
    error: (m) => { lines.push(`E ${m}`); },
    enabled: () => false,
    v: () => undefined,
    named: () => logger,
  };
  return { logger, lines };
}

/** A TCP proxy to the server that can cut every connection and refuse new ones. */
interface Proxy { readonly port: number; down(): void; up(): void; close(): Promise<void> }

async function startProxy(targetPort: number): Promise<Proxy> {
  const sockets = new Set<Socket>();
  let isDown = false;
  const server: Server = createNetServer((client) => {
    if (isDown) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const s of [client, upstream]) {
      s.on('error', drop);
      s.on('close', drop);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    down: () => {
      isDown = true;
      for (const s of [...sockets]) s.destroy();
    },
    up: () => { isDown = false; },
    close: () => new Promise<void>((resolve) => {
      for (const s of [...sockets]) s.destroy();
      server.close(() => { resolve(); });
    }),
  };
}

/** A RestClient that counts the watches it opened. */
function counting(rest: RestClient): { rest: RestClient; watches: () => number } {
  let n = 0;
  return {
    rest: { ...rest, watch: <T>(path: string, onEvent: (e: WatchEvent<T>) => void, o?: Parameters<RestClient['watch']>[2]): WatchHandle => { n++; return rest.watch(path, onEvent, o); } },
    watches: () => n,
  };
}

const cm = (name: string, data: Record<string, string> = {}, labels: Record<string, string> = {}): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data });
const cmPath = (ns: string): string => `/api/v1/namespaces/${ns}/configmaps`;
/** Not the kube-root-ca.crt the API server's root CA publisher puts in every namespace. */
const ours = (c: ConfigMap): boolean => c.metadata.name !== 'kube-root-ca.crt';

void describe('the REST client against orch-apiserver', () => {
  let server: ApiServer;
  let connection: OrchConnection;
  let rest: RestClient;
  const log = recordingLogger();
  before(async () => {
    server = await startApiServer({ storage: 'sqlite', args: ['--watch-bookmark-interval=200ms'] });
    connection = await loadOrchconfig(server.adminKubeconfig);
    // The default contentType (protobuf): bodies still go as JSON, with one warning.
    rest = createRestClient({ clock: realClock, connection, qps: 0, burst: 0, logger: log.logger });
    for (const name of ['crud', 'watch', 'resume']) await rest.create('/api/v1/namespaces', { metadata: { name } });
  });
  after(async () => {
    rest.close();
    await server.stop();
  });

  void it('creates, reads, lists, updates, patches (merge, strategic, JSON) and deletes a configmap', async () => {
    assert.deepEqual(log.lines, [], 'the protobuf default is served as JSON without a warning');
    const path = cmPath('crud');
    const created = await rest.create<ConfigMap>(path, cm('one', { a: '1' }, { app: 'x' }));
    assert.equal(created.metadata.name, 'one');
    await assert.rejects(rest.create(path, cm('one')), (err: unknown) => err instanceof OrchError && err.category === 'already-exists'
      && statusOf(err)?.reason === 'AlreadyExists' && statusOf(err)?.code === 409 && statusOf(err)?.details?.name === 'one');
    assert.deepEqual((await rest.get<ConfigMap>(`${path}/one`)).data, { a: '1' });
    await rest.create(path, cm('two', {}, { app: 'y' }));
    const listed = await rest.list<ConfigMap>(path, { query: { labelSelector: 'app=x' } });
    assert.deepEqual(listed.items.map((c) => c.metadata.name), ['one']);
    assert.match(listed.metadata?.resourceVersion ?? '', /^\d+$/);
    const updated = await rest.update<ConfigMap>(`${path}/one`, { ...created, data: { a: '2' } });
    assert.deepEqual(updated.data, { a: '2' });
    await assert.rejects(rest.update(`${path}/one`, { ...created, data: { a: 'stale' } }), (err: unknown) => err instanceof OrchError
      && err.category === 'conflict' && statusOf(err)?.reason === 'Conflict');
    assert.deepEqual((await rest.patch<ConfigMap>(`${path}/one`, 'merge', { data: { b: 'm' } })).data, { a: '2', b: 'm' });
    assert.deepEqual((await rest.patch<ConfigMap>(`${path}/one`, 'strategic', { data: { c: 's' } })).data, { a: '2', b: 'm', c: 's' });
    const jsonPatched = await rest.patch<ConfigMap>(`${path}/one`, 'json', [{ op: 'replace', path: '/data/a', value: 'j' }, { op: 'remove', path: '/data/b' }]);
    assert.deepEqual(jsonPatched.data, { a: 'j', c: 's' });
    await assert.rejects(rest.delete(`${path}/one`, { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: 'not-its-uid' } }),
      (err: unknown) => err instanceof OrchError && err.category === 'conflict');
    await rest.delete(`${path}/one`, { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: created.metadata.uid } });
    await rest.delete(`${path}/two`);
    await assert.rejects(rest.get(`${path}/one`), (err: unknown) => err instanceof OrchError && err.category === 'not-found' && statusOf(err)?.code === 404);
    assert.deepEqual(log.lines, [], 'no warning from the whole exchange');
  });

  void it('watches from a resourceVersion; a server-side timeout ends the watch as closed', async () => {
    const path = cmPath('watch');
    const rv = (await rest.list<ConfigMap>(path)).metadata?.resourceVersion ?? '';
    const events: string[] = [];
    const w = rest.watch<ConfigMap>(path, (e) => events.push(`${e.type} ${e.object.metadata.name}`), { query: { resourceVersion: rv } });
    await rest.create(path, cm('w'));
    await rest.patch(`${path}/w`, 'merge', { data: { x: '1' } });
    await rest.delete(`${path}/w`);
    await waitFor('three watch events', () => events.length >= 3);
    assert.deepEqual(events, ['ADDED w', 'MODIFIED w', 'DELETED w']);
    w.stop();
    assert.deepEqual(await w.done, { reason: 'stopped' });
    const timed = rest.watch(path, () => undefined, { query: { resourceVersion: rv, timeoutSeconds: 1 } });
    assert.deepEqual(await timed.done, { reason: 'closed' });
  });

  void it('waits for tokens of orchAPIQPS/orchAPIBurst (exempt calls do not)', async () => {
    const limited = createRestClient({ clock: realClock, connection, qps: 5, burst: 1, contentType: 'application/json' });
    const started = Date.now();
    for (let i = 0; i < 6; i++) await limited.get('/api/v1/namespaces/crud');
    const took = Date.now() - started;
    // Five waits of 200 ms; a generous lower bound only (exact spacing: rate-limit.test.ts).
    assert.ok(took >= 800, `6 calls at qps 5, burst 1 took ${took} ms`);
    for (let i = 0; i < 6; i++) await limited.get('/api/v1/namespaces/crud', { exempt: true });
    limited.close();
  });

  void it('reflects a collection: resumes after server-side watch timeouts and a cut connection, without listing again', async () => {
    const path = cmPath('resume');
    await rest.create(path, cm('r1'));
    const proxy = await startProxy(server.port);
    const viaProxy = createRestClient({ clock: realClock, connection: { ...connection, server: `https://127.0.0.1:${proxy.port}` }, qps: 0, burst: 0, contentType: 'application/json', timeoutMs: 2000 });
    const { rest: counted, watches } = counting(viaProxy);
    const lists: string[][] = [];
    const events: string[] = [];
    const rlog = recordingLogger();
    const reflector = createReflector<ConfigMap>({
      rest: counted, clock: realClock, path, logger: rlog.logger, minWatchTimeoutSeconds: 1, backoff: { initialMs: 100, maxMs: 500 },
      onList: (items) => { lists.push(items.filter(ours).map((c) => c.metadata.name)); },
      onEvent: (e) => { if (ours(e.object)) events.push(`${e.type} ${e.object.metadata.name}`); },
    });
    try {
      reflector.start();
      await waitFor('the first list', () => reflector.hasSynced());
      assert.deepEqual(lists, [['r1']]);
      await rest.create(path, cm('r2'));
      await waitFor('ADDED r2', () => events.includes('ADDED r2'));
      // Watches end server-side after 1 to 2 s and are reopened from the last resourceVersion.
      await waitFor('three watches', () => watches() >= 3, { timeoutMs: 15_000 });
      await rest.patch(`${path}/r1`, 'merge', { data: { n: '1' } });
      await waitFor('MODIFIED r1', () => events.includes('MODIFIED r1'));

      proxy.down();
      await rest.create(path, cm('r3'));
      await rest.delete(`${path}/r2`);
      await waitFor('the outage to be noticed', () => rlog.lines.some((l) => l.startsWith('W')));
      proxy.up();
      await waitFor('the changes made during the outage', () => events.includes('ADDED r3') && events.includes('DELETED r2'), { timeoutMs: 15_000 });
      assert.deepEqual(lists, [['r1']], 'resumed from the last resourceVersion, no re-list');
      assert.deepEqual(events, ['ADDED r2', 'MODIFIED r1', 'ADDED r3', 'DELETED r2']);
      await waitFor('the recovery line', () => rlog.lines.some((l) => l.includes('work again')));
      assert.equal(rlog.lines.filter((l) => l.startsWith('W')).length, 1, `one warning for the outage: ${rlog.lines.join(' | ')}`);
    } finally {
      await reflector.stop();
      viaProxy.close();
      await proxy.close();
    }
  });
});

void describe('the reflector when the server compacted its history', () => {
  let server: ApiServer;
  before(async () => {
    server = await startApiServer({ storage: 'sqlite', args: ['--etcd-compaction-interval=500ms'] });
  });
  after(async () => {
    await server.stop();
  });

  void it('lists again after a 410 for its resourceVersion', async () => {
    const connection = await loadOrchconfig(server.adminKubeconfig);
    const direct = createRestClient({ clock: realClock, connection, qps: 0, burst: 0, contentType: 'application/json' });
    await direct.create('/api/v1/namespaces', { metadata: { name: 'gone' } });
    const path = cmPath('gone');
    await direct.create(path, cm('g1'));
    const proxy = await startProxy(server.port);
    const viaProxy = createRestClient({ clock: realClock, connection: { ...connection, server: `https://127.0.0.1:${proxy.port}` }, qps: 0, burst: 0, contentType: 'application/json', timeoutMs: 2000 });
    const lists: string[][] = [];
    const rlog = recordingLogger();
    const reflector = createReflector<ConfigMap>({
      rest: viaProxy, clock: realClock, path, logger: rlog.logger, backoff: { initialMs: 100, maxMs: 500 },
      onList: (items) => { lists.push(items.filter(ours).map((c) => c.metadata.name).sort()); },
      onEvent: () => undefined,
    });
    try {
      reflector.start();
      await waitFor('the first list', () => reflector.hasSynced());
      proxy.down();
      const rv = reflector.lastSyncResourceVersion();
      await direct.create(path, cm('g2'));
      await direct.create(path, cm('g3'));
      await waitFor(`the history after resourceVersion ${rv} to be compacted`, async () => {
        const w = await server.client.watch(`${path}?watch=true&resourceVersion=${rv}`);
        try {
          const first = await w.next(2000);
          return first.type === 'ERROR' && first.object.code === 410;
        } finally {
          w.close();
        }
      }, { timeoutMs: 20_000, intervalMs: 200 });
      proxy.up();
      await waitFor('the re-list', () => lists.length === 2, { timeoutMs: 15_000 });
      assert.deepEqual(lists, [['g1'], ['g1', 'g2', 'g3']]);
      assert.ok(rlog.lines.some((l) => l.includes('too old; listing again')), rlog.lines.join(' | '));
    } finally {
      await reflector.stop();
      viaProxy.close();
      direct.close();
      await proxy.close();
    }
  });
});
