/**
 * The REST behaviour suite (node:test): what the node agent relies on from the API server,
 * stated once and run against every server its tests use: the FakeRestClient in the unit lane
 * (fake-rest.test.ts) and a real orch-apiserver in the integration lane
 * (test/integration/orchclient-behaviour.test.ts). Where the two disagree, the real server is
 * right (unless it deviates from upstream kube-apiserver) and the fake is fixed. Each case gets
 * a fresh harness and namespace (behaviour-support.ts); objects are here, lists and selectors
 * in behaviour-lists.ts, watches in behaviour-watch.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeListBehaviour } from './behaviour-lists.js';
import { meta, nameOf, rejectsWith, rvOf, uidOf, withCase, type Obj, type RestFactory } from './behaviour-support.js';
import { describeWatchBehaviour } from './behaviour-watch.js';

export { CASE_LABEL, type RestFactory, type RestHarness, type RestHarnessOptions } from './behaviour-support.js';

function describeObjectBehaviour(make: RestFactory): void {
  void it('creates an object in the namespace of its path, with a uid, a resourceVersion and a creation time', () =>
    withCase(make, async (c) => {
      const created = await c.rest.create<Obj>(c.configmaps, c.configMap('one', { a: '1' }));
      assert.deepEqual([nameOf(created), meta(created).namespace, created.data], ['one', c.namespace, { a: '1' }]);
      assert.match(uidOf(created), /^.+$/);
      assert.match(rvOf(created), /^\d+$/);
      assert.match(String(meta(created).creationTimestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.deepEqual(await c.rest.get<Obj>(`${c.configmaps}/one`), created);
      const generated = await c.rest.create<Obj>(c.configmaps, { ...c.configMap(''), metadata: { generateName: 'gen-' } });
      assert.match(nameOf(generated), /^gen-[a-z0-9]{5}$/);
    }));

  void it('refuses a second create of a name (409 AlreadyExists) and a body naming another namespace (400)', () =>
    withCase(make, async (c) => {
      await c.rest.create(c.configmaps, c.configMap('one'));
      await rejectsWith(c.rest.create(c.configmaps, c.configMap('one')), { code: 409, reason: 'AlreadyExists', name: 'one' }, 'a second create');
      const elsewhere = { ...c.configMap('two'), metadata: { name: 'two', namespace: 'other' } };
      await rejectsWith(c.rest.create(c.configmaps, elsewhere), { code: 400, reason: 'BadRequest' }, 'a body in another namespace');
    }));

  void it('answers 404 NotFound naming the object for get, update, patch and delete of a missing one', () =>
    withCase(make, async (c) => {
      const missing = `${c.configmaps}/nope`;
      const notFound = { code: 404, reason: 'NotFound', name: 'nope' };
      await rejectsWith(c.rest.get(missing), notFound, 'get');
      await rejectsWith(c.rest.update(missing, c.configMap('nope')), notFound, 'update');
      await rejectsWith(c.rest.patch(missing, 'merge', { data: { a: '1' } }), notFound, 'patch');
      await rejectsWith(c.rest.delete(missing), notFound, 'delete');
    }));

  void it('updates with optimistic concurrency: the current resourceVersion or none succeeds, a stale one is 409 Conflict', () =>
    withCase(make, async (c) => {
      const path = `${c.configmaps}/one`;
      const created = await c.rest.create<Obj>(c.configmaps, c.configMap('one', { a: '1' }));
      const updated = await c.rest.update<Obj>(path, { ...created, data: { a: '2' } });
      assert.notEqual(rvOf(updated), rvOf(created));
      assert.deepEqual([updated.data, uidOf(updated), meta(updated).creationTimestamp], [{ a: '2' }, uidOf(created), meta(created).creationTimestamp]);
      await rejectsWith(c.rest.update(path, { ...created, data: { a: 'stale' } }), { code: 409, reason: 'Conflict', name: 'one' }, 'a stale resourceVersion');
      const { resourceVersion: _rv, ...unversioned } = meta(created);
      const blind = await c.rest.update<Obj>(path, { ...created, metadata: unversioned, data: { a: '3' } });
      assert.deepEqual(blind.data, { a: '3' }, 'an update without a resourceVersion is unconditional');
      await rejectsWith(c.rest.update(path, { ...blind, metadata: { ...meta(blind), uid: 'another-uid' } }), { code: 409, reason: 'Conflict' }, 'another uid');
      await rejectsWith(c.rest.update(path, { ...blind, metadata: { ...meta(blind), name: 'two' } }), { code: 400, reason: 'BadRequest' }, 'a body naming another object');
    }));

  void it('patches with merge, strategic merge and JSON patch; a resourceVersion in a patch is a precondition', () =>
    withCase(make, async (c) => {
      const path = `${c.configmaps}/one`;
      const created = await c.rest.create<Obj>(c.configmaps, c.configMap('one', { a: '1', b: '2' }));
      assert.deepEqual((await c.rest.patch<Obj>(path, 'merge', { data: { b: null, c: '3' } })).data, { a: '1', c: '3' });
      assert.deepEqual((await c.rest.patch<Obj>(path, 'strategic', { data: { d: '4' } })).data, { a: '1', c: '3', d: '4' });
      const json = await c.rest.patch<Obj>(path, 'json', [{ op: 'test', path: '/data/a', value: '1' }, { op: 'replace', path: '/data/a', value: 'j' }, { op: 'remove', path: '/data/c' }]);
      assert.deepEqual(json.data, { a: 'j', d: '4' });
      assert.notEqual(rvOf(json), rvOf(created));
      await rejectsWith(c.rest.patch(path, 'json', [{ op: 'test', path: '/data/a', value: 'other' }]), { code: 422, reason: 'Invalid' }, 'a failed JSON patch test');
      await rejectsWith(c.rest.patch(path, 'merge', { metadata: { resourceVersion: rvOf(created) }, data: { e: '5' } }), { code: 409, reason: 'Conflict' }, 'a stale resourceVersion in a patch');
      assert.deepEqual((await c.rest.get<Obj>(path)).data, { a: 'j', d: '4' }, 'the refused patches changed nothing');
    }));

  void it('deletes with uid and resourceVersion preconditions; a configmap answers a Status, a pod the pod', () =>
    withCase(make, async (c) => {
      const path = `${c.configmaps}/one`;
      const created = await c.rest.create<Obj>(c.configmaps, c.configMap('one'));
      await rejectsWith(c.rest.delete(path, { preconditions: { uid: 'another-uid' } }), { code: 409, reason: 'Conflict' }, 'another uid');
      await rejectsWith(c.rest.delete(path, { preconditions: { resourceVersion: '1' } }), { code: 409, reason: 'Conflict' }, 'another resourceVersion');
      const answer = await c.rest.delete<Obj>(path, { preconditions: { uid: uidOf(created), resourceVersion: rvOf(created) } });
      assert.deepEqual([answer.kind, answer.status, (answer.details as Obj | undefined)?.name, (answer.details as Obj | undefined)?.uid], ['Status', 'Success', 'one', uidOf(created)]);
      await rejectsWith(c.rest.get(path), { code: 404, reason: 'NotFound', name: 'one' }, 'get after the delete');
      const pod = await c.rest.create<Obj>(c.pods, c.pod('web'));
      const deleted = await c.rest.delete<Obj>(`${c.pods}/web`);
      assert.deepEqual([deleted.kind, nameOf(deleted), uidOf(deleted)], ['Pod', 'web', uidOf(pod)], 'a pod not bound to a node goes at once, answering the pod');
      await rejectsWith(c.rest.get(`${c.pods}/web`), { code: 404, reason: 'NotFound', name: 'web' }, 'get after the delete');
    }));

  void it('deletes a pod bound to a node gracefully: it stays, with a deletion timestamp, until deleted with grace period 0', () =>
    withCase(make, async (c) => {
      const path = `${c.pods}/web`;
      const pod = await c.rest.create<Obj>(c.pods, c.pod('web', c.unique('node')));
      const marked = await c.rest.delete<Obj>(path);
      assert.deepEqual([nameOf(marked), meta(marked).deletionGracePeriodSeconds], ['web', 30]);
      assert.match(String(meta(marked).deletionTimestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.notEqual(rvOf(marked), rvOf(pod));
      assert.equal(meta(await c.rest.get<Obj>(path)).deletionTimestamp, meta(marked).deletionTimestamp);
      await c.rest.delete(path, { gracePeriodSeconds: 0, preconditions: { uid: uidOf(pod) } });
      await rejectsWith(c.rest.get(path), { code: 404, reason: 'NotFound', name: 'web' }, 'get after the final delete');
    }));

  void it('writes a pod\'s status only through /status, and its spec and metadata only through the pod', () =>
    withCase(make, async (c) => {
      const path = `${c.pods}/web`;
      const pod = await c.rest.create<Obj>(c.pods, c.pod('web'));
      const status = await c.rest.patch<Obj>(`${path}/status`, 'merge', { spec: { activeDeadlineSeconds: 5 }, status: { phase: 'Running', message: 'm' } });
      assert.deepEqual([(status.status as Obj).phase, (status.status as Obj).message], ['Running', 'm']);
      assert.equal((status.spec as Obj).activeDeadlineSeconds, undefined, 'the status subresource leaves the spec');
      assert.deepEqual((await c.rest.get<Obj>(`${path}/status`)).status, status.status, 'GET of /status answers the pod');
      const relabelled = await c.rest.patch<Obj>(path, 'merge', { metadata: { labels: { extra: 'y' } }, status: { phase: 'Failed' } });
      assert.deepEqual([(meta(relabelled).labels as Obj).extra, (relabelled.status as Obj).phase], ['y', 'Running'], 'the pod keeps its status');
      const put = await c.rest.update<Obj>(`${path}/status`, { ...relabelled, status: { ...(relabelled.status as Obj), phase: 'Succeeded' } });
      assert.equal((put.status as Obj).phase, 'Succeeded');
      await rejectsWith(c.rest.update(`${path}/status`, { ...relabelled, status: { phase: 'Failed' } }), { code: 409, reason: 'Conflict', name: 'web' }, 'a stale resourceVersion on /status');
      assert.equal(uidOf(put), uidOf(pod));
    }));

  void it('merges a node\'s conditions by type under a strategic merge patch of /status', () =>
    withCase(make, async (c) => {
      const name = c.unique('node');
      const path = `/api/v1/nodes/${name}`;
      await c.rest.create(`/api/v1/nodes`, c.node(name));
      const condition = (type: string, status: string): Obj => ({ type, status, reason: `${type}${status}`, message: 'm', lastHeartbeatTime: '2026-01-02T03:04:05Z', lastTransitionTime: '2026-01-02T03:04:05Z' });
      await c.rest.patch(`${path}/status`, 'strategic', { status: { conditions: [condition('Ready', 'True'), condition('MemoryPressure', 'False')] } });
      const patched = await c.rest.patch<Obj>(`${path}/status`, 'strategic', { status: { conditions: [condition('Ready', 'False')] } });
      const conditions = ((patched.status as Obj).conditions as Obj[]).map((x) => `${String(x.type)}=${String(x.status)}`).sort();
      assert.deepEqual(conditions, ['MemoryPressure=False', 'Ready=False']);
      await c.rest.delete(path);
    }));
}

export function runRestBehaviour(name: string, make: RestFactory): void {
  void describe(`REST behaviour: ${name}`, () => {
    void describe('objects', () => {
      describeObjectBehaviour(make);
    });
    void describe('lists and selectors', () => {
      describeListBehaviour(make);
    });
    void describe('watches', () => {
      describeWatchBehaviour(make);
    });
  });
}
