/**
 * The HTTP surface of a real orch-apiserver: authentication (tokens, client certificates,
 * anonymous health), authorization with a policy file, request limits and media types, health,
 * version, discovery and OpenAPI documents, and a small fuzz that must never get a 5xx.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { eventsPath, startApiServer, v1Event, type ApiServer, type Response } from '../helpers/apiserver.js';

type Obj = Record<string, unknown>;

const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };

const POLICY = `
- group: dev
  verbs: [get, list, watch]
  resources: [events]
  namespaces: [default]
- user: alice
  verbs: [create]
  resources: [events]
  apiGroups: [events.orch.io]
`;

function withClientCert(server: ApiServer, path: string): Promise<{ status: number; body: Obj }> {
  const config = parse(readFileSync(server.adminKubeconfig, 'utf8')) as { users: { user: Record<string, string> }[]; clusters: { cluster: Record<string, string> }[] };
  const user = config.users[0]?.user ?? {};
  const cluster = config.clusters[0]?.cluster ?? {};
  const decode = (b64: string | undefined): string => Buffer.from(b64 ?? '', 'base64').toString('utf8');
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${cluster.server ?? ''}${path}`, {
      cert: decode(user['client-certificate-data']), key: decode(user['client-key-data']), ca: decode(cluster['certificate-authority-data']), agent: false,
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Obj });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

void describe('orch-apiserver HTTP surface', () => {
  let server: ApiServer;
  let guarded: ApiServer;
  before(async () => {
    server = await startApiServer({ storage: 'sqlite' });
    guarded = await startApiServer({
      storage: 'sqlite',
      policy: POLICY,
      tokens: [{ token: 'bob-token', user: 'bob', groups: ['dev'] }, { token: 'alice-token', user: 'alice' }],
      args: ['--max-request-bytes=4096'],
    });
  });
  after(async () => {
    await guarded.stop();
    await server.stop();
  });
  const get = (path: string, token?: string | null, accept?: string): Promise<Response> =>
    server.client.request('GET', path, { ...(token === undefined ? {} : { token }), ...(accept === undefined ? {} : { headers: { Accept: accept } }) });

  void it('answers 401 with a Status to requests without valid credentials, anonymous only for health and version', async () => {
    for (const path of ['/api', '/apis', '/api/v1/namespaces', eventsPath(), '/openapi/v3']) {
      const res = await get(path, null);
      assert.equal(res.status, 401, path);
      assert.deepEqual(res.body, UNAUTHORIZED);
    }
    assert.deepEqual((await get('/healthz', 'wrong-token')).body, UNAUTHORIZED);
    const health = await get('/healthz', null);
    assert.equal(health.status, 200);
    assert.equal(health.text, 'ok');
    const ready = await get('/readyz?verbose', null);
    assert.match(ready.text, /\[\+\]storage ok/);
    assert.equal((await get('/livez', null)).text, 'ok');
    const version = await get('/version', null);
    assert.equal(version.body.major, '1');
    assert.match(String(version.body.gitVersion), /^v1\.\d+\.\d+\+orch-v\d/);
  });

  void it('authenticates the admin client certificate of the written orchconfig', async () => {
    const res = await withClientCert(server, '/api/v1/namespaces/default');
    assert.equal(res.status, 200);
    assert.equal(res.body.kind, 'Namespace');
  });

  void it('authorizes with the policy file: 403 names user, verb, resource and namespace', async () => {
    const c = guarded.client;
    assert.equal((await c.request('GET', eventsPath(), { token: 'bob-token' })).status, 200);
    const denied = await c.request('GET', eventsPath('orch-system'), { token: 'bob-token' });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.reason, 'Forbidden');
    assert.equal(denied.body.message, 'events.events.orch.io is forbidden: User "bob" cannot list resource "events" in API group "events.orch.io" in the namespace "orch-system": no policy rule allows it');
    const named = await c.request('DELETE', `${eventsPath()}/x`, { token: 'bob-token' });
    assert.match(String(named.body.message), /^events\.events\.orch\.io "x" is forbidden: User "bob" cannot delete resource "events"/);
    assert.equal((await c.request('GET', '/apis/events.orch.io/v1', { token: 'bob-token' })).status, 200, 'discovery is allowed to every authenticated user');
    const path = await c.request('GET', '/metrics', { token: 'bob-token' });
    assert.equal(path.status, 403);
    assert.equal(path.body.message, 'forbidden: User "bob" cannot get path "/metrics"');
    assert.equal((await c.request('POST', eventsPath(), { token: 'alice-token', body: v1Event('by-alice') })).status, 201);
    assert.equal((await c.request('POST', eventsPath(), { token: 'bob-token', body: v1Event('by-bob') })).status, 403);
    assert.equal((await c.request('POST', '/api/v1/namespaces/default/events', { token: 'alice-token', body: {} })).status, 403, 'apiGroups limit alice to events.orch.io');
    assert.equal((await c.request('GET', '/api/v1/namespaces')).status, 200, 'system:masters may do everything');
  });

  void it('limits request bodies (413) and checks media types (415, 406) and methods (405)', async () => {
    const big = v1Event('big', { note: 'x'.repeat(5000) });
    const res = await guarded.client.request('POST', eventsPath(), { body: big });
    assert.equal(res.status, 413);
    assert.equal(res.body.reason, 'RequestEntityTooLarge');
    assert.equal(res.body.code, 413);
    const unsupported = await server.client.request('POST', eventsPath(), { body: '<xml/>', contentType: 'application/xml' });
    assert.equal(unsupported.status, 415);
    assert.equal(unsupported.body.reason, 'UnsupportedMediaType');
    const tableProtobuf = await get(eventsPath(), undefined, 'application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1');
    assert.equal(tableProtobuf.status, 406, 'tables are JSON only');
    assert.equal(tableProtobuf.body.reason, 'NotAcceptable');
    assert.match(String(tableProtobuf.body.message), /application\/vnd\.kubernetes\.protobuf/, 'the protobuf types are listed as accepted');
    const collectionPut = await server.client.request('PUT', eventsPath(), { body: v1Event('x') });
    assert.equal(collectionPut.status, 405);
    assert.equal(collectionPut.body.reason, 'MethodNotAllowed');
    assert.equal((await server.client.request('POST', '/apis/events.orch.io/v1/events', { body: v1Event('x') })).status, 405);
    assert.equal((await get('/apis/nope.orch.io/v1/things')).status, 404);
    assert.equal((await get('/api/v1/namespaces/default/events/x/status')).status, 404);
    const yaml = await get(eventsPath(), undefined, 'application/yaml');
    assert.match(yaml.text, /^kind: EventList\napiVersion: events\.orch\.io\/v1\n/);
  });

  void it('serves discovery in the upstream shapes, legacy and aggregated', async () => {
    const api = (await get('/api')).body;
    assert.equal(api.kind, 'APIVersions');
    assert.deepEqual(api.versions, ['v1']);
    const core = (await get('/api/v1')).body;
    assert.equal(core.kind, 'APIResourceList');
    assert.equal(core.groupVersion, 'v1');
    const resources = core.resources as Obj[];
    const events = resources.find((r) => r.name === 'events');
    assert.deepEqual(events, { name: 'events', singularName: 'event', namespaced: true, kind: 'Event', verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'], shortNames: ['ev'] });
    assert.ok(resources.some((r) => r.name === 'namespaces/status'));
    assert.deepEqual((resources.find((r) => r.name === 'namespaces') as Obj).shortNames, ['ns']);
    const groups = (await get('/apis')).body;
    assert.equal(groups.kind, 'APIGroupList');
    assert.deepEqual((groups.groups as Obj[]).find((g) => g.name === 'events.orch.io'), {
      name: 'events.orch.io', versions: [{ groupVersion: 'events.orch.io/v1', version: 'v1' }], preferredVersion: { groupVersion: 'events.orch.io/v1', version: 'v1' },
    });
    assert.equal((await get('/apis/events.orch.io')).body.kind, 'APIGroup');
    const gv = (await get('/apis/events.orch.io/v1')).body;
    assert.equal(gv.groupVersion, 'events.orch.io/v1');
    assert.equal(((gv.resources as Obj[])[0] as Obj).kind, 'Event');
    const aggregated = await get('/apis', undefined, 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json');
    assert.equal(aggregated.headers['content-type'], 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    assert.equal(aggregated.body.kind, 'APIGroupDiscoveryList');
    const item = (aggregated.body.items as Obj[])[0] as { metadata: Obj; versions: { resources: Obj[] }[] };
    assert.equal(item.metadata.name, 'events.orch.io');
    assert.equal(item.versions[0]?.resources[0]?.scope, 'Namespaced');
  });

  void it('serves OpenAPI v3 (with fieldValidation on PATCH), and a v2 document without paths', async () => {
    const root = (await get('/openapi/v3')).body as { paths: Record<string, { serverRelativeURL: string }> };
    assert.ok(root.paths['api/v1'] !== undefined);
    const url = root.paths['apis/events.orch.io/v1']?.serverRelativeURL ?? '';
    const doc = (await get(url)).body as { paths: Record<string, Obj>; components: { schemas: Record<string, Obj> } };
    const item = doc.paths['/apis/events.orch.io/v1/namespaces/{namespace}/events/{name}'] as { patch: { parameters: Obj[]; 'x-kubernetes-group-version-kind': Obj } };
    assert.ok(item.patch.parameters.some((p) => p.name === 'fieldValidation' && p.in === 'query'));
    assert.deepEqual(item.patch['x-kubernetes-group-version-kind'], { group: 'events.orch.io', version: 'v1', kind: 'Event' });
    assert.ok(doc.components.schemas['io.orch.api.events.v1.Event'] !== undefined);
    const v2 = await get('/openapi/v2');
    assert.deepEqual([v2.status, (v2.body as { swagger?: string }).swagger], [200, '2.0']);
  });

  void it('never answers 5xx to random requests (a small fuzz)', async () => {
    let seed = 42;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pick = <T>(items: readonly T[]): T => items[rand(items.length)] as T;
    const values: unknown[] = [null, 0, -1, 1.5, '', 'x', 'Normal', [], {}, [1], { a: 1 }, true, 'a'.repeat(300), '2024-01-01T00:00:00Z'];
    const fields = ['metadata', 'note', 'reason', 'type', 'eventTime', 'series', 'regarding', 'deprecatedCount', 'kind', 'apiVersion', 'spec', '$patch'];
    const paths = [eventsPath(), `${eventsPath()}/fuzz`, '/api/v1/namespaces', '/api/v1/namespaces/fuzz', '/api/v1/namespaces/default/events/fuzz', '/apis/events.orch.io/v1/watch/namespaces/default/events/%zz', '/api/v1/namespaces/default/events?limit=-1', `${eventsPath()}?labelSelector=${encodeURIComponent('a in (b')}`, `${eventsPath()}?continue=eyJ2IjoxfQ`];
    const types = ['application/json', 'application/yaml', 'application/merge-patch+json', 'application/json-patch+json', 'application/strategic-merge-patch+json'];
    for (let i = 0; i < 300; i++) {
      const body: Obj = {};
      for (let f = 0; f < rand(5); f++) body[pick(fields)] = pick(values);
      if (rand(3) === 0) body.metadata = { name: pick(['fuzz', '', 'Bad Name', 'x'.repeat(300)]), labels: pick(values) };
      const payload = rand(10) === 0 ? '{"truncated": [' : rand(10) === 0 ? [body] : body;
      const res = await server.client.request(pick(['POST', 'PUT', 'PATCH', 'DELETE', 'GET']), pick(paths), { body: payload, contentType: pick(types) });
      assert.ok(res.status < 500, `request ${i} answered ${res.status}: ${res.text}`);
      if (res.status >= 400) assert.equal(res.body.kind, 'Status', res.text);
    }
    assert.equal((await get('/readyz', null)).status, 200);
  });
});
