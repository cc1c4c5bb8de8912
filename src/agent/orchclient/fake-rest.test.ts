/**
 * The shared FakeRestClient: the REST behaviour suite (what orch-apiserver does, see
 * test/integration/orchclient-behaviour.test.ts), and the test controls the suite does not cover.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WatchEvent } from './rest-types.js';
import { isResourceExpired, statusOf } from './status.js';
import { nodeSchema } from '../../apiserver/resources/nodes/index.js';
import { apiError, FakeRestClient, runRestBehaviour } from './testing.js';

type Obj = Record<string, unknown>;
const PODS = '/api/v1/namespaces/ns/pods';
const nameOf = (o: Obj): unknown => (o.metadata as Obj).name;
const rvOf = (o: Obj): number => Number((o.metadata as Obj).resourceVersion);

let namespaces = 0;
runRestBehaviour('FakeRestClient', () => {
  const rest = new FakeRestClient({ patchSchemas: { nodes: nodeSchema } });
  return Promise.resolve({
    rest,
    namespace: `ns-${++namespaces}`,
    compact: () => {
      rest.compact();
      return Promise.resolve();
    },
    cleanup: () => Promise.resolve(),
  });
});

void describe('FakeRestClient test controls', () => {
  void it('creates, reads, updates, patches and deletes by path, as the API server answers', async () => {
    const rest = new FakeRestClient();
    const a = await rest.create<Obj>(PODS, { metadata: { name: 'a', labels: { app: 'web' } }, spec: { n: 1 } });
    assert.deepEqual([nameOf(a), (a.metadata as Obj).namespace], ['a', 'ns']);
    const generated = await rest.create<Obj>(PODS, { metadata: { generateName: 'b-' } });
    assert.match(String(nameOf(generated)), /^b-[a-z0-9]{5}$/);
    await assert.rejects(rest.create(PODS, { metadata: { name: 'a' } }), (err) => statusOf(err)?.reason === 'AlreadyExists');
    await assert.rejects(rest.get(`${PODS}/nope`), (err) => statusOf(err)?.code === 404);
    const updated = await rest.update<Obj>(`${PODS}/a`, { ...a, spec: { n: 2 } });
    assert.ok(rvOf(updated) > rvOf(a));
    await assert.rejects(rest.update(`${PODS}/a`, a), (err) => statusOf(err)?.reason === 'Conflict', 'a stale resourceVersion');
    const withStatus = await rest.patch<Obj>(`${PODS}/a/status`, 'merge', { status: { phase: 'Running' }, spec: { n: 9 } });
    assert.deepEqual([withStatus.status, withStatus.spec], [{ phase: 'Running' }, { n: 2 }], 'the status subresource changes the status only');
    await assert.rejects(rest.patch(`${PODS}/a/status`, 'merge', { metadata: { uid: 'other' } }), (err) => statusOf(err)?.code === 409);
    await assert.rejects(rest.delete(`${PODS}/a`, { preconditions: { uid: 'other' } }), (err) => statusOf(err)?.code === 409);
    await rest.delete(`${PODS}/a`, { preconditions: { uid: (a.metadata as Obj).uid } });
    assert.equal(rest.objects.has(`${PODS}/a`), false);
    assert.deepEqual(rest.verbs(), ['create', 'create', 'create', 'get', 'update', 'update', 'patch', 'patch', 'delete', 'delete']);
    assert.equal(rest.callsOf('patch')[0]?.patchType, 'merge');
  });

  void it('lists a collection, across namespaces too, with label and field selectors', async () => {
    const rest = new FakeRestClient();
    rest.put(`${PODS}/a`, { metadata: { name: 'a', labels: { app: 'web' } }, spec: { nodeName: 'n1' } });
    rest.put('/api/v1/namespaces/other/pods/b', { metadata: { name: 'b', labels: { app: 'db' } }, spec: { nodeName: 'n2' } });
    const names = async (path: string, query = {}): Promise<unknown[]> => (await rest.list<Obj>(path, { query })).items.map(nameOf).sort();
    assert.deepEqual(await names(PODS), ['a']);
    assert.deepEqual(await names('/api/v1/pods'), ['a', 'b']);
    assert.deepEqual(await names('/api/v1/pods', { fieldSelector: 'spec.nodeName=n2' }), ['b']);
    assert.deepEqual(await names('/api/v1/pods', { labelSelector: 'app!=web' }), ['b']);
    assert.equal((await rest.list(PODS)).metadata?.resourceVersion, rest.resourceVersion);
  });

  void it('sends the store\'s changes to the watches of the collection; the test can push events and end a watch', async () => {
    const rest = new FakeRestClient({ now: () => 42 });
    const seen: string[] = [];
    const handle = rest.watch<Obj>('/api/v1/pods', (e: WatchEvent<Obj>) => seen.push(`${e.type} ${String(nameOf(e.object))}`), { query: { fieldSelector: 'metadata.name=a' } });
    await rest.create(PODS, { metadata: { name: 'a' } });
    await rest.create(PODS, { metadata: { name: 'b' } });
    await rest.patch(`${PODS}/a`, 'merge', { spec: { x: 1 } });
    rest.silentWatches = true;
    await rest.delete(`${PODS}/a`);
    rest.watches[0]?.emit({ type: 'ERROR', object: { metadata: { name: 'gone' } } });
    assert.deepEqual(seen, ['ADDED a', 'MODIFIED a', 'ERROR gone']);
    assert.equal(rest.watching, 1);
    rest.failNext('get', '/pods/', 'unavailable', 2);
    await assert.rejects(rest.get(`${PODS}/b`), (err) => statusOf(err)?.code === 503);
    await assert.rejects(rest.get(`${PODS}/b`));
    await rest.get(`${PODS}/b`);
    assert.equal(rest.calls.at(-1)?.at, 42);
    rest.close();
    assert.deepEqual([await handle.done, rest.watching, rest.closed], [{ reason: 'stopped' }, 0, 1]);
    assert.ok(isResourceExpired(apiError(410, 'Expired')));
  });
});
