/**
 * Fuzz suites of orch-apiserver's router in process (SQLite in a temporary directory):
 * generated requests (paths of its own resources and odd ones, methods, query strings, headers,
 * bodies, with and without credentials), list and watch parameters, event bodies of both event
 * APIs, and apply patches and managedFields (server-side apply). Never a 5xx or a logged
 * failure; every 400 and 422 names the parameter or field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { fc, fuzzAsync, mutatedObject, requestArbitrary } from '../../api/testing-fuzz.js';
import { startTestApiServer, TEST_TOKEN, type TestApiServer } from './testing.js';
import { rawRequest } from '../../../test/helpers/loopback.js';

const POD = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };

const VOCABULARY = {
  segments: ['api', 'apis', 'v1', 'namespaces', 'default', 'kube-system', 'pods', 'web', 'status', 'log', 'exec', 'binding', 'eviction', 'events', 'configmaps',
    'nodes', 'node-1', 'proxy', 'events.k8s.io', 'healthz', 'livez', 'readyz', 'version', 'openapi', 'v2', 'v3', 'metrics', 'watch'],
  parameters: ['labelSelector', 'fieldSelector', 'resourceVersion', 'resourceVersionMatch', 'limit', 'continue', 'watch', 'timeoutSeconds', 'allowWatchBookmarks',
    'sendInitialEvents', 'dryRun', 'fieldManager', 'fieldValidation', 'force', 'pretty', 'gracePeriodSeconds', 'propagationPolicy', 'container', 'tailLines', 'verbose', 'exclude'],
  values: ['app=web', 'app!=web', 'app in (a,b)', 'metadata.name=web', 'spec.nodeName=', '0', '1', '5', 'NotOlderThan', 'Exact', 'All', 'Strict', 'true', 'Orphan'],
  headers: [
    { authorization: `Bearer ${TEST_TOKEN}` }, { authorization: `Bearer ${TEST_TOKEN}`, accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/yaml' }, { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/merge-patch+json' },
    { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/vnd.kubernetes.protobuf' },
    { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'text/plain' }, { authorization: 'Bearer wrong' }, { authorization: 'Basic eDp5' }, {},
    { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/apply-patch+yaml' }, { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/apply-patch+cbor' },
  ],
  bodies: [JSON.stringify(POD), '{}', '[]', 'null', '{"metadata":{"name":"x"}}', '[{"op":"add","path":"/metadata/labels/x","value":"y"}]', 'kind: Pod\nmetadata: {name: y}', '\u0000\u0001'],
};

/** A watch answered 200 stays open: the request is cut after a short time and counts by its status. */
const SHORT = 1500;

void describe('fuzz: orch-apiserver requests', () => {
  let api: TestApiServer;
  before(async () => {
    api = await startTestApiServer();
    const created = await rawRequest(api.port, '/api/v1/namespaces/default/pods', { method: 'POST', token: TEST_TOKEN, body: JSON.stringify(POD), headers: { 'content-type': 'application/json' } });
    assert.equal(created.status, 201, created.body);
  });
  after(() => api.close());

  void it('answer every generated request below 500, and every 400 with a message', async () => {
    await fuzzAsync('orch-apiserver HTTP requests', requestArbitrary(VOCABULARY), async (r) => {
      const answer = await rawRequest(api.port, r.path, { method: r.method, headers: r.headers, ...(r.method === 'GET' || r.method === 'HEAD' ? {} : { body: r.body }), timeoutMs: SHORT });
      assert.ok(answer.status < 500, `${r.method} ${r.path}: ${answer.status} ${answer.body.slice(0, 300)}`);
      // Node's parser refuses an unknown method with a bare 400; a HEAD answer has no body.
      if (answer.status === 400 && r.method !== 'FOO' && r.method !== 'HEAD') {
        // A Status in JSON names what is wrong in its message; in protobuf (when asked for) it is binary.
        if (answer.body.startsWith('{')) assert.match(answer.body, /"message":"[^"]+"/, `${r.method} ${r.path}`);
        else assert.ok(answer.body.length > 0, `${r.method} ${r.path}: a 400 without a body`);
      }
    }, 1500);
    assert.deepEqual(api.logs, []);
  });

  void it('list and watch parameters: a 400 names the parameter', async () => {
    const names = ['labelSelector', 'fieldSelector', 'resourceVersion', 'resourceVersionMatch', 'limit', 'continue', 'timeoutSeconds', 'allowWatchBookmarks', 'sendInitialEvents', 'watch'];
    const value = fc.oneof(fc.constantFrom('', '0', '1', '-1', 'abc', 'app=web', 'a==b', 'a in (', '!', 'metadata.name=web', 'spec.nope=1', 'NotOlderThan', 'Exact', 'true',
      '99999999999999999999', 'eyJ2IjoxfQ', 'x'.repeat(300)), fc.string({ maxLength: 10 }));
    const query = fc.array(fc.tuple(fc.constantFrom(...names), value), { minLength: 1, maxLength: 4 });
    const target = fc.constantFrom('/api/v1/pods', '/api/v1/namespaces/default/pods', '/api/v1/namespaces/default/events', '/apis/events.k8s.io/v1/events', '/api/v1/nodes', '/api/v1/namespaces');
    await fuzzAsync('list and watch parameters', fc.tuple(target, query), async ([path, params]) => {
      const search = new URLSearchParams(params).toString();
      const answer = await rawRequest(api.port, `${path}?${search}`, { token: TEST_TOKEN, timeoutMs: SHORT });
      assert.ok(answer.status < 500, `${path}?${search}: ${answer.status} ${answer.body.slice(0, 300)}`);
      if (answer.status === 400 || answer.status === 422) {
        const message = (JSON.parse(answer.body) as { message?: string }).message ?? '';
        assert.ok(names.some((n) => message.includes(n)) || /selector|field label|resource ?version|continue|limit|timeout/i.test(message), `the parameter is named: ${message.slice(0, 300)}`);
      }
    }, 600);
    assert.deepEqual(api.logs, []);
  });

  void it('event bodies of both APIs: created, or refused naming the field', async () => {
    const core = {
      apiVersion: 'v1', kind: 'Event', metadata: { name: 'web.1', namespace: 'default' },
      involvedObject: { kind: 'Pod', name: 'web', namespace: 'default', uid: 'u1' }, reason: 'Started', message: 'Started container', type: 'Normal',
      source: { component: 'nodeagent', host: 'node-1' }, firstTimestamp: '2026-11-22T03:00:00Z', lastTimestamp: '2026-11-22T03:00:00Z', count: 1,
    };
    const modern = {
      apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'web.2', namespace: 'default' },
      regarding: { kind: 'Pod', name: 'web', namespace: 'default', uid: 'u1' }, reason: 'Started', note: 'Started container', type: 'Normal', action: 'Start',
      reportingController: 'orch.io/nodeagent', reportingInstance: 'nodeagent-node-1', eventTime: '2026-11-22T03:00:00.000000Z',
    };
    const wrong: fc.Arbitrary<unknown> = fc.oneof(fc.anything({ maxDepth: 2 }), fc.constantFrom('', 'Warning', 'Bogus', 'x'.repeat(2000), '2026-13-45T99:00:00Z', -1, 0, null));
    const bodies = fc.oneof(
      mutatedObject(core, wrong).map((b) => ['/api/v1/namespaces/default/events', b] as const),
      mutatedObject(modern, wrong).map((b) => ['/apis/events.k8s.io/v1/namespaces/default/events', b] as const),
    );
    let n = 0;
    await fuzzAsync('event validation', bodies, async ([path, body]) => {
      const named = typeof body === 'object' && body !== null && !Array.isArray(body) ? { ...body, metadata: { ...((body as { metadata?: object }).metadata ?? {}), name: `e${++n}` } } : body;
      const text: unknown = JSON.stringify(named);
      const answer = await rawRequest(api.port, path, { method: 'POST', token: TEST_TOKEN, body: typeof text === 'string' ? text : 'null', headers: { 'content-type': 'application/json' } });
      assert.ok(answer.status < 500, `${answer.status} ${answer.body.slice(0, 300)}`);
      if (answer.status === 422) {
        const status = JSON.parse(answer.body) as { details?: { causes?: { field?: string }[] } };
        for (const cause of status.details?.causes ?? []) assert.ok((cause.field ?? '') !== '', `a cause without its field: ${answer.body.slice(0, 300)}`);
      }
      if (answer.status === 400) assert.match(answer.body, /"message":"[^"]+"/);
    }, 600);
    assert.deepEqual(api.logs, []);
  });

  void it('apply patches and written managedFields: applied, or refused naming what is wrong', async () => {
    const manifest = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'applied', labels: { app: 'a' }, finalizers: ['example.com/f'] },
      spec: { containers: [{ name: 'c', image: 'busybox', ports: [{ containerPort: 80 }], env: [{ name: 'A', value: '1' }] }], tolerations: [{ key: 'k', operator: 'Exists' }] },
    };
    const entry = { manager: 'm', operation: 'Update', apiVersion: 'v1', time: '2026-11-22T03:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } } } };
    const wrong: fc.Arbitrary<unknown> = fc.oneof(fc.anything({ maxDepth: 2 }), fc.constantFrom('', 'k:{"x":1}', 'f:', 'Apply', 'Frob', [], [{}], null, -1));
    const applied = mutatedObject(manifest, wrong).map((b) => ['apply', b] as const);
    const written = mutatedObject({ ...POD, metadata: { ...POD.metadata, managedFields: [entry] } }, wrong).map((b) => ['update', b] as const);
    const query = fc.constantFrom('fieldManager=fz', 'fieldManager=fz&force=true', 'fieldManager=fz&fieldValidation=Warn', 'fieldManager=fz&dryRun=All', '');
    await fuzzAsync('apply patches and managedFields', fc.tuple(fc.oneof(applied, written), query), async ([[kind, body], q]) => {
      const text = JSON.stringify(body) as string | undefined;
      const answer = kind === 'apply'
        ? await rawRequest(api.port, `/api/v1/namespaces/default/pods/applied?${q}`, { method: 'PATCH', token: TEST_TOKEN, body: text ?? 'null', headers: { 'content-type': 'application/apply-patch+yaml' } })
        : await rawRequest(api.port, `/api/v1/namespaces/default/pods/web?${q}`, { method: 'PUT', token: TEST_TOKEN, body: text ?? 'null', headers: { 'content-type': 'application/json' } });
      assert.ok(answer.status < 500, `${kind}: ${answer.status} ${answer.body.slice(0, 300)}`);
      if (answer.status === 400 || answer.status === 422) assert.match(answer.body, /"message":"[^"]+"/);
    }, 600);
    assert.deepEqual(api.logs, []);
  });
});
