/**
 * The resources of a real orch-apiserver beyond the events.orch.io operations: core v1 events as
 * a second, writable view of the same stored events (upstream's field mapping), server-side
 * Tables, and namespaces (built-in ones, Terminating, refusal of new content, removal once
 * empty, status subresource).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventsPath, startApiServer, v1Event, type ApiServer, type Response } from '../helpers/apiserver.js';
import { waitFor } from '../helpers/wait.js';

type Obj = Record<string, unknown>;
const meta = (o: Obj): Obj => o.metadata as Obj;
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

void describe('core v1 events, tables and namespaces', () => {
  let server: ApiServer;
  before(async () => {
    server = await startApiServer({ storage: 'sqlite' });
  });
  after(async () => {
    await server.stop();
  });
  const api = (method: string, path: string, body?: unknown, extra: { contentType?: string; accept?: string } = {}): Promise<Response> =>
    server.client.request(method, path, {
      ...(body === undefined ? {} : { body }),
      ...(extra.contentType === undefined ? {} : { contentType: extra.contentType }),
      ...(extra.accept === undefined ? {} : { headers: { Accept: extra.accept } }),
    });

  void it('shows events.orch.io events through core v1 with upstream\'s field names', async () => {
    const created = await api('POST', eventsPath(), v1Event('both', { series: { count: 2, lastObservedTime: '2024-05-01T10:01:00Z' }, related: { kind: 'Node', name: 'n1' } }));
    assert.equal(created.status, 201, created.text);
    const core = (await api('GET', `${eventsPath('default', 'core')}/both`)).body;
    assert.equal(core.apiVersion, 'v1');
    assert.equal(core.kind, 'Event');
    assert.equal(core.message, 'note of both');
    assert.deepEqual(core.involvedObject, { kind: 'Pod', name: 'web-1', namespace: 'default', uid: 'u-1' });
    assert.equal(core.reportingComponent, 'orch.io/test');
    assert.equal(core.reportingInstance, 'test-1');
    assert.deepEqual(core.related, { kind: 'Node', name: 'n1' });
    assert.deepEqual(core.series, { count: 2, lastObservedTime: '2024-05-01T10:01:00.000000Z' });
    assert.equal(core.note, undefined);
    assert.deepEqual(meta(core), meta(created.body), 'one stored object: same uid and resourceVersion');
  });

  void it('stores core v1 events once and shows them through events.orch.io, both writable', async () => {
    const old = {
      apiVersion: 'v1', kind: 'Event', metadata: { name: 'legacy' },
      involvedObject: { kind: 'Pod', name: 'web-2', namespace: 'default' }, reason: 'Pulled', message: 'pulled the image',
      source: { component: 'nodeagent', host: 'node-1' }, firstTimestamp: '2024-05-01T09:00:00Z', lastTimestamp: '2024-05-01T09:10:00Z', count: 4, type: 'Normal',
    };
    const created = await api('POST', eventsPath('default', 'core'), old);
    assert.equal(created.status, 201, created.text);
    const v1 = (await api('GET', `${eventsPath()}/legacy`)).body;
    assert.equal(v1.note, 'pulled the image');
    assert.deepEqual(v1.deprecatedSource, { component: 'nodeagent', host: 'node-1' });
    assert.equal(v1.deprecatedFirstTimestamp, '2024-05-01T09:00:00Z');
    assert.equal(v1.deprecatedLastTimestamp, '2024-05-01T09:10:00Z');
    assert.equal(v1.deprecatedCount, 4);
    assert.deepEqual(v1.regarding, old.involvedObject);
    const updated = await api('PUT', `${eventsPath('default', 'core')}/legacy`, { ...created.body, message: 'pulled again', count: 5 });
    assert.equal(updated.status, 200, updated.text);
    const after = (await api('GET', `${eventsPath()}/legacy`)).body;
    assert.equal(after.note, 'pulled again');
    assert.equal(after.deprecatedCount, 5);
    const patched = await api('PATCH', `${eventsPath('default', 'core')}/legacy`, { message: 'strategic' }, { contentType: 'application/strategic-merge-patch+json' });
    assert.equal(patched.body.message, 'strategic');
    const newStyle = await api('POST', eventsPath('default', 'core'), { metadata: { name: 'new-style' }, eventTime: '2024-05-01T10:00:00Z', involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'R', type: 'Normal' });
    assert.equal(newStyle.status, 422);
    const fields = (newStyle.body.details as { causes: { field: string }[] }).causes.map((c) => c.field).sort();
    assert.deepEqual(fields, ['action', 'reportingComponent', 'reportingInstance']);
    const mismatch = await api('POST', eventsPath('default', 'core'), { ...old, metadata: { name: 'mismatch' }, involvedObject: { kind: 'Pod', name: 'x', namespace: 'other' } });
    assert.equal(mismatch.status, 422);
    assert.match(String(mismatch.body.message), /involvedObject\.namespace/);
    assert.equal((await api('DELETE', `${eventsPath('default', 'core')}/legacy`)).body.status, 'Success');
    assert.equal((await api('GET', `${eventsPath()}/legacy`)).status, 404);
  });

  void it('prints Tables for kubectl: event columns and namespace columns', async () => {
    const table = (await api('GET', eventsPath('default', 'core'), undefined, { accept: TABLE })).body;
    assert.equal(table.kind, 'Table');
    assert.equal(table.apiVersion, 'meta.k8s.io/v1');
    const columns = (table.columnDefinitions as Obj[]).map((c) => c.name);
    assert.deepEqual(columns.slice(0, 4), ['Last Seen', 'Type', 'Reason', 'Object']);
    const row = (table.rows as { cells: unknown[]; object: Obj }[]).find((r) => meta(r.object).name === 'both');
    assert.ok(row !== undefined);
    assert.equal(row.cells[3], 'pod/web-1');
    assert.equal(row.object.kind, 'PartialObjectMetadata');
    const single = (await api('GET', '/api/v1/namespaces/default', undefined, { accept: TABLE })).body;
    assert.deepEqual((single.columnDefinitions as Obj[]).map((c) => c.name), ['Name', 'Status', 'Age']);
    assert.deepEqual((single.rows as { cells: unknown[] }[])[0]?.cells.slice(0, 2), ['default', 'Active']);
  });

  void it('has the built-in namespaces and refuses deleting the immortal ones', async () => {
    const list = (await api('GET', '/api/v1/namespaces')).body;
    const names = (list.items as Obj[]).map((n) => meta(n).name);
    for (const ns of ['default', 'orch-system', 'orch-public', 'orch-node-lease']) assert.ok(names.includes(ns), ns);
    const ns = (list.items as Obj[])[0] as Obj;
    assert.deepEqual(ns.spec, { finalizers: ['orch'] });
    assert.equal((meta(ns).labels as Obj)['orch.io/metadata.name'], meta(ns).name);
    const res = await api('DELETE', '/api/v1/namespaces/default');
    assert.equal(res.status, 403);
    assert.equal(res.body.message, 'namespaces "default" is forbidden: this namespace may not be deleted');
  });

  void it('deletes a namespace through Terminating: refuses new content, removes its events, then itself', async () => {
    assert.equal((await api('POST', '/api/v1/namespaces', { metadata: { name: 'doomed' } })).status, 201);
    assert.equal((await api('POST', eventsPath('doomed'), v1Event('kept', { metadata: { name: 'kept', finalizers: ['test.orch.io/hold'] } }, 'doomed'))).status, 201);
    assert.equal((await api('POST', eventsPath('doomed'), v1Event('plain', {}, 'doomed'))).status, 201);
    const deleting = await api('DELETE', '/api/v1/namespaces/doomed');
    assert.equal(deleting.status, 200, deleting.text);
    assert.equal(deleting.body.kind, 'Namespace');
    assert.equal((deleting.body.status as Obj).phase, 'Terminating');
    await waitFor('the plain event to be deleted with its namespace', async () => (await api('GET', `${eventsPath('doomed')}/plain`)).status === 404);
    const refused = await api('POST', eventsPath('doomed'), v1Event('late', {}, 'doomed'));
    assert.equal(refused.status, 403);
    assert.equal(refused.body.message, 'events.events.orch.io "late" is forbidden: unable to create new content in namespace doomed because it is being terminated');
    assert.equal(((refused.body.details as { causes: Obj[] }).causes[0] as Obj).reason, 'NamespaceTerminating');
    assert.equal((await api('GET', '/api/v1/namespaces/doomed')).status, 200, 'kept while an event holds a finalizer');
    await api('PATCH', `${eventsPath('doomed')}/kept`, { metadata: { finalizers: null } }, { contentType: 'application/merge-patch+json' });
    await waitFor('the namespace to be gone', async () => (await api('GET', '/api/v1/namespaces/doomed')).status === 404);
  });

  void it('serves the namespace status subresource: only status changes there, never through the main resource', async () => {
    assert.equal((await api('POST', '/api/v1/namespaces', { metadata: { name: 'stat' } })).status, 201);
    const main = await api('PATCH', '/api/v1/namespaces/stat', { status: { phase: 'Terminating' }, metadata: { labels: { a: 'b' } } }, { contentType: 'application/merge-patch+json' });
    assert.equal(main.status, 200, main.text);
    assert.equal((main.body.status as Obj).phase, 'Active');
    assert.equal((meta(main.body).labels as Obj).a, 'b');
    const status = await api('PATCH', '/api/v1/namespaces/stat/status', { status: { conditions: [{ type: 'Test', status: 'True' }] }, metadata: { labels: { c: 'd' } } }, { contentType: 'application/merge-patch+json' });
    assert.equal(status.status, 200, status.text);
    assert.deepEqual((status.body.status as Obj).conditions, [{ type: 'Test', status: 'True' }]);
    assert.equal((meta(status.body).labels as Obj).c, undefined);
    assert.equal((await api('GET', '/api/v1/namespaces/stat/status')).body.kind, 'Namespace');
  });
});
