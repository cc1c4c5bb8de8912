/**
 * The watch cache of a real orch-apiserver, on SQLite and on etcd, as upstream's cacher answers:
 * GET and LIST at resourceVersion=0 from memory (no storage call: etcd_request_duration_seconds
 * counts only the store's), a write visible there within a deadline, "N" answered once the cache
 * reached N, a future N answered 504 Timeout (cause ResourceVersionTooLarge, Retry-After 1)
 * after the wait, LIST at 0 ignoring the limit; and with --watch-cache=false the same reads
 * served by the store (paged, counted).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApiServer, v1Node, type ApiServer } from '../helpers/apiserver.js';
import { waitFor } from '../helpers/wait.js';

type Obj = Record<string, unknown>;
const meta = (o: Obj): Obj => o.metadata as Obj;
const names = (list: Obj): string[] => (list.items as Obj[]).map((e) => String(meta(e).name));

/** How many storage calls of `operation` on `type` the server made (etcd_request_duration_seconds_count). */
async function storageCalls(server: ApiServer, operation: string, type: string): Promise<number> {
  const text = (await server.client.request('GET', '/metrics')).text;
  const line = text.split('\n').find((l) => l.startsWith('etcd_request_duration_seconds_count{') && l.includes(`operation="${operation}"`) && l.includes(`type="${type}"`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

for (const storage of ['sqlite', 'etcd'] as const) {
  void describe(`the watch cache on ${storage}`, () => {
    let server: ApiServer;
    let uncached: ApiServer;
    before(async () => {
      server = await startApiServer({ storage });
      uncached = await startApiServer({ storage, args: ['--watch-cache=false'] });
    });
    after(async () => {
      await uncached.stop();
      await server.stop();
    });

    void it('answers GET and LIST at resourceVersion=0 from memory, possibly stale, fresh within a deadline', async () => {
      const api = server.client;
      assert.equal((await api.request('POST', '/api/v1/nodes', { body: v1Node('wc-a', 10250) })).status, 201);
      // The cache may lag the write: poll (no fixed sleep) until resourceVersion=0 sees it.
      await waitFor('wc-a at resourceVersion=0', async () => (await api.request('GET', '/api/v1/nodes/wc-a?resourceVersion=0')).status === 200);
      const gets = await storageCalls(server, 'get', 'nodes');
      const lists = await storageCalls(server, 'list', 'nodes');
      for (let i = 0; i < 5; i++) {
        const res = await api.request('GET', '/api/v1/nodes/wc-a?resourceVersion=0');
        assert.equal(res.status, 200, res.text);
        assert.equal(meta(res.body).name, 'wc-a');
      }
      const list = await api.request('GET', '/api/v1/nodes?resourceVersion=0');
      assert.ok(names(list.body).includes('wc-a'));
      assert.equal(await storageCalls(server, 'get', 'nodes'), gets, 'no storage get for resourceVersion=0');
      assert.equal(await storageCalls(server, 'list', 'nodes'), lists, 'no storage list for resourceVersion=0');
      assert.equal((await api.request('GET', '/api/v1/nodes/wc-a')).status, 200);
      assert.equal(await storageCalls(server, 'get', 'nodes'), gets + 1, 'a GET without resourceVersion reads the store');
      const missing = await api.request('GET', '/api/v1/nodes/wc-none?resourceVersion=0');
      assert.equal(missing.status, 404, missing.text);
      assert.equal(missing.body.reason, 'NotFound');
      assert.equal((await api.request('GET', '/api/v1/nodes/wc-a?resourceVersion=x')).status, 400);
    });

    void it('answers resourceVersion=N once the cache reached N, and a future N with 504 after about 3 s', async () => {
      const api = server.client;
      const created = await api.request('POST', '/api/v1/nodes', { body: v1Node('wc-b', 10250) });
      assert.equal(created.status, 201, created.text);
      const rv = String(meta(created.body).resourceVersion);
      const got = await api.request('GET', `/api/v1/nodes/wc-b?resourceVersion=${rv}`);
      assert.equal(got.status, 200, got.text);
      assert.ok(Number(meta(got.body).resourceVersion) >= Number(rv));
      // A write to another resource: the nodes' cache reaches its revision too (a bookmark).
      const ns = await api.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'wc-ns' } } });
      const nsRv = String(meta(ns.body).resourceVersion);
      const listed = await api.request('GET', `/api/v1/nodes?resourceVersion=${nsRv}&resourceVersionMatch=NotOlderThan`);
      assert.equal(listed.status, 200, listed.text);
      assert.ok(Number(meta(listed.body).resourceVersion) >= Number(nsRv));
      assert.ok(names(listed.body).includes('wc-b'));
      const future = Number(nsRv) + 1_000_000;
      const started = Date.now();
      const res = await api.request('GET', `/api/v1/nodes/wc-b?resourceVersion=${future}`);
      const waited = Date.now() - started;
      assert.equal(res.status, 504, res.text);
      assert.equal(res.body.reason, 'Timeout');
      assert.match(String(res.body.message), new RegExp(`^Timeout: Too large resource version: ${future}, current: \\d+$`));
      const details = res.body.details as { causes?: { reason?: string; message?: string }[]; retryAfterSeconds?: number };
      assert.deepEqual(details.causes, [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }]);
      assert.equal(details.retryAfterSeconds, 1);
      assert.ok(waited >= 2_900 && waited < 10_000, `waited ${waited} ms (upstream: 3 s)`);
      const listFuture = await api.request('GET', `/api/v1/nodes?resourceVersion=${future}`);
      assert.equal(listFuture.status, 504, listFuture.text);
    });

    void it('lists at resourceVersion=0 whole whatever the limit; Exact and limit with N go to the store', async () => {
      const api = server.client;
      for (const name of ['wc-p1', 'wc-p2', 'wc-p3']) assert.equal((await api.request('POST', '/api/v1/nodes', { body: v1Node(name, 10250) })).status, 201);
      const all = await waitFor('three more nodes at resourceVersion=0', async () => {
        const res = await api.request('GET', '/api/v1/nodes?resourceVersion=0&limit=1');
        return names(res.body).filter((n) => n.startsWith('wc-p')).length === 3 ? res.body : undefined;
      });
      assert.equal(meta(all).continue, undefined, 'upstream\'s cache ignores the limit at resourceVersion=0');
      const rv = String(meta(all).resourceVersion);
      const lists = await storageCalls(server, 'list', 'nodes');
      const paged = await api.request('GET', `/api/v1/nodes?resourceVersion=${rv}&limit=1`);
      assert.equal(names(paged.body).length, 1);
      assert.ok(meta(paged.body).continue !== undefined, 'N with a limit is paged by the store');
      const exact = await api.request('GET', `/api/v1/nodes?resourceVersion=${rv}&resourceVersionMatch=Exact`);
      assert.equal(exact.status, 200, exact.text);
      assert.equal(meta(exact.body).resourceVersion, rv);
      assert.ok(await storageCalls(server, 'list', 'nodes') >= lists + 2);
    });

    void it('with --watch-cache=false reads every one from the store: resourceVersion=0 with a limit is paged', async () => {
      const api = uncached.client;
      for (const name of ['u1', 'u2']) assert.equal((await api.request('POST', '/api/v1/nodes', { body: v1Node(name, 10250) })).status, 201);
      const gets = await storageCalls(uncached, 'get', 'nodes');
      assert.equal((await api.request('GET', '/api/v1/nodes/u1?resourceVersion=0')).status, 200);
      assert.equal(await storageCalls(uncached, 'get', 'nodes'), gets + 1);
      const page = await api.request('GET', '/api/v1/nodes?resourceVersion=0&limit=1');
      assert.equal(names(page.body).length, 1);
      assert.ok(meta(page.body).continue !== undefined);
    });
  });
}
