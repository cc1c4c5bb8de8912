import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from './api.js';
import type { KubeObject } from './kube.js';
import { Reflector } from './reflector.js';
import { FakeApi, FakeTimers, settle } from './testing.js';

const pod = (name: string, rv: string, phase = 'Pending'): KubeObject & { status: { phase: string } } => ({
  metadata: { name, namespace: 'default', resourceVersion: rv }, status: { phase },
});

function reflector(api: FakeApi, timers: FakeTimers): Reflector<string> {
  return new Reflector<string>({
    api, timers, path: '/api/v1/pods', pageSize: 2, watchSeconds: () => 300,
    transform: (o) => (o as { status: { phase: string } }).status.phase,
  });
}

void describe('the console reflector', () => {
  void it('lists in pages, then watches from the list\'s resourceVersion and applies events', async () => {
    const api = new FakeApi();
    const timers = new FakeTimers();
    api.answer('/api/v1/pods?limit=2&continue=', { metadata: { resourceVersion: '10' }, items: [pod('c', '9')] });
    api.answer('/api/v1/pods?limit=2', { metadata: { resourceVersion: '10', continue: 'next' }, items: [pod('a', '5'), pod('b', '6')] });
    const r = reflector(api, timers);
    let notified = 0;
    r.subscribe(() => notified++);
    r.start();
    const stream = await api.streamCount(1);
    assert.deepEqual(api.requests, ['GET /api/v1/pods?limit=2', 'GET /api/v1/pods?limit=2&continue=next',
      'STREAM /api/v1/pods?watch=1&allowWatchBookmarks=true&resourceVersion=10&timeoutSeconds=300']);
    assert.deepEqual([...r.items], [['default/a', 'Pending'], ['default/b', 'Pending'], ['default/c', 'Pending']]);
    await settle();
    assert.equal(r.state.kind, 'live');
    const before = notified;
    stream.write({ type: 'MODIFIED', object: pod('a', '11', 'Running') }, { type: 'DELETED', object: pod('b', '12') });
    const added = JSON.stringify({ type: 'ADDED', object: pod('d', '13') });
    stream.raw(added.slice(0, 20));
    await settle();
    stream.raw(`${added.slice(20)}\n`);
    await settle();
    assert.deepEqual([...r.items], [['default/a', 'Running'], ['default/c', 'Pending'], ['default/d', 'Pending']]);
    assert.equal(r.resourceVersion, '13');
    assert.ok(notified > before);
    r.stop();
    assert.equal(stream.aborted, true);
  });

  void it('resumes from the last resourceVersion (bookmarks included) when the watch ends or drops', async () => {
    const api = new FakeApi();
    const timers = new FakeTimers();
    api.answer('/api/v1/pods', { metadata: { resourceVersion: '20' }, items: [pod('a', '20')] });
    const r = reflector(api, timers);
    r.start();
    const first = await api.streamCount(1);
    first.write({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '25' } } });
    first.end();
    const second = await api.streamCount(2);
    assert.match(second.path, /resourceVersion=25&/);
    second.write({ type: 'MODIFIED', object: pod('a', '27', 'Running') });
    second.fail('network changed');
    await settle();
    assert.equal(r.state.kind, 'retrying');
    assert.deepEqual(timers.delays(), [1000]);
    timers.fireAll();
    const third = await api.streamCount(3);
    assert.match(third.path, /resourceVersion=27&/);
    assert.equal(api.requests.filter((q) => q.startsWith('GET')).length, 1, 'no second list');
    r.stop();
  });

  void it('lists again on 410 Gone, as an ERROR event or as the answer', async () => {
    const api = new FakeApi();
    const timers = new FakeTimers();
    api.answer('/api/v1/pods', { metadata: { resourceVersion: '30' }, items: [pod('a', '30'), pod('b', '30')] },
      { metadata: { resourceVersion: '50' }, items: [pod('a', '50', 'Running')] }, { metadata: { resourceVersion: '60' }, items: [] });
    const r = reflector(api, timers);
    r.start();
    const first = await api.streamCount(1);
    first.write({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 30' } });
    const second = await api.streamCount(2);
    assert.match(second.path, /resourceVersion=50&/);
    assert.deepEqual([...r.items], [['default/a', 'Running']], 'the new list replaces the map: b is gone');
    api.streamErrors.push(new ApiError(410, 'Expired', 'gone'));
    second.end();
    await api.streamCount(3);
    assert.equal(r.resourceVersion, '60');
    assert.equal(r.items.size, 0);
    r.stop();
  });

  void it('stops with the API\'s message on 403, and backs off, doubling, on other failures', async () => {
    const api = new FakeApi();
    const timers = new FakeTimers();
    api.answer('/api/v1/pods', new ApiError(503, 'ServiceUnavailable', 'storage down'), new ApiError(0, '', 'unreachable'),
      new ApiError(403, 'Forbidden', 'pods is forbidden: User "u" cannot list resource "pods"'));
    const r = reflector(api, timers);
    r.start();
    await settle();
    assert.deepEqual(r.state, { kind: 'retrying', error: 'storage down', inMs: 1000 });
    timers.fireAll();
    await settle();
    assert.deepEqual(r.state, { kind: 'retrying', error: 'unreachable', inMs: 2000 });
    timers.fireAll();
    await settle();
    assert.deepEqual(r.state, { kind: 'failed', error: 'pods is forbidden: User "u" cannot list resource "pods"', status: 403 });
    assert.equal(r.running, false);
    assert.equal(timers.pending.size, 0);
  });

  void it('starts the back-off over once a watch has opened, however that watch ends', async () => {
    const api = new FakeApi();
    const timers = new FakeTimers();
    api.answer('/api/v1/pods', { metadata: { resourceVersion: '1' }, items: [] });
    const r = reflector(api, timers);
    r.start();
    const first = await api.streamCount(1);
    first.fail('network changed');
    await settle();
    assert.deepEqual(timers.delays(), [1000]);
    api.streamErrors.push(new ApiError(0, '', 'refused'), new ApiError(0, '', 'refused'));
    for (const expected of [2000, 4000]) {
      timers.fireAll();
      await settle();
      assert.deepEqual(r.state, { kind: 'retrying', error: 'refused', inMs: expected });
    }
    timers.fireAll();
    const opened = await api.streamCount(2);
    await settle();
    assert.equal(r.state.kind, 'live');
    opened.fail('network changed');
    await settle();
    assert.deepEqual(r.state, { kind: 'retrying', error: 'network changed', inMs: 1000 }, 'not 8 s: the watch that opened ended the row');
    r.stop();
  });

  void it('passes whole objects to object listeners before transforming them', async () => {
    const api = new FakeApi();
    const timers = new FakeTimers();
    api.answer('/api/v1/pods', { metadata: { resourceVersion: '1' }, items: [pod('a', '1')] });
    const r = reflector(api, timers);
    const seen: string[] = [];
    r.subscribeObjects((type, o) => seen.push(`${type} ${o.metadata?.name ?? ''} ${o.metadata?.resourceVersion ?? ''}`));
    r.start();
    const s = await api.streamCount(1);
    s.write({ type: 'MODIFIED', object: pod('a', '2', 'Running') });
    await settle();
    assert.deepEqual(seen, ['ADDED a 1', 'MODIFIED a 2']);
    r.stop();
  });
});
