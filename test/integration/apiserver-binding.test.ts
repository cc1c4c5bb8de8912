/**
 * pods/binding over HTTPS (the server without its control loops, so that the test binds): a
 * POST of a Binding assigns the pod (201, a Success Status), a second one is 409, unknown fields
 * are 400, dryRun=All writes nothing, GET is 405, and discovery lists the subresource with the
 * verb create. DefaultTolerationSeconds shows on the created pod.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { startApiServer, v1Pod, type ApiServer } from '../helpers/apiserver.js';

let server: ApiServer;
const PODS = '/api/v1/namespaces/default/pods';
const binding = (name: string, node: string, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ apiVersion: 'v1', kind: 'Binding', metadata: { name }, target: { apiVersion: 'v1', kind: 'Node', name: node }, ...extra });

before(async () => {
  server = await startApiServer({ storage: 'sqlite' });
});

after(async () => {
  await server.stop();
});

void describe('pods/binding over HTTPS', () => {
  void it('binds an unbound pod once, as upstream answers', async () => {
    const created = await server.client.request('POST', PODS, { body: v1Pod('web', '') });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual((created.body as Pod).spec?.tolerations?.map((t) => `${t.key ?? ''}:${t.effect ?? ''}:${t.tolerationSeconds ?? ''}`), [
      'node.orch.io/not-ready:NoExecute:300', 'node.orch.io/unreachable:NoExecute:300',
    ]);
    const dry = await server.client.request('POST', `${PODS}/web/binding?dryRun=All`, { body: binding('web', 'n1') });
    assert.equal(dry.status, 201, dry.text);
    assert.equal(((await server.client.request('GET', `${PODS}/web`)).body as Pod).spec?.nodeName, undefined);
    const bound = await server.client.request('POST', `${PODS}/web/binding`, { body: binding('web', 'n1') });
    assert.equal(bound.status, 201, bound.text);
    assert.deepEqual(bound.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    const pod = (await server.client.request('GET', `${PODS}/web`)).body as Pod;
    assert.equal(pod.spec?.nodeName, 'n1');
    assert.equal(pod.status?.conditions?.find((c) => c.type === 'PodScheduled')?.status, 'True');
    const again = await server.client.request('POST', `${PODS}/web/binding`, { body: binding('web', 'n2') });
    assert.equal(again.status, 409);
    assert.equal(again.body.message, 'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "n1"');
  });

  void it('refuses unknown fields, a GET, and a pod that does not exist', async () => {
    await server.client.request('POST', PODS, { body: v1Pod('other', '') });
    const unknown = await server.client.request('POST', `${PODS}/other/binding`, { body: binding('other', 'n1', { targt: {} }) });
    assert.equal(unknown.status, 400);
    assert.match(String(unknown.body.message), /strict decoding error: unknown field "targt"/);
    assert.equal((await server.client.request('GET', `${PODS}/other/binding`)).status, 405);
    assert.equal((await server.client.request('POST', `${PODS}/missing/binding`, { body: binding('missing', 'n1') })).status, 404);
  });

  void it('lists the subresource in discovery with the verb create', async () => {
    const list = await server.client.request('GET', '/api/v1');
    const resources = list.body.resources as { name: string; kind: string; verbs: string[] }[];
    const entry = resources.find((r) => r.name === 'pods/binding');
    assert.deepEqual([entry?.kind, entry?.verbs], ['Binding', ['create']]);
  });
});
