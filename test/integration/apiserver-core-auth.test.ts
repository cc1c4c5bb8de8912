/**
 * Authentication and authorization resources on a real orch-apiserver in Policy mode with the
 * node and bootstrap policy of docs/apiserver/authentication.md (read from the document, so the
 * example is the one tested): TokenReview answers, SubjectAccessReview / LocalSubjectAccessReview /
 * SelfSubjectAccessReview answers (also through the authorization.k8s.io view kubectl uses),
 * and what a node agent's and a bootstrap token's requests may actually do.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { makeCsr, startApiServer, v1Csr, v1Event, v1Node, v1Pod, type ApiServer, type Response } from '../helpers/apiserver.js';

type Obj = Record<string, unknown>;
const DOC = fileURLToPath(new URL('../../../docs/apiserver/authentication.md', import.meta.url));

/** The YAML block after `<!-- policy:nodes -->` in docs/apiserver/authentication.md. */
function documentedNodePolicy(): string {
  const text = readFileSync(DOC, 'utf8');
  const match = /<!-- policy:nodes -->\s*```yaml\n([\s\S]*?)```/.exec(text);
  if (match?.[1] === undefined) throw new Error(`${DOC} has no <!-- policy:nodes --> yaml block`);
  return match[1];
}

const NODE = 'node-token-0123456789';
const BOOTSTRAP = 'abcdef.0123456789abcdef';
const BOB = 'bob-token-0123456789';
const SAR = '/apis/authorization.orch.io/v1/subjectaccessreviews';

void describe('reviews and the documented node and bootstrap policy', () => {
  let server: ApiServer;
  before(async () => {
    server = await startApiServer({
      storage: 'sqlite',
      policy: documentedNodePolicy(),
      tokens: [
        { token: NODE, user: 'system:node:n1', uid: 'node-uid', groups: ['system:nodes'] },
        { token: BOOTSTRAP, user: 'system:bootstrap:abcdef', groups: ['system:bootstrappers'] },
        { token: BOB, user: 'bob', groups: ['dev'] },
      ],
    });
  });
  after(async () => {
    await server.stop();
  });
  const as = (token: string | undefined) => (method: string, path: string, body?: unknown, contentType?: string): Promise<Response> =>
    server.client.request(method, path, { ...(token === undefined ? {} : { token }), ...(body === undefined ? {} : { body }), ...(contentType === undefined ? {} : { contentType }) });
  const admin = as(undefined);
  const node = as(NODE);
  const bootstrap = as(BOOTSTRAP);
  const bob = as(BOB);

  void it('answers TokenReviews from the token file', async () => {
    const path = '/apis/authentication.orch.io/v1/tokenreviews';
    const review = (token: string, audiences?: string[]): Obj => ({
      apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', spec: { token, ...(audiences === undefined ? {} : { audiences }) },
    });
    const known = await admin('POST', path, review(NODE));
    assert.equal(known.status, 201, known.text);
    assert.equal(known.body.kind, 'TokenReview');
    assert.deepEqual(known.body.status, { authenticated: true, user: { username: 'system:node:n1', uid: 'node-uid', groups: ['system:nodes', 'system:authenticated'] } });
    const withAudience = await node('POST', path, review(BOOTSTRAP, ['https://nodeagent.example']));
    assert.equal(withAudience.status, 201, 'nodes may review tokens (their webhook authentication)');
    assert.deepEqual((withAudience.body.status as Obj).audiences, ['https://nodeagent.example']);
    assert.equal(((withAudience.body.status as Obj).user as Obj).username, 'system:bootstrap:abcdef');
    assert.deepEqual((await admin('POST', path, review('nope'))).body.status, { authenticated: false });
    const cert = readFileSync(server.caFile, 'utf8');
    assert.deepEqual((await admin('POST', path, review(cert))).body.status, { authenticated: false }, 'a certificate is not a token');
    const empty = await admin('POST', path, review(''));
    assert.equal(empty.status, 400);
    assert.equal(empty.body.message, 'token is required for TokenReview');
    assert.equal((await bob('POST', path, review(NODE))).status, 403);
    assert.equal((await admin('GET', path)).status, 405, 'create only');
  });

  void it('answers SubjectAccessReviews from the policy, for resources and paths', async () => {
    const sar = async (spec: Obj): Promise<Obj> => {
      const res = await admin('POST', SAR, { apiVersion: 'authorization.orch.io/v1', kind: 'SubjectAccessReview', spec });
      assert.equal(res.status, 201, res.text);
      return res.body.status as Obj;
    };
    const nodeUser = { user: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
    assert.deepEqual(await sar({ ...nodeUser, resourceAttributes: { verb: 'watch', resource: 'pods', version: 'v1' } }), { allowed: true });
    assert.deepEqual(await sar({ ...nodeUser, resourceAttributes: { verb: 'patch', resource: 'pods', subresource: 'status', namespace: 'default', name: 'web' } }), { allowed: true });
    assert.deepEqual(await sar({ ...nodeUser, resourceAttributes: { verb: 'update', group: 'coordination.orch.io', resource: 'leases', namespace: 'orch-node-lease', name: 'n1' } }), { allowed: true });
    assert.deepEqual(await sar({ ...nodeUser, resourceAttributes: { verb: 'create', group: 'coordination.orch.io', resource: 'leases', namespace: 'default' } }), { allowed: false, reason: 'no policy rule allows it' });
    assert.deepEqual(await sar({ ...nodeUser, resourceAttributes: { verb: 'update', resource: 'pods', namespace: 'default' } }), { allowed: false, reason: 'no policy rule allows it' });
    assert.deepEqual(await sar({ user: 'bob', groups: ['system:authenticated'], nonResourceAttributes: { path: '/healthz', verb: 'get' } }), { allowed: true });
    assert.deepEqual(await sar({ user: 'bob', nonResourceAttributes: { path: '/metrics', verb: 'get' } }), { allowed: false, reason: 'no policy rule allows it' });
    assert.deepEqual(await sar({ user: 'root', groups: ['system:masters'], resourceAttributes: { verb: 'delete', resource: 'nodes' } }), { allowed: true });
    const both = await admin('POST', SAR, { spec: { user: 'x', resourceAttributes: { verb: 'get' }, nonResourceAttributes: { path: '/', verb: 'get' } } });
    assert.equal(both.status, 422);
    const nobody = await admin('POST', SAR, { spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } });
    assert.equal(nobody.status, 422);
    assert.match(String(nobody.body.message), /spec\.user: Invalid value: "": at least one of user or group must be specified/);
    const local = await admin('POST', '/apis/authorization.orch.io/v1/namespaces/default/localsubjectaccessreviews', {
      spec: { user: 'system:node:n1', groups: ['system:nodes'], resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'default' } },
    });
    assert.equal(local.status, 201, local.text);
    assert.deepEqual(local.body.status, { allowed: true });
    const mismatch = await admin('POST', '/apis/authorization.orch.io/v1/namespaces/default/localsubjectaccessreviews', {
      spec: { user: 'u', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'other' } },
    });
    assert.equal(mismatch.status, 422);
  });

  void it('answers SelfSubjectAccessReviews for anyone signed in, also as authorization.k8s.io (kubectl auth can-i)', async () => {
    const self = async (token: string, group: string, attrs: Obj): Promise<Response> =>
      as(token)('POST', `/apis/${group}/v1/selfsubjectaccessreviews`, { apiVersion: `${group}/v1`, kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: attrs } });
    const own = await self(BOB, 'authorization.orch.io', { verb: 'list', resource: 'pods', namespace: 'default' });
    assert.equal(own.status, 201, own.text);
    assert.deepEqual(own.body.status, { allowed: false, reason: 'no policy rule allows it' });
    const nodeCan = await self(NODE, 'authorization.k8s.io', { verb: 'list', resource: 'pods', namespace: 'default' });
    assert.equal(nodeCan.status, 201, nodeCan.text);
    assert.equal(nodeCan.body.apiVersion, 'authorization.k8s.io/v1');
    assert.deepEqual(nodeCan.body.status, { allowed: true });
    assert.equal((await bob('POST', SAR, { spec: { user: 'x', resourceAttributes: { verb: 'get' } } })).status, 403, 'others\' access is not everyone\'s to ask');
  });

  void it('lets a node agent do what the policy says, and nothing else', async () => {
    assert.equal((await admin('POST', '/api/v1/namespaces/default/pods', v1Pod('on-n1', 'n1'))).status, 201);
    assert.equal((await node('POST', '/api/v1/nodes', v1Node('n1', 10250))).status, 201);
    assert.equal((await node('PATCH', '/api/v1/nodes/n1/status', { status: { conditions: [{ type: 'Ready', status: 'True' }] } }, 'application/strategic-merge-patch+json')).status, 200);
    assert.equal((await node('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn1')).status, 200);
    assert.equal((await node('PATCH', '/api/v1/namespaces/default/pods/on-n1/status', { status: { phase: 'Running' } }, 'application/merge-patch+json')).status, 200);
    const lease = { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'n1' }, spec: { holderIdentity: 'n1', leaseDurationSeconds: 40 } };
    assert.equal((await node('POST', '/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases', lease)).status, 201);
    assert.equal((await node('POST', '/apis/coordination.orch.io/v1/namespaces/default/leases', lease)).status, 403);
    assert.equal((await node('POST', '/apis/events.orch.io/v1/namespaces/default/events', v1Event('from-node'))).status, 201);
    assert.equal((await node('PATCH', '/api/v1/namespaces/default/pods/on-n1', { metadata: { labels: { a: 'b' } } }, 'application/merge-patch+json')).status, 403);
    assert.equal((await node('DELETE', '/api/v1/namespaces/default/pods/on-n1', { gracePeriodSeconds: 0 })).status, 200);
    const denied = await node('DELETE', '/api/v1/nodes/n1');
    assert.equal(denied.status, 403);
    assert.equal(denied.body.message, 'nodes "n1" is forbidden: User "system:node:n1" cannot delete resource "nodes" in API group "" at the cluster scope: no policy rule allows it');
  });

  void it('lets a bootstrap token create a CSR and read it, recorded with its identity, and nothing more', async () => {
    const { requestPem } = await makeCsr({ commonName: 'system:node:n2', organizations: ['system:nodes'] });
    const path = '/apis/certificates.orch.io/v1/certificatesigningrequests';
    const created = await bootstrap('POST', path, v1Csr('node-csr-n2', requestPem, 'orch.io/kube-apiserver-client-nodeagent', ['digital signature', 'client auth'], {
      username: 'someone-else', groups: ['system:masters'],
    }));
    assert.equal(created.status, 201, created.text);
    const spec = created.body.spec as Obj;
    assert.equal(spec.username, 'system:bootstrap:abcdef', 'the requester is recorded, not what the client wrote');
    assert.deepEqual(spec.groups, ['system:bootstrappers', 'system:authenticated']);
    assert.equal((await bootstrap('GET', `${path}/node-csr-n2`)).status, 200);
    const watch = await server.client.watch(`${path}?watch=true&fieldSelector=metadata.name%3Dnode-csr-n2`, BOOTSTRAP);
    try {
      assert.equal(watch.status, 200);
      assert.equal((await watch.next()).type, 'ADDED');
    } finally {
      watch.close();
    }
    assert.equal((await bootstrap('GET', '/api/v1/pods')).status, 403);
    assert.equal((await bootstrap('PUT', `${path}/node-csr-n2/approval`, created.body)).status, 403, 'bootstrap tokens cannot approve');
    assert.equal((await bootstrap('DELETE', `${path}/node-csr-n2`)).status, 403);
  });
});
