/**
 * Lists and watches of events against a real orch-apiserver on SQLite and on etcd: paging with
 * limit/continue and remainingItemCount, label and field selectors, expired continue tokens
 * (410), watches from a resourceVersion, initial events, bookmarks, selector transitions,
 * timeouts, 410 for compacted history, and TTL expiry of events.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventsPath, startApiServer, v1Event, type ApiServer } from '../helpers/apiserver.js';
import { waitFor } from '../helpers/wait.js';

type Obj = Record<string, unknown>;
const meta = (o: Obj): Obj => o.metadata as Obj;
const names = (list: Obj): string[] => (list.items as Obj[]).map((e) => String(meta(e).name));

for (const storage of ['sqlite', 'etcd'] as const) {
  void describe(`lists and watches on ${storage}`, () => {
    let server: ApiServer;
    let ttlServer: ApiServer;
    before(async () => {
      server = await startApiServer({ storage, args: ['--watch-bookmark-interval=200ms', '--etcd-compaction-interval=500ms'] });
      ttlServer = await startApiServer({ storage, etcdEndpoints: server.etcdEndpoints, args: ['--event-ttl=2s'] });
    });
    after(async () => {
      await ttlServer.stop();
      await server.stop();
    });
    const api = (method: string, path: string, body?: unknown, contentType?: string): ReturnType<ApiServer['client']['request']> =>
      server.client.request(method, path, { ...(body === undefined ? {} : { body }), ...(contentType === undefined ? {} : { contentType }) });
    const namespace = async (name: string): Promise<void> => {
      assert.equal((await api('POST', '/api/v1/namespaces', { metadata: { name } })).status, 201);
    };

    void it('pages with limit and continue, with remainingItemCount, over one consistent revision', async () => {
      await namespace('paging');
      const path = eventsPath('paging');
      for (let i = 0; i < 25; i++) {
        const name = `e${String(i).padStart(2, '0')}`;
        assert.equal((await api('POST', path, v1Event(name, { metadata: { name, labels: { parity: i % 2 === 0 ? 'even' : 'odd' } } }, 'paging'))).status, 201);
      }
      const first = (await api('GET', `${path}?limit=10`)).body;
      assert.deepEqual(names(first), Array.from({ length: 10 }, (_, i) => `e${String(i).padStart(2, '0')}`));
      assert.equal(meta(first).remainingItemCount, 15);
      assert.equal(first.kind, 'EventList');
      const rv = meta(first).resourceVersion;
      await api('POST', path, v1Event('late', {}, 'paging'));
      const second = (await api('GET', `${path}?limit=10&continue=${encodeURIComponent(String(meta(first).continue))}`)).body;
      assert.equal(names(second)[0], 'e10');
      assert.equal(meta(second).remainingItemCount, 5);
      assert.equal(meta(second).resourceVersion, rv, 'later pages are read at the first page\'s revision');
      const third = (await api('GET', `${path}?limit=10&continue=${encodeURIComponent(String(meta(second).continue))}`)).body;
      assert.deepEqual(names(third), ['e20', 'e21', 'e22', 'e23', 'e24']);
      assert.equal(meta(third).continue, undefined);
      // With a selector: pages hold `limit` matches and no remainingItemCount.
      const odd1 = (await api('GET', `${path}?limit=4&labelSelector=parity%3Dodd`)).body;
      assert.deepEqual(names(odd1), ['e01', 'e03', 'e05', 'e07']);
      assert.equal(meta(odd1).remainingItemCount, undefined);
      const odd2 = (await api('GET', `${path}?limit=100&labelSelector=parity%3Dodd&continue=${encodeURIComponent(String(meta(odd1).continue))}`)).body;
      assert.deepEqual(names(odd2), ['e09', 'e11', 'e13', 'e15', 'e17', 'e19', 'e21', 'e23']);
      const bad = await api('GET', `${path}?limit=10&continue=garbage`);
      assert.equal(bad.status, 400, bad.text);
      assert.equal((await api('GET', `${path}?limit=ten`)).status, 400);
    });

    void it('selects by labels and fields, across namespaces', async () => {
      await namespace('sel');
      const path = eventsPath('sel');
      const specs: [string, Obj, Obj][] = [
        ['a', { app: 'web', tier: 'front' }, { reason: 'Started', type: 'Normal' }],
        ['b', { app: 'web', tier: 'back' }, { reason: 'Killing', type: 'Warning' }],
        ['c', { app: 'db' }, { reason: 'Started', type: 'Normal', regarding: { kind: 'Node', name: 'n1', namespace: 'sel' } }],
      ];
      for (const [name, labels, extra] of specs) assert.equal((await api('POST', path, v1Event(name, { ...extra, metadata: { name, labels } }, 'sel'))).status, 201);
      const sel = async (query: string): Promise<string[]> => {
        const res = await api('GET', `${path}?${query}`);
        assert.equal(res.status, 200, res.text);
        return names(res.body).sort();
      };
      assert.deepEqual(await sel('labelSelector=app%3Dweb'), ['a', 'b']);
      assert.deepEqual(await sel('labelSelector=app%3D%3Dweb,tier!%3Dback'), ['a']);
      assert.deepEqual(await sel('labelSelector=app%20in%20(db,web)'), ['a', 'b', 'c']);
      assert.deepEqual(await sel('labelSelector=app%20notin%20(web)'), ['c']);
      assert.deepEqual(await sel('labelSelector=tier'), ['a', 'b']);
      assert.deepEqual(await sel('labelSelector=!tier'), ['c']);
      assert.deepEqual(await sel('fieldSelector=reason%3DStarted'), ['a', 'c']);
      assert.deepEqual(await sel('fieldSelector=type%3DWarning'), ['b']);
      assert.deepEqual(await sel('fieldSelector=regarding.kind%3DNode,regarding.name%3Dn1'), ['c']);
      assert.deepEqual(await sel('fieldSelector=metadata.name!%3Da&labelSelector=app%3Dweb'), ['b']);
      assert.equal((await api('GET', `${path}?fieldSelector=spec.nope%3D1`)).status, 400);
      assert.equal((await api('GET', `${path}?labelSelector=a%20in%20(`)).status, 400);
      const all = (await api('GET', '/apis/events.orch.io/v1/events?fieldSelector=metadata.namespace%3Dsel')).body;
      assert.deepEqual(names(all).sort(), ['a', 'b', 'c']);
      const everywhere = (await api('GET', '/apis/events.orch.io/v1/events')).body;
      assert.ok(names(everywhere).length >= 3);
      const core = (await api('GET', '/api/v1/namespaces/sel/events?fieldSelector=involvedObject.name%3Dn1')).body;
      assert.deepEqual(names(core), ['c']);
    });

    void it('watches from a resourceVersion: ADDED, MODIFIED, DELETED in order', async () => {
      await namespace('w1');
      const path = eventsPath('w1');
      await api('POST', path, v1Event('before', {}, 'w1'));
      const rv = String(meta((await api('GET', path)).body).resourceVersion);
      const watch = await server.client.watch(`${path}?watch=true&resourceVersion=${rv}`);
      assert.equal(watch.status, 200);
      await api('POST', path, v1Event('after', {}, 'w1'));
      await api('PATCH', `${path}/after`, { metadata: { labels: { x: 'y' } } }, 'application/merge-patch+json');
      await api('DELETE', `${path}/after`);
      const seen = [await watch.next(), await watch.next(), await watch.next()];
      assert.deepEqual(seen.map((e) => `${e.type} ${String(meta(e.object).name)}`), ['ADDED after', 'MODIFIED after', 'DELETED after']);
      assert.equal(seen[0]?.object.kind, 'Event');
      watch.close();
      // Without a resourceVersion: the current objects first.
      const fresh = await server.client.watch(`/apis/events.orch.io/v1/watch/namespaces/w1/events`);
      const initial = await fresh.next();
      assert.equal(initial.type, 'ADDED');
      assert.equal(meta(initial.object).name, 'before');
      fresh.close();
    });

    void it('sends bookmarks when allowed, ends at timeoutSeconds, and follows selectors in and out', async () => {
      await namespace('w2');
      const path = eventsPath('w2');
      await api('POST', path, v1Event('blue', { metadata: { name: 'blue', labels: { color: 'blue' } } }, 'w2'));
      const rv = String(meta((await api('GET', path)).body).resourceVersion);
      const bookmarks = await server.client.watch(`${path}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true`);
      const bookmark = await bookmarks.next(5000);
      assert.equal(bookmark.type, 'BOOKMARK');
      assert.deepEqual(Object.keys(bookmark.object).sort(), ['apiVersion', 'kind', 'metadata']);
      assert.match(String(meta(bookmark.object).resourceVersion), /^\d+$/);
      bookmarks.close();
      const initial = await server.client.watch(`${path}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan`);
      assert.equal((await initial.next()).type, 'ADDED');
      const end = await initial.next();
      assert.equal(end.type, 'BOOKMARK');
      assert.deepEqual(meta(end.object).annotations, { 'k8s.io/initial-events-end': 'true' });
      initial.close();
      assert.equal((await api('GET', `${path}?watch=true&sendInitialEvents=true`)).status, 400);
      const timed = await server.client.watch(`${path}?watch=true&resourceVersion=${rv}&timeoutSeconds=1`);
      await timed.ended;
      // A minute's bookmark interval (ttlServer's default), a 3 s timeout: the one BOOKMARK is the
      // one upstream sends 2 s before a watch's end, so the client resumes from a recent revision.
      const rvNow = String(meta((await ttlServer.client.request('GET', '/apis/events.orch.io/v1/events?limit=1')).body).resourceVersion);
      const ending = await ttlServer.client.watch(`/apis/events.orch.io/v1/events?watch=true&resourceVersion=${rvNow}&allowWatchBookmarks=true&timeoutSeconds=3`);
      const started = Date.now();
      const early = await ending.next(5000);
      assert.equal(early.type, 'BOOKMARK');
      const before = Date.now();
      await ending.ended;
      assert.ok(Date.now() - before >= 1000, `the BOOKMARK came ${before - started} ms after the start, ${Date.now() - before} ms before the end`);
      const selected = await server.client.watch(`${path}?watch=true&resourceVersion=${rv}&labelSelector=color%3Dblue`);
      await api('PATCH', `${path}/blue`, { metadata: { labels: { color: 'red' } } }, 'application/merge-patch+json');
      await api('PATCH', `${path}/blue`, { metadata: { labels: { color: 'blue' } } }, 'application/merge-patch+json');
      const out = await selected.next();
      const back = await selected.next();
      assert.equal(out.type, 'DELETED');
      assert.equal(back.type, 'ADDED');
      selected.close();
      // From now, without initial events: an object that matched before the watch started and
      // stops matching is DELETED (each change carries its previous state; no list seeds it).
      const fromNow = await server.client.watch(`${path}?watch=true&sendInitialEvents=false&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&labelSelector=color%3Dblue`);
      await api('PATCH', `${path}/blue`, { metadata: { labels: { color: 'green' } } }, 'application/merge-patch+json');
      let left = await fromNow.next();
      while (left.type === 'BOOKMARK') left = await fromNow.next();
      assert.equal(left.type, 'DELETED');
      assert.equal(meta(left.object).name, 'blue');
      fromNow.close();
      await api('PATCH', `${path}/blue`, { metadata: { labels: { color: 'blue' } } }, 'application/merge-patch+json');
      const one = await server.client.watch(`${path}/blue?watch=true`);
      assert.equal((await one.next()).type, 'ADDED');
      one.close();
    });

    void it('answers 410 for a continue token or a watch whose revision was compacted', async () => {
      await namespace('gone');
      const path = eventsPath('gone');
      for (const n of ['a', 'b', 'c']) await api('POST', path, v1Event(n, {}, 'gone'));
      const page = (await api('GET', `${path}?limit=1`)).body;
      const oldRv = String(meta(page).resourceVersion);
      await waitFor('the first page\'s revision to be compacted', async () => {
        await api('POST', path, v1Event(`w${Date.now()}`, {}, 'gone'));
        const res = await api('GET', `${path}?limit=1&continue=${encodeURIComponent(String(meta(page).continue))}`);
        return res.status === 410 ? res : undefined;
      }, { timeoutMs: 20_000, intervalMs: 300 }).then((res) => {
        assert.equal(res.body.reason, 'Expired');
        assert.equal(res.body.code, 410);
      });
      const watch = await server.client.watch(`${path}?watch=true&resourceVersion=${oldRv}`);
      assert.equal(watch.status, 200);
      const error = await watch.next();
      assert.equal(error.type, 'ERROR');
      assert.equal(error.object.kind, 'Status');
      assert.equal(error.object.code, 410);
      assert.equal(error.object.reason, 'Expired');
      await watch.ended;
    });

    void it('expires events after --event-ttl, with a DELETED watch event', async () => {
      const path = eventsPath();
      const created = await ttlServer.client.request('POST', path, { body: v1Event('short-lived') });
      assert.equal(created.status, 201, created.text);
      const watch = await ttlServer.client.watch(`${path}?watch=true&resourceVersion=${String(meta(created.body).resourceVersion)}`);
      const deleted = await watch.next(15_000);
      assert.equal(deleted.type, 'DELETED');
      assert.equal(meta(deleted.object).name, 'short-lived');
      assert.equal((await ttlServer.client.request('GET', `${path}/short-lived`)).status, 404);
      watch.close();
    });
  });
}
