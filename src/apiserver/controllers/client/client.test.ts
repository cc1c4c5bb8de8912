import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/fake-clock.js';
import type { WireObject } from '../../registry/index.js';
import { ClientEventRecorder, Informer, updateObject } from './index.js';
import { conflictError, FakeResourceClient } from './testing.js';

const obj = (name: string, extra: WireObject = {}): WireObject => ({ metadata: { name, namespace: 'default' }, ...extra });

void describe('the informer', () => {
  void it('tells its handlers of the first list, then of each change, and lists again after a broken watch', async () => {
    const clock = new FakeClock();
    const log: string[] = [];
    const client = new FakeResourceClient({ resource: 'pods', kind: 'Pod', clock });
    await client.create('default', obj('a'));
    await client.create('default', obj('b'));
    const informer = new Informer({ client, clock, log: (l) => log.push(l), what: 'pods' });
    const seen: string[] = [];
    informer.addHandler({
      added: (o) => seen.push(`+${String((o.metadata as WireObject).name)}`),
      updated: (_old, o) => seen.push(`~${String((o.metadata as WireObject).name)}`),
      deleted: (o) => seen.push(`-${String((o.metadata as WireObject).name)}`),
    });
    await informer.start();
    assert.deepEqual(seen, ['+a', '+b']);
    await client.put(obj('a', { spec: { x: 1 } }));
    await client.delete('default', 'b');
    await clock.advance(0);
    assert.deepEqual(seen.slice(2), ['~a', '-b']);
    client.breakWatches();
    await clock.advance(0);
    // Changes while no watch is open reach the handlers through the next list.
    await client.create('default', obj('c'));
    await client.put(obj('a', { spec: { x: 2 } }));
    await client.delete('default', 'a');
    await client.create('default', obj('a'));
    assert.deepEqual(seen.slice(4), []);
    await clock.advance(1_000);
    assert.deepEqual(seen.slice(4).filter((s) => s.endsWith('a')), ['-a', '+a'], 'a name reused by another object: deleted, then added');
    assert.ok(seen.slice(4).includes('+c'));
    assert.equal(seen.length, 7);
    assert.ok(log.some((l) => l.startsWith('pods informer: the watch ended (listing again)')));
    assert.deepEqual(informer.list().map((o) => (o.metadata as WireObject).name).sort(), ['a', 'c']);
    await client.create('default', obj('d'));
    await clock.advance(0);
    assert.equal(informer.get('default', 'd') !== undefined, true, 'watching again after the list');
    await informer.close();
  });

  void it('starts on first use with ready(): one list for every caller, and a failed first list tried again by the next call', async () => {
    const clock = new FakeClock();
    const client = new FakeResourceClient({ resource: 'nodes', kind: 'Node', clock });
    await client.create('default', obj('n1'));
    const informer = new Informer({ client, clock, log: () => undefined, what: 'nodes' });
    client.failNext('list', new Error('storage: etcd range failed'));
    await assert.rejects(informer.ready(), /etcd range failed/);
    await Promise.all([informer.ready(), informer.ready()]);
    assert.deepEqual(informer.list().map((o) => (o.metadata as WireObject).name), ['n1']);
    await client.create('default', obj('n2'));
    await clock.advance(0);
    await informer.ready();
    assert.equal(informer.size, 2, 'kept up to date by its watch, not listed again');
    await informer.close();
  });
});

void describe('updateObject', () => {
  void it('starts from the object given, and reads it again after a conflict', async () => {
    const clock = new FakeClock();
    const client = new FakeResourceClient({ resource: 'nodes', kind: 'Node', clock });
    const stale = await client.create('', { metadata: { name: 'n' }, spec: { n: 0 } });
    await client.put({ metadata: { name: 'n' }, spec: { n: 1 } });
    const written = await updateObject(client, '', 'n', (o) => {
      (o.spec as { n: number }).n += 10;
      return true;
    }, { current: stale });
    assert.deepEqual(written?.spec, { n: 11 });
    assert.equal(await updateObject(client, '', 'gone', () => true), undefined);
    for (let i = 0; i < 5; i++) client.failNext('update', conflictError('nodes', 'n'));
    await assert.rejects(updateObject(client, '', 'n', () => true), /the object has been modified/);
  });
});

void describe('the event recorder', () => {
  void it('records events.orch.io/v1 events, and counts a repeat in the first one\'s series', async () => {
    const clock = new FakeClock();
    const events = new FakeResourceClient({ resource: 'events', kind: 'Event', apiVersion: 'events.orch.io/v1', clock });
    const recorder = new ClientEventRecorder({ events, clock, log: () => undefined, controller: 'default-scheduler', instance: 'default-scheduler-host' });
    const pod = { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'web', namespace: 'default', uid: 'u1', resourceVersion: '7' } };
    recorder.record(pod, 'Warning', 'FailedScheduling', 'Scheduling', 'no nodes available to schedule pods');
    await clock.advance(0);
    await clock.advance(5_000);
    recorder.record(pod, 'Warning', 'FailedScheduling', 'Scheduling', 'no nodes available to schedule pods');
    await clock.advance(0);
    const all = events.all();
    assert.equal(all.length, 1);
    const [event] = all as [WireObject];
    assert.equal(event.reportingController, 'default-scheduler');
    assert.equal(event.reportingInstance, 'default-scheduler-host');
    assert.deepEqual(event.regarding, { kind: 'Pod', apiVersion: 'v1', name: 'web', uid: 'u1', resourceVersion: '7', namespace: 'default' });
    assert.deepEqual(event.series, { count: 2, lastObservedTime: '2024-01-02T03:04:10.000000Z' });
    recorder.record({ kind: 'Node', apiVersion: 'v1', metadata: { name: 'n1', uid: 'u2' } }, 'Normal', 'NodeNotReady', 'NodeNotReady', 'Node n1 status is now: NodeNotReady');
    await clock.advance(0);
    assert.equal((events.all()[1]?.metadata as WireObject | undefined)?.namespace, 'default', 'events of cluster-scoped objects go to default');
  });

  void it('starts a new series after the 10-minute window, and keeps at most 4096 series', async () => {
    const clock = new FakeClock();
    const events = new FakeResourceClient({ resource: 'events', kind: 'Event', apiVersion: 'events.orch.io/v1', clock });
    const recorder = new ClientEventRecorder({ events, clock, log: () => undefined, controller: 'default-scheduler', instance: 'default-scheduler-host' });
    const pod = (i: number): WireObject => ({ kind: 'Pod', apiVersion: 'v1', metadata: { name: `p${i}`, namespace: 'default', uid: `u${i}` } });
    recorder.record(pod(0), 'Normal', 'Scheduled', 'Binding', 'assigned');
    await clock.advance(0);
    await clock.advance(10 * 60_000 + 1);
    recorder.record(pod(0), 'Normal', 'Scheduled', 'Binding', 'assigned');
    await clock.advance(0);
    assert.equal(events.all().length, 2, 'a repeat after the window is a new event');
    for (let i = 1; i <= 4096; i++) recorder.record(pod(i), 'Normal', 'Scheduled', 'Binding', 'assigned');
    await clock.advance(0);
    // The series of p0 (the least recently used) was dropped for the 4096 newer ones; p4096's is kept.
    recorder.record(pod(0), 'Normal', 'Scheduled', 'Binding', 'assigned');
    recorder.record(pod(4096), 'Normal', 'Scheduled', 'Binding', 'assigned');
    await clock.advance(0);
    assert.equal(events.all().length, 2 + 4096 + 1);
    const last = events.all().find((e) => (e.regarding as WireObject).name === 'p4096');
    assert.deepEqual((last?.series as WireObject | undefined)?.count, 2);
  });
});
