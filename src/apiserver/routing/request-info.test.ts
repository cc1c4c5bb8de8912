import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StatusError } from '../status/index.js';
import { parseRequestInfo } from './request-info.js';

const info = (method: string, url: string): unknown => {
  const u = new URL(url, 'https://x');
  return parseRequestInfo(method, u.pathname, u.searchParams);
};

void describe('request info', () => {
  void it('parses namespaced, cluster-scoped and namespace requests with their verbs', () => {
    assert.deepEqual(info('GET', '/apis/events.orch.io/v1/namespaces/ns/events/e1'), {
      kind: 'resource', path: '/apis/events.orch.io/v1/namespaces/ns/events/e1', verb: 'get', apiGroup: 'events.orch.io', apiVersion: 'v1', namespace: 'ns', resource: 'events', name: 'e1', subresource: '', subpath: '',
    });
    assert.equal((info('GET', '/api/v1/namespaces/ns/events') as { verb: string }).verb, 'list');
    assert.equal((info('GET', '/api/v1/namespaces/ns/events?watch=true') as { verb: string }).verb, 'watch');
    assert.equal((info('GET', '/api/v1/watch/namespaces/ns/events') as { verb: string }).verb, 'watch');
    assert.equal((info('DELETE', '/api/v1/namespaces/ns/events') as { verb: string }).verb, 'deletecollection');
    assert.equal((info('DELETE', '/api/v1/namespaces/ns/events/a') as { verb: string }).verb, 'delete');
    assert.equal((info('PATCH', '/api/v1/namespaces/ns/events/a') as { verb: string }).verb, 'patch');
    assert.deepEqual(info('PUT', '/api/v1/namespaces/ns/status'), {
      kind: 'resource', path: '/api/v1/namespaces/ns/status', verb: 'update', apiGroup: '', apiVersion: 'v1', namespace: 'ns', resource: 'namespaces', name: 'ns', subresource: 'status', subpath: '',
    });
    assert.deepEqual(info('GET', '/api/v1/nodes/n1/proxy/metrics/resource?x=1'), {
      kind: 'resource', path: '/api/v1/nodes/n1/proxy/metrics/resource', verb: 'get', apiGroup: '', apiVersion: 'v1', namespace: '', resource: 'nodes', name: 'n1', subresource: 'proxy', subpath: '/metrics/resource',
    });
    assert.equal((info('GET', '/api/v1/nodes/n1/proxy') as { subpath: string }).subpath, '');
    assert.equal((info('GET', '/api/v1/namespaces') as { resource: string }).resource, 'namespaces');
    assert.equal((info('GET', '/api/v1/nodes/n1') as { namespace: string }).namespace, '');
  });
  void it('treats discovery and health as non-resource requests', () => {
    for (const p of ['/api', '/api/v1', '/apis', '/apis/events.orch.io', '/apis/events.orch.io/v1', '/healthz', '/openapi/v3/api/v1']) {
      assert.equal((info('GET', p) as { kind: string }).kind, 'nonResource', p);
    }
  });
  void it('rejects unknown methods (405), over-long paths (404) and bad escapes (400)', () => {
    const code = (f: () => unknown): number => {
      try {
        f();
      } catch (err) {
        if (err instanceof StatusError) return err.httpCode;
      }
      return 0;
    };
    assert.equal(code(() => info('OPTIONS', '/api/v1/namespaces/ns/events')), 405);
    assert.equal(code(() => info('GET', '/api/v1/namespaces/ns/events/a/status/extra')), 404);
    assert.equal(code(() => info('GET', '/api/v1/namespaces/%zz/events')), 400);
  });
});
