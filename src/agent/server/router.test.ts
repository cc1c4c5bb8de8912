import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRouteTable, type Route } from './router.js';

const route = (pattern: string, methods?: string[]): Route => ({ pattern, bucket: pattern, handle: () => undefined, ...(methods === undefined ? {} : { methods }) });

void describe('the route table', () => {
  const table = createRouteTable([
    route('/pods', ['GET']),
    route('/exec/:ns/:pod/:container', ['GET', 'POST']),
    route('/exec/:ns/:pod/:uid/:container', ['GET', 'POST']),
    route('/logs/*path', ['GET']),
    route('/run/:ns/:pod/:container', ['POST']),
    route('/configz'),
  ]);

  void it('matches segments and the rest, and answers HEAD with GET routes', () => {
    const m = table.match('GET', '/exec/default/web/main');
    assert.ok(m.kind === 'route');
    assert.deepEqual(m.params, { ns: 'default', pod: 'web', container: 'main' });
    const uid = table.match('POST', '/exec/default/web/123/main');
    assert.ok(uid.kind === 'route' && uid.params.uid === '123');
    const logs = table.match('GET', '/logs/a/b.log');
    assert.ok(logs.kind === 'route' && logs.params.path === 'a/b.log');
    const root = table.match('GET', '/logs/');
    assert.ok(root.kind === 'route' && root.params.path === '');
    assert.equal(table.match('HEAD', '/pods').kind, 'route');
    assert.equal(table.match('DELETE', '/configz').kind, 'route');
  });

  void it('tells a wrong method (405 with the allowed ones) from an unknown path (404)', () => {
    assert.deepEqual(table.match('GET', '/run/a/b/c'), { kind: 'method', allowed: ['POST'] });
    assert.deepEqual(table.match('POST', '/pods'), { kind: 'method', allowed: ['GET'] });
    assert.deepEqual(table.match('GET', '/exec/a/b'), { kind: 'none' });
    assert.deepEqual(table.match('GET', '/exec/a//c'), { kind: 'none' });
    assert.deepEqual(table.match('GET', '/podsx'), { kind: 'none' });
    assert.deepEqual(table.match('GET', '/logs'), { kind: 'none' });
  });
});
