import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, settle } from '../../api/fake-clock.js';
import { FakeLogger } from '../logging/testing.js';
import { FakeRestClient } from '../orchclient/testing.js';
import { fakeNodeApi } from './fakes.js';
import { createLeaseController, leasePath, type LeaseControllerOptions } from './lease.js';
import type { WireLease } from './types.js';

const PATH = leasePath('node-a');
const NODE = { metadata: { name: 'node-a', uid: 'node-uid-1' } };

function setup(overrides: Partial<LeaseControllerOptions> = {}, withNode = true) {
  const rest = fakeNodeApi();
  const clock = new FakeClock();
  const logger = new FakeLogger();
  const controller = createLeaseController({
    client: rest, nodeName: 'node-a', leaseDurationSeconds: 40, clock, logger, random: () => 0, ...(withNode ? { node: () => NODE } : {}), ...overrides,
  });
  return { rest, clock, logger, controller };
}

const stored = (rest: FakeRestClient): WireLease => rest.objects.get(PATH) as WireLease;

void describe('the node lease', () => {
  void it('creates the lease with holder, duration, micro renewTime and the Node as owner', async () => {
    const { rest, controller } = setup();
    controller.start();
    await settle();
    const lease = stored(rest);
    assert.equal(lease.apiVersion, 'coordination.orch.io/v1');
    assert.equal(lease.metadata?.namespace, 'orch-node-lease');
    assert.ok(lease.metadata);
    assert.deepEqual(lease.spec, { holderIdentity: 'node-a', leaseDurationSeconds: 40, renewTime: '2024-01-02T03:04:05.000000Z' });
    assert.deepEqual(lease.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: 'node-uid-1' }]);
    assert.deepEqual(rest.calls.map((c) => c.verb), ['get', 'create']);
    assert.ok(rest.calls.every((c) => c.options?.exempt === true));
    await controller.stop();
  });

  void it('renews every quarter of the duration by PUT on the last resourceVersion', async () => {
    const { rest, clock, controller } = setup();
    controller.start();
    await settle();
    const rv = stored(rest).metadata?.resourceVersion;
    assert.deepEqual(clock.pending().map((t) => t.delayMs), [10_000], 'a quarter of the 40 s lease');
    await clock.advance(10_000);
    const puts = rest.callsOf('update', PATH);
    assert.equal(puts.length, 1);
    assert.equal((puts[0]?.body as WireLease).metadata?.resourceVersion, rv);
    assert.equal(stored(rest).spec?.renewTime, '2024-01-02T03:04:15.000000Z');
    await clock.advance(20_000);
    assert.equal(rest.callsOf('update', PATH).length, 3);
    assert.equal(rest.callsOf('get').length, 1);
    assert.equal(controller.lease()?.metadata?.resourceVersion, stored(rest).metadata?.resourceVersion);
    await controller.stop();
  });

  void it('spreads renewals by up to 4 % of the interval', async () => {
    const { clock, controller } = setup({ random: () => 0.5 });
    controller.start();
    await settle();
    assert.deepEqual(clock.pending().map((t) => t.delayMs), [10_200]);
    await controller.stop();
  });

  void it('on a conflict re-GETs the lease and renews that one', async () => {
    const { rest, clock, controller } = setup();
    controller.start();
    await settle();
    // Someone else wrote the lease: our resourceVersion is stale.
    rest.put(PATH, { ...stored(rest), spec: { ...stored(rest).spec, holderIdentity: 'someone' } });
    await clock.advance(10_000);
    assert.deepEqual(rest.calls.slice(2).map((c) => c.verb), ['update', 'get', 'update']);
    assert.equal(stored(rest).spec?.holderIdentity, 'node-a');
    await controller.stop();
  });

  void it('adds the owner reference once the Node is known', async () => {
    const known: { node?: typeof NODE } = {};
    const { rest, clock, controller } = setup({ node: () => known.node });
    controller.start();
    await settle();
    assert.equal(stored(rest).metadata?.ownerReferences, undefined);
    known.node = NODE;
    await clock.advance(10_000);
    assert.equal(stored(rest).metadata?.ownerReferences?.[0]?.uid, 'node-uid-1');
    await controller.stop();
  });

  void it('GETs the Node for the owner when no node source is given', async () => {
    const { rest, controller } = setup({}, false);
    rest.put('/api/v1/nodes/node-a', { metadata: { name: 'node-a', uid: 'from-server' } });
    controller.start();
    await settle();
    assert.equal(stored(rest).metadata?.ownerReferences?.[0]?.uid, 'from-server');
    await controller.stop();
  });

  void it('backs off from 200 ms to 7 s while the server fails, and never throws', async () => {
    const { rest, clock, controller } = setup();
    rest.failNext('get', PATH, 'unavailable', 8);
    controller.start();
    await clock.advance(60_000);
    assert.deepEqual(clock.delays.slice(0, 8), [200, 400, 800, 1600, 3200, 6400, 7000, 7000]);
    assert.ok(rest.objects.has(PATH));
    await controller.stop();
  });

  void it('gives up a renewal after 5 failed PUTs and tries again at the next interval', async () => {
    let repeated = 0;
    const { rest, clock, controller } = setup({ onRepeatedFailure: () => repeated++ });
    controller.start();
    await settle();
    rest.failNext('update', PATH, 'unavailable', 10);
    await clock.advance(10_000);
    // 5 PUTs on the latest lease, then GET and 5 more on the fetched one.
    assert.equal(rest.callsOf('update', PATH).length, 10);
    assert.equal(repeated, 8);
    await clock.advance(10_000);
    assert.equal(rest.callsOf('update', PATH).length, 11);
    assert.equal(stored(rest).spec?.renewTime, '2024-01-02T03:04:25.000000Z');
    await controller.stop();
  });
});
