import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isInvalid } from '../../api/errors.js';
import { describeDenial, parsePolicy, policyAuthorizer, type Attributes } from './index.js';

const user = (name: string, groups: string[] = []): Attributes['user'] => ({ name, uid: '', groups: [...groups, 'system:authenticated'] });
const resource = (u: Attributes['user'], verb: string, resourceName: string, namespace: string, apiGroup = '', subresource = ''): Attributes =>
  ({ user: u, verb, resourceRequest: true, path: '/x', apiGroup, resource: resourceName, subresource, namespace, name: '' });
const path = (u: Attributes['user'], p: string, verb = 'get'): Attributes =>
  ({ user: u, verb, resourceRequest: false, path: p, apiGroup: '', resource: '', subresource: '', namespace: '', name: '' });

const policy = parsePolicy(`
- group: dev
  verbs: [get, list]
  resources: [events]
  namespaces: [default]
- user: ops
  verbs: ["*"]
  resources: ["*/status", namespaces]
  apiGroups: [""]
- user: "*"
  verbs: [get]
  nonResourcePaths: ["/metrics", "/debug/*"]
`, 'policy.yaml');

void describe('Policy authorizer', () => {
  const authz = policyAuthorizer(policy);
  void it('allows what a rule allows and nothing else', () => {
    assert.equal(authz.authorize(resource(user('bob', ['dev']), 'list', 'events', 'default')).allowed, true);
    assert.equal(authz.authorize(resource(user('bob', ['dev']), 'list', 'events', 'other')).allowed, false);
    assert.equal(authz.authorize(resource(user('bob', ['dev']), 'delete', 'events', 'default')).allowed, false);
    assert.equal(authz.authorize(resource(user('ops'), 'update', 'namespaces', '', '', 'status')).allowed, true);
    assert.equal(authz.authorize(resource(user('ops'), 'delete', 'namespaces', '')).allowed, true);
    assert.equal(authz.authorize(resource(user('ops'), 'delete', 'events', 'default', 'events.orch.io')).allowed, false);
    assert.equal(authz.authorize(path(user('anyone'), '/debug/pprof')).allowed, true);
    assert.equal(authz.authorize(path(user('anyone'), '/debug', 'post')).allowed, false);
  });
  void it('lets system:masters do anything and authenticated users read discovery', () => {
    assert.equal(authz.authorize(resource(user('root', ['system:masters']), 'delete', 'anything', 'x')).allowed, true);
    assert.equal(authz.authorize(path(user('eve'), '/apis/events.orch.io/v1')).allowed, true);
    assert.equal(authz.authorize(path(user('eve'), '/openapi/v3')).allowed, true);
    assert.equal(authz.authorize(path({ name: 'system:anonymous', uid: '', groups: ['system:unauthenticated'] }, '/api')).allowed, false);
  });
  void it('lets every authenticated user ask about itself, as upstream system:basic-user', () => {
    for (const [group, res] of [['authentication.k8s.io', 'selfsubjectreviews'], ['authentication.orch.io', 'selfsubjectreviews'], ['authorization.k8s.io', 'selfsubjectaccessreviews']] as const) {
      assert.equal(authz.authorize(resource(user('eve'), 'create', res, '', group)).allowed, true, `${group}/${res}`);
      assert.equal(authz.authorize(resource({ name: 'system:anonymous', uid: '', groups: ['system:unauthenticated'] }, 'create', res, '', group)).allowed, false);
    }
    assert.equal(authz.authorize(resource(user('eve'), 'create', 'tokenreviews', '', 'authentication.k8s.io')).allowed, false);
  });
  void it('describes a denial as upstream does', () => {
    assert.equal(describeDenial(resource(user('bob'), 'list', 'events', 'default', 'events.orch.io')), 'User "bob" cannot list resource "events" in API group "events.orch.io" in the namespace "default"');
    assert.equal(describeDenial(resource(user('bob'), 'get', 'namespaces', '', '', 'status')), 'User "bob" cannot get resource "namespaces/status" in API group "" at the cluster scope');
  });
  void it('rejects malformed policy files', () => {
    for (const bad of ['{}', '- verbs: []\n  resources: [x]', '- verbs: [get]', '- verbs: [get]\n  resources: x', '- verbs: [get]\n  resources: [x]\n  extra: 1', '- user: 5\n  verbs: [get]\n  resources: [x]', '[']) {
      assert.throws(() => parsePolicy(bad, 'p.yaml'), (err: unknown) => isInvalid(err), bad);
    }
  });
});
