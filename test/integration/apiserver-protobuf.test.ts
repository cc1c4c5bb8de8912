/**
 * The protobuf encoding of a real orch-apiserver over HTTPS: a body sent as protobuf under
 * both media type names, objects, lists, errors and watch streams answered as protobuf when
 * Accept asks, JSON still when it does not, and the metrics of /metrics counting them.
 * (kubectl-versions.test.ts checks the encoding against kubectl 1.32 and 1.33, which speak it.)
 */
import assert from 'node:assert/strict';
import { request } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { decodeObject, decodeWatchFrames, encodeObject } from '../../src/apiserver/protobuf/index.js';
import { startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { waitFor } from '../helpers/wait.js';

const PB = 'application/vnd.kubernetes.protobuf';
const ORCH_PB = 'application/vnd.orch.protobuf';
let server: ApiServer;

interface Raw {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

function call(method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, {
      method, ca: server.client.ca, agent: false,
      headers: { Authorization: `Bearer ${server.token}`, ...headers, ...(body === undefined ? {} : { 'Content-Length': String(body.length) }) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }); });
    });
    req.on('error', reject);
    req.end(body);
  });
}

before(async () => {
  server = await startApiServer({ storage: 'sqlite' });
});

after(async () => {
  await server.stop();
});

void describe('the protobuf encoding over HTTPS', () => {
  void it('reads bodies and answers objects and lists in protobuf, under the media type name asked', async () => {
    const body = encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pb', labels: { via: 'protobuf' } }, data: { k: 'v' }, binaryData: { b: 'AAEC' } });
    const created = await call('POST', '/api/v1/namespaces/default/configmaps', { 'Content-Type': PB, Accept: `${PB}, application/json` }, body);
    assert.equal(created.status, 201, created.body.toString());
    assert.equal(created.headers['content-type'], PB);
    const object = decodeObject(created.body);
    assert.deepEqual([object.kind, object.apiVersion, (object.metadata as { name: string }).name, object.data, object.binaryData], ['ConfigMap', 'v1', 'pb', { k: 'v' }, { b: 'AAEC' }]);
    const orch = await call('GET', '/api/v1/namespaces/default/configmaps?labelSelector=via%3Dprotobuf', { Accept: ORCH_PB });
    assert.equal(orch.headers['content-type'], ORCH_PB);
    const list = decodeObject(orch.body) as { kind: string; items: { metadata: { name: string } }[]; metadata: { resourceVersion: string } };
    assert.deepEqual([list.kind, list.items.map((i) => i.metadata.name)], ['ConfigMapList', ['pb']]);
    assert.match(list.metadata.resourceVersion, /^\d+$/);
    const json = await call('GET', '/api/v1/namespaces/default/configmaps/pb', { Accept: 'application/json' });
    assert.equal((JSON.parse(json.body.toString()) as { data: Record<string, string> }).data.k, 'v');
    const missing = await call('GET', '/api/v1/namespaces/default/configmaps/nope', { Accept: PB });
    assert.equal(missing.status, 404);
    assert.deepEqual([decodeObject(missing.body).kind, decodeObject(missing.body).reason], ['Status', 'NotFound']);
    const garbage = await call('POST', '/api/v1/namespaces/default/configmaps', { 'Content-Type': PB }, Buffer.from('{"kind":"ConfigMap"}'));
    assert.equal(garbage.status, 400);
    assert.match(garbage.body.toString(), /the request body is not a valid protobuf object: the body does not start with the protobuf magic bytes/);
  });

  void it('streams watch events as length-prefixed protobuf frames', async () => {
    const chunks: Buffer[] = [];
    let contentType = '';
    const req = request(`${server.url}/api/v1/namespaces/default/configmaps?watch=true&labelSelector=w%3D1`, {
      ca: server.client.ca, agent: false, headers: { Authorization: `Bearer ${server.token}`, Accept: PB },
    }, (res) => {
      contentType = res.headers['content-type'] ?? '';
      res.on('data', (c: Buffer) => chunks.push(c));
    });
    req.end();
    await waitFor('the watch to start', () => contentType !== '');
    assert.equal(contentType, `${PB};stream=watch`);
    const body = encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched', labels: { w: '1' } } });
    assert.equal((await call('POST', '/api/v1/namespaces/default/configmaps', { 'Content-Type': PB }, body)).status, 201);
    assert.equal((await call('DELETE', '/api/v1/namespaces/default/configmaps/watched', {})).status, 200);
    const events = await waitFor('two events', () => {
      const { events: got } = decodeWatchFrames(Buffer.concat(chunks));
      return got.length >= 2 ? got : undefined;
    });
    assert.deepEqual(events.map((e) => [e.type, e.object.kind, (e.object.metadata as { name: string }).name]), [['ADDED', 'ConfigMap', 'watched'], ['DELETED', 'ConfigMap', 'watched']]);
    req.destroy();
    const metrics = await call('GET', '/metrics', {});
    assert.match(metrics.body.toString(), /apiserver_watch_events_total\{group="",version="v1",kind="ConfigMap"\} 2/);
    assert.match(metrics.body.toString(), /apiserver_request_total\{verb="POST",dry_run="",group="",version="v1",resource="configmaps",subresource="",scope="resource",component="apiserver",code="201"\} \d+/);
  });
});
