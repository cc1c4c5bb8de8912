import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rawRequest } from '../../../test/helpers/loopback.js';
import { startTestApiServer, TEST_TOKEN, type TestApiServer } from '../routing/testing.js';

const CM = '/api/v1/namespaces/default/configmaps';
let server: TestApiServer;

function call(path: string, o: { method?: string; body?: string; type?: string; agent?: string } = {}): Promise<{ status: number; body: string; json: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': o.type ?? 'application/json', ...(o.agent === undefined ? {} : { 'user-agent': o.agent }) };
  return rawRequest(server.port, path, { method: o.method ?? 'GET', token: TEST_TOKEN, headers, ...(o.body === undefined ? {} : { body: o.body }) }).then((r) => {
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(r.body) as Record<string, unknown>;
    } catch {
      // Not JSON (asserted by the test that cares).
    }
    return { ...r, json };
  });
}

const apply = (name: string, body: unknown, query = 'fieldManager=tester'): ReturnType<typeof call> =>
  call(`${CM}/${name}?${query}`, { method: 'PATCH', type: 'application/apply-patch+yaml', body: typeof body === 'string' ? body : JSON.stringify(body) });
const cm = (name: string, data: Record<string, string>): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const managers = (o: Record<string, unknown>): string[] => (((o.metadata as Record<string, unknown>).managedFields ?? []) as { manager: string; operation: string }[]).map((e) => `${e.manager}/${e.operation}`);

void describe('server-side apply over HTTP', () => {
  before(async () => {
    server = await startTestApiServer();
  });
  after(async () => {
    await server.close();
  });

  void it('creates (201), merges (200), records the applier and answers conflicts with 409 and their causes', async () => {
    const first = await apply('one', cm('one', { a: '1' }));
    assert.equal(first.status, 201, first.body);
    assert.deepEqual(managers(first.json), ['tester/Apply']);
    const again = await apply('one', cm('one', { a: '1', b: '2' }));
    assert.equal(again.status, 200, again.body);
    assert.deepEqual(again.json.data, { a: '1', b: '2' });
    const conflict = await apply('one', cm('one', { a: 'x' }), 'fieldManager=other');
    assert.equal(conflict.status, 409, conflict.body);
    assert.equal(conflict.json.reason, 'Conflict');
    assert.equal(conflict.json.message, 'Apply failed with 1 conflict: conflict with "tester": .data.a');
    assert.deepEqual((conflict.json.details as { causes: unknown }).causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "tester"', field: '.data.a' }]);
    const forced = await apply('one', cm('one', { a: 'x' }), 'fieldManager=other&force=true');
    assert.equal(forced.status, 200, forced.body);
    const dropped = await apply('one', cm('one', {}));
    assert.deepEqual(dropped.json.data, { a: 'x' }, 'b, applied by tester alone, goes; a is other\'s now');
  });

  void it('records updates under fieldManager or the User-Agent\'s first segment', async () => {
    const created = await call(CM, { method: 'POST', body: JSON.stringify(cm('two', { a: '1' })), agent: 'kubectl/v1.30.13 (linux/amd64) kubernetes/abc' });
    assert.equal(created.status, 201, created.body);
    assert.deepEqual(managers(created.json), ['kubectl/Update']);
    const patched = await call(`${CM}/two?fieldManager=kubectl-edit`, { method: 'PATCH', type: 'application/merge-patch+json', body: '{"data":{"b":"2"}}' });
    assert.deepEqual(managers(patched.json).sort(), ['kubectl-edit/Update', 'kubectl/Update']);
  });

  void it('dry-runs an apply without writing it', async () => {
    const dry = await apply('dry', cm('dry', { a: '1' }), 'fieldManager=tester&dryRun=All');
    assert.equal(dry.status, 201, dry.body);
    assert.deepEqual(dry.json.data, { a: '1' });
    assert.equal((await call(`${CM}/dry`)).status, 404);
  });

  void it('refuses bad apply patches with 400/415/422 naming what is wrong, and writes nothing', async () => {
    const cases: [string, string, number, RegExp][] = [
      ['list', '[1, 2]', 400, /an apply patch must be an object/],
      ['kind', JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bad' } }), 400, /invalid object type: \/v1, Kind=Secret: an apply patch to configmaps must set apiVersion "v1" and kind "ConfigMap"/],
      ['version', JSON.stringify({ apiVersion: 'v2', kind: 'ConfigMap', metadata: { name: 'bad' } }), 400, /invalid object type: \/v2, Kind=ConfigMap/],
      ['name', JSON.stringify(cm('another', {})), 400, /the name of the object \("another"\) does not match the name on the URL \(bad\)/],
      ['unknown', JSON.stringify({ ...cm('bad', {}), spec: { x: 1 } }), 400, /failed to create typed patch object \(default\/bad; \/v1, Kind=ConfigMap\): \.spec: field not declared in schema/],
      ['type', JSON.stringify(cm('bad', { a: 1 } as unknown as Record<string, string>)), 400, /\.data\.a: expected string, got number/],
      ['managed', JSON.stringify({ ...cm('bad', {}), metadata: { name: 'bad', managedFields: [] } }), 400, /metadata.managedFields must be nil/],
    ];
    for (const [what, body, status, message] of cases) {
      const r = await apply('bad', body);
      assert.equal(r.status, status, `${what}: ${r.body}`);
      assert.match(String(r.json.message), message, what);
    }
    const noManager = await apply('bad', cm('bad', {}), '');
    assert.equal(noManager.status, 422);
    assert.match(String(noManager.json.message), /fieldManager: Required value: is required for apply patch/);
    const cbor = await call(`${CM}/bad?fieldManager=x`, { method: 'PATCH', type: 'application/apply-patch+cbor', body: 'x' });
    assert.equal(cbor.status, 415);
    assert.match(String(cbor.json.message), /application\/apply-patch\+cbor.*does not read CBOR/);
    assert.equal((await call(`${CM}/bad`)).status, 404, 'nothing was written');
  });

  void it('follows fieldValidation for duplicate fields of applies, creates, updates and patches', async () => {
    const dup = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},\n"data":{"a":"1",\n"a":"2"}}';
    const strict = await apply('dup', dup);
    assert.equal(strict.status, 400);
    assert.match(String(strict.json.message), /error strict decoding YAML: .*line 3: key "a" already set in map/s);
    const warned = await rawRequest(server.port, `${CM}/dup?fieldManager=t&fieldValidation=Warn`, { method: 'PATCH', token: TEST_TOKEN, headers: { 'content-type': 'application/apply-patch+yaml' }, body: dup });
    assert.equal(warned.status, 201, warned.body);
    assert.deepEqual((JSON.parse(warned.body) as { data: unknown }).data, { a: '2' });
    const post = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup2"},"data":{"a":"1","a":"2"},"nope":1}';
    const refused = await call(CM, { method: 'POST', body: post });
    assert.equal(refused.status, 400);
    assert.equal(refused.json.message, 'strict decoding error: duplicate field "a", unknown field "nope"');
    const created = await new Promise<{ status: number; warning: string | undefined }>((resolve, reject) => {
      import('node:http').then(({ request }) => {
        const req = request({ host: '127.0.0.1', port: server.port, path: `${CM}?fieldValidation=Warn`, method: 'POST', headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' } }, (res) => {
          res.resume();
          res.on('end', () => { resolve({ status: res.statusCode ?? 0, warning: res.headers.warning }); });
        });
        req.on('error', reject);
        req.end(post);
      }, reject);
    });
    assert.equal(created.status, 201);
    assert.equal(created.warning, '299 - "duplicate field \\"a\\"", 299 - "unknown field \\"nope\\""');
    const patch = await call(`${CM}/dup2`, { method: 'PATCH', type: 'application/merge-patch+json', body: '{"data":{"b":"1","b":"2"}}' });
    assert.equal(patch.status, 400);
    assert.equal(patch.json.message, 'strict decoding error: duplicate field "b"');
    const jsonPatch = await call(`${CM}/dup2`, { method: 'PATCH', type: 'application/json-patch+json', body: '[{"op":"add","path":"/data/c","value":"1","foo":1}]' });
    assert.equal(jsonPatch.status, 400);
    assert.equal(jsonPatch.json.message, 'strict decoding error: json patch unknown field "foo"');
    const ignored = await call(`${CM}/dup2?fieldValidation=Ignore`, { method: 'PATCH', type: 'application/merge-patch+json', body: '{"data":{"b":"1","b":"2"}}' });
    assert.equal(ignored.status, 200, ignored.body);
    assert.equal((ignored.json.data as Record<string, string>).b, '2');
  });
});
