/**
 * The Event API (docs/apiserver/events.md) over HTTPS against a real orch-apiserver, on SQLite
 * and on etcd: create, get, list, update, patch (three types), delete, deletecollection with
 * their parameters (dryRun, pretty, preconditions, selectors) and their error bodies.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventsPath, startApiServer, v1Event, type ApiServer, type Response } from '../helpers/apiserver.js';

type Obj = Record<string, unknown>;
const meta = (o: Obj): Obj => o.metadata as Obj;

function assertStatus(res: Response, code: number, reason: string, message?: RegExp): void {
  assert.equal(res.status, code, `${res.status} ${res.text}`);
  assert.equal(res.body.kind, 'Status');
  assert.equal(res.body.apiVersion, 'v1');
  assert.equal(res.body.status, 'Failure');
  assert.equal(res.body.reason, reason);
  assert.equal(res.body.code, code);
  if (message !== undefined) assert.match(String(res.body.message), message);
}

for (const storage of ['sqlite', 'etcd'] as const) {
  void describe(`Event API on ${storage}`, () => {
    let server: ApiServer;
    const path = eventsPath();
    before(async () => {
      server = await startApiServer({ storage });
    });
    after(async () => {
      await server.stop();
    });
    const api = (method: string, p: string, options?: Parameters<ApiServer['client']['request']>[2]): Promise<Response> => server.client.request(method, p, options);

    void it('creates an event (201) with uid, creationTimestamp, resourceVersion and the namespace of the path', async () => {
      const body = v1Event('create-1');
      delete (body.metadata as Obj).namespace;
      const res = await api('POST', path, { body });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.kind, 'Event');
      assert.equal(res.body.apiVersion, 'events.orch.io/v1');
      assert.equal(meta(res.body).namespace, 'default');
      assert.match(String(meta(res.body).uid), /^[0-9a-f-]{36}$/);
      assert.match(String(meta(res.body).creationTimestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.match(String(meta(res.body).resourceVersion), /^[1-9]\d*$/);
      assert.equal(res.body.eventTime, '2024-05-01T10:00:00.123456Z');
      const got = await api('GET', `${path}/create-1`);
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, res.body);
    });

    void it('generates names from generateName, accepts YAML bodies', async () => {
      const body = v1Event('');
      body.metadata = { generateName: 'gen-' };
      const res = await api('POST', path, { body });
      assert.equal(res.status, 201, res.text);
      assert.match(String(meta(res.body).name), /^gen-[a-z0-9]{5}$/);
      const yaml = 'apiVersion: events.orch.io/v1\nkind: Event\nmetadata:\n  name: from-yaml\neventTime: "2024-05-01T10:00:00Z"\nreportingController: orch.io/test\nreportingInstance: i\naction: A\nreason: R\ntype: Warning\nregarding: {kind: Node, name: n1}\n';
      const created = await api('POST', path, { body: yaml, contentType: 'application/yaml' });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.eventTime, '2024-05-01T10:00:00.000000Z');
    });

    void it('answers 409 AlreadyExists for a second create of the same name', async () => {
      await api('POST', path, { body: v1Event('dup') });
      const res = await api('POST', path, { body: v1Event('dup') });
      assertStatus(res, 409, 'AlreadyExists', /^events\.events\.orch\.io "dup" already exists$/);
      assert.deepEqual(res.body.details, { name: 'dup', group: 'events.orch.io', kind: 'events' });
    });

    void it('answers 422 Invalid naming every invalid field', async () => {
      const bad = v1Event('bad', { reason: '', action: 'x'.repeat(129), type: 'Odd', note: 'n'.repeat(1025), reportingController: 'a/b/c' });
      delete bad.eventTime;
      delete bad.reportingInstance;
      const res = await api('POST', path, { body: bad });
      assertStatus(res, 422, 'Invalid', /^Event\.events\.orch\.io "bad" is invalid: \[/);
      const details = res.body.details as { causes: { field: string; reason: string }[]; kind: string; group: string };
      assert.equal(details.kind, 'Event');
      assert.equal(details.group, 'events.orch.io');
      const fields = new Set(details.causes.map((c) => c.field));
      for (const f of ['eventTime', 'type', 'reason', 'action', 'note', 'reportingController', 'reportingInstance']) assert.ok(fields.has(f), `cause for ${f}: ${res.text}`);
      assert.ok(details.causes.some((c) => c.field === 'type' && c.reason === 'FieldValueNotSupported'));
      assert.ok(details.causes.some((c) => c.field === 'eventTime' && c.reason === 'FieldValueRequired'));
      const deprecated = await api('POST', path, { body: v1Event('dep', { deprecatedCount: 3 }) });
      assertStatus(deprecated, 422, 'Invalid', /deprecatedCount: Invalid value: 3: needs to be unset/);
      const badName = await api('POST', path, { body: v1Event('Bad_Name') });
      assertStatus(badName, 422, 'Invalid', /metadata\.name/);
    });

    void it('rejects unknown fields (strict), wrong kinds, wrong types and malformed bodies with 400', async () => {
      const unknown = await api('POST', path, { body: v1Event('u1', { extra: 1, regarding: { kind: 'Pod', nme: 'x' } }) });
      assertStatus(unknown, 400, 'BadRequest', /strict decoding error: unknown field "extra", unknown field "regarding\.nme"|strict decoding error: unknown field "regarding\.nme", unknown field "extra"/);
      const ignored = await api('POST', `${path}?fieldValidation=Ignore`, { body: v1Event('u2', { extra: 1 }) });
      assert.equal(ignored.status, 201, ignored.text);
      assert.equal(ignored.body.extra, undefined);
      const warned = await api('POST', `${path}?fieldValidation=Warn`, { body: v1Event('u3', { extra: 1 }) });
      assert.equal(warned.status, 201);
      assert.match(String(warned.headers.warning), /unknown field \\"extra\\"/);
      assertStatus(await api('POST', path, { body: v1Event('k1', { kind: 'Pod' }) }), 400, 'BadRequest', /kind/);
      assertStatus(await api('POST', path, { body: v1Event('k2', { apiVersion: 'events.orch.io/v2' }) }), 400, 'BadRequest', /API version/);
      assertStatus(await api('POST', path, { body: v1Event('t1', { reason: 5 }) }), 400, 'BadRequest', /reason: expected string/);
      assertStatus(await api('POST', path, { body: v1Event('t2', { eventTime: 'yesterday' }) }), 400, 'BadRequest', /eventTime/);
      assertStatus(await api('POST', path, { body: '{"metadata": ' }), 400, 'BadRequest', /not valid JSON/);
      assertStatus(await api('POST', path, { body: '[1,2]' }), 400, 'BadRequest');
      assertStatus(await api('POST', path, { body: 'a: [', contentType: 'application/yaml' }), 400, 'BadRequest', /YAML/);
      assertStatus(await api('POST', path, { body: v1Event('ns', {}, 'other') }), 400, 'BadRequest', /does not match the namespace/);
      assertStatus(await api('POST', path, { body: 'x', contentType: 'text/plain' }), 415, 'UnsupportedMediaType');
    });

    void it('dryRun=All validates without persisting, other dryRun values are 400', async () => {
      const res = await api('POST', `${path}?dryRun=All`, { body: v1Event('dry') });
      assert.equal(res.status, 201, res.text);
      assert.equal(meta(res.body).name, 'dry');
      assert.equal((await api('GET', `${path}/dry`)).status, 404);
      assertStatus(await api('POST', `${path}?dryRun=All`, { body: v1Event('dry', { reason: '' }) }), 422, 'Invalid');
      assertStatus(await api('POST', `${path}?dryRun=Yes`, { body: v1Event('dry') }), 400, 'BadRequest', /dryRun/);
    });

    void it('gets with pretty=true indented, and answers 404 NotFound with the upstream message', async () => {
      await api('POST', path, { body: v1Event('pretty') });
      const res = await api('GET', `${path}/pretty?pretty=true`);
      assert.equal(res.status, 200);
      assert.match(res.text, /^\{\n {2}"kind": "Event",\n {2}"apiVersion": "events\.orch\.io\/v1",\n/);
      const compact = await api('GET', `${path}/pretty`);
      assert.equal(compact.text.split('\n').length, 2);
      const missing = await api('GET', `${path}/nope`);
      assertStatus(missing, 404, 'NotFound', /^events\.events\.orch\.io "nope" not found$/);
      assert.deepEqual(missing.body.details, { name: 'nope', group: 'events.orch.io', kind: 'events' });
      assertStatus(await api('GET', '/apis/events.orch.io/v1/namespaces/missing-ns/events/x'), 404, 'NotFound');
      assertStatus(await api('POST', eventsPath('missing-ns'), { body: v1Event('x', {}, 'missing-ns') }), 404, 'NotFound', /^namespaces "missing-ns" not found$/);
    });

    void it('updates with optimistic concurrency (409 Conflict on a stale resourceVersion) and keeps events immutable but for series', async () => {
      const created = (await api('POST', path, { body: v1Event('upd') })).body;
      const rv = String(meta(created).resourceVersion);
      const next = { ...created, series: { count: 2, lastObservedTime: '2024-05-01T10:05:00Z' }, metadata: { ...meta(created), labels: { a: 'b' } } };
      const updated = await api('PUT', `${path}/upd`, { body: next });
      assert.equal(updated.status, 200, updated.text);
      assert.notEqual(meta(updated.body).resourceVersion, rv);
      assert.deepEqual(updated.body.series, { count: 2, lastObservedTime: '2024-05-01T10:05:00.000000Z' });
      const stale = await api('PUT', `${path}/upd`, { body: next });
      assertStatus(stale, 409, 'Conflict', /^Operation cannot be fulfilled on events\.events\.orch\.io "upd": the object has been modified; please apply your changes to the latest version and try again$/);
      const unconditional = { ...updated.body, metadata: { ...meta(updated.body), resourceVersion: undefined } };
      assert.equal((await api('PUT', `${path}/upd`, { body: unconditional })).status, 200);
      const immutable = await api('PUT', `${path}/upd`, { body: { ...updated.body, note: 'changed', metadata: { ...meta(updated.body), resourceVersion: undefined } } });
      assertStatus(immutable, 422, 'Invalid', /note: Invalid value: "changed": field is immutable/);
      assertStatus(await api('PUT', `${path}/other`, { body: updated.body }), 400, 'BadRequest', /does not match the name on the URL/);
      assertStatus(await api('PUT', `${path}/missing`, { body: v1Event('missing') }), 404, 'NotFound');
      const dry = await api('PUT', `${path}/upd?dryRun=All`, { body: { ...updated.body, metadata: { ...meta(updated.body), labels: { dry: 'run' }, resourceVersion: undefined } } });
      assert.equal(dry.status, 200, dry.text);
      assert.deepEqual(meta((await api('GET', `${path}/upd`)).body).labels, { a: 'b' });
    });

    void it('patches with merge, JSON (with test) and strategic merge patches', async () => {
      await api('POST', path, { body: v1Event('pat', { metadata: { name: 'pat', labels: { a: '1', b: '2' }, finalizers: ['x.io/one'] } }) });
      const merge = await api('PATCH', `${path}/pat`, { body: { metadata: { labels: { a: null, c: '3' } } }, contentType: 'application/merge-patch+json' });
      assert.equal(merge.status, 200, merge.text);
      assert.deepEqual(meta(merge.body).labels, { b: '2', c: '3' });
      const json = await api('PATCH', `${path}/pat`, { body: [{ op: 'test', path: '/metadata/labels/b', value: '2' }, { op: 'add', path: '/series', value: { count: 3, lastObservedTime: '2024-05-01T11:00:00Z' } }], contentType: 'application/json-patch+json' });
      assert.equal(json.status, 200, json.text);
      assert.equal((json.body.series as Obj).count, 3);
      const failed = await api('PATCH', `${path}/pat`, { body: [{ op: 'test', path: '/metadata/labels/b', value: 'nope' }], contentType: 'application/json-patch+json' });
      assertStatus(failed, 422, 'Invalid', /testing value/);
      const smp = await api('PATCH', `${path}/pat`, { body: { metadata: { finalizers: ['x.io/two'], labels: { d: '4' } } }, contentType: 'application/strategic-merge-patch+json' });
      assert.equal(smp.status, 200, smp.text);
      assert.deepEqual(meta(smp.body).finalizers, ['x.io/one', 'x.io/two']);
      assert.deepEqual(meta(smp.body).labels, { b: '2', c: '3', d: '4' });
      const del = await api('PATCH', `${path}/pat`, { body: { metadata: { '$deleteFromPrimitiveList/finalizers': ['x.io/one', 'x.io/two'] } }, contentType: 'application/strategic-merge-patch+json' });
      assert.equal(meta(del.body).finalizers, undefined);
      assertStatus(await api('PATCH', `${path}/pat`, { body: { note: 'x' }, contentType: 'application/json' }), 415, 'UnsupportedMediaType');
      assertStatus(await api('PATCH', `${path}/pat`, { body: '{', contentType: 'application/merge-patch+json' }), 400, 'BadRequest');
      assertStatus(await api('PATCH', `${path}/pat`, { body: { metadata: { resourceVersion: '1' } }, contentType: 'application/merge-patch+json' }), 409, 'Conflict');
      assertStatus(await api('PATCH', `${path}/pat?force=true`, { body: {}, contentType: 'application/merge-patch+json' }), 422, 'Invalid', /force/);
      assertStatus(await api('PATCH', `${path}/nope`, { body: {}, contentType: 'application/merge-patch+json' }), 404, 'NotFound');
      const dry = await api('PATCH', `${path}/pat?dryRun=All`, { body: { metadata: { labels: { dry: 'x' } } }, contentType: 'application/merge-patch+json' });
      assert.equal(meta(dry.body).labels !== undefined && (meta(dry.body).labels as Obj).dry, 'x');
      assert.equal((meta((await api('GET', `${path}/pat`)).body).labels as Obj).dry, undefined);
    });

    void it('deletes with a Status, honours preconditions, dryRun and finalizers', async () => {
      const created = (await api('POST', path, { body: v1Event('del') })).body;
      assertStatus(await api('DELETE', `${path}/del`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'wrong' } } }), 409, 'Conflict', /Precondition failed: UID in precondition: wrong/);
      assertStatus(await api('DELETE', `${path}/del`, { body: { preconditions: { resourceVersion: '1' } } }), 409, 'Conflict', /ResourceVersion in precondition/);
      assert.equal((await api('DELETE', `${path}/del?dryRun=All`)).status, 200);
      assert.equal((await api('GET', `${path}/del`)).status, 200);
      const res = await api('DELETE', `${path}/del`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background', preconditions: { uid: meta(created).uid } } });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'del', group: 'events.orch.io', kind: 'events', uid: meta(created).uid }, code: 200 });
      assertStatus(await api('DELETE', `${path}/del`), 404, 'NotFound');
      assertStatus(await api('DELETE', `${path}/x`, { body: { kind: 'Pod' } }), 400, 'BadRequest');
      assertStatus(await api('DELETE', `${path}/x`, { body: { propagationPolicy: 'Bogus' } }), 422, 'Invalid', /propagationPolicy: Unsupported value/);
      assertStatus(await api('DELETE', `${path}/x?orphanDependents=false&propagationPolicy=Orphan`), 422, 'Invalid', /cannot both be set/);

      await api('POST', path, { body: v1Event('fin', { metadata: { name: 'fin', finalizers: ['orch.io/keep'] } }) });
      const marked = await api('DELETE', `${path}/fin`);
      assert.equal(marked.status, 200, marked.text);
      assert.equal(marked.body.kind, 'Event');
      assert.ok(meta(marked.body).deletionTimestamp !== undefined);
      assert.equal((await api('GET', `${path}/fin`)).status, 200, 'kept while finalizers remain');
      const cleared = await api('PATCH', `${path}/fin`, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
      assert.equal(cleared.status, 200, cleared.text);
      assert.equal((await api('GET', `${path}/fin`)).status, 404, 'gone once the last finalizer is removed');
    });

    void it('deletes collections by selector and answers a Status', async () => {
      const ns = `dc-${storage}`;
      assert.equal((await api('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status, 201);
      for (let i = 0; i < 6; i++) {
        assert.equal((await api('POST', eventsPath(ns), { body: v1Event(`e${i}`, { metadata: { name: `e${i}`, labels: { group: i < 4 ? 'a' : 'b' } } }, ns) })).status, 201);
      }
      const dry = await api('DELETE', `${eventsPath(ns)}?labelSelector=group%3Da&dryRun=All`);
      assert.equal(dry.status, 200);
      assert.equal(((await api('GET', eventsPath(ns))).body.items as Obj[]).length, 6);
      const res = await api('DELETE', `${eventsPath(ns)}?labelSelector=group%3Da`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.kind, 'Status');
      assert.equal(res.body.status, 'Success');
      const left = (await api('GET', eventsPath(ns))).body.items as Obj[];
      assert.deepEqual(left.map((e) => meta(e).name).sort(), ['e4', 'e5']);
      assert.equal((await api('DELETE', eventsPath(ns))).status, 200);
      assert.equal(((await api('GET', eventsPath(ns))).body.items as Obj[]).length, 0);
    });
  });
}
