import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, settle } from '../../api/fake-clock.js';
import { FakeLogger } from '../logging/testing.js';
import { FakeRestClient } from '../orchclient/testing.js';
import { FakeFacts, fakeMachine, fakeNodeApi, testIdentity } from './fakes.js';
import { nodePath, nodeStatusPath } from './registration.js';
import { createNodeStatusController, type NodeStatusControllerOptions } from './status-controller.js';
import type { NodeEvent, WireNode } from './types.js';

const STATUS = nodeStatusPath('node-a');

function setup(overrides: Partial<NodeStatusControllerOptions> = {}) {
  const rest = fakeNodeApi();
  const clock = new FakeClock();
  const facts = new FakeFacts();
  const logger = new FakeLogger();
  const events: NodeEvent[] = [];
  const controller = createNodeStatusController({
    client: rest, identity: testIdentity, facts, clock, logger, registerNode: true,
    status: {
      nodeIPs: ['10.0.0.5'], port: 10250, agentVersion: 'v0.1.0', maxPods: 110, podsPerCore: 0, maxImages: 50,
      reservation: { systemReserved: {}, orchReserved: {}, evictionHard: {} },
    },
    updateFrequencyMs: 10_000,
    reportFrequencyMs: 300_000,
    machine: () => Promise.resolve(fakeMachine()),
    onEvent: (e) => events.push(e),
    ...overrides,
  });
  return { rest, clock, facts, logger, events, controller };
}

const stored = (rest: FakeRestClient): WireNode => rest.objects.get(nodePath('node-a')) as WireNode;

void describe('the node status controller', () => {
  void it('registers with the status, then reports at once and emits the first condition events', async () => {
    const { rest, clock, controller, events } = setup();
    await controller.start();
    await settle();
    const create = rest.callsOf('create')[0];
    assert.ok((create?.body as WireNode).status?.capacity !== undefined, 'the Node is created with its status');
    assert.deepEqual(events.map((e) => e.reason), ['NodeHasSufficientMemory', 'NodeHasNoDiskPressure', 'NodeHasSufficientPID']);
    assert.equal(controller.node()?.metadata?.name, 'node-a');
    assert.equal(stored(rest).status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    // The first tick found nothing changed right after creation: no status write yet.
    assert.equal(rest.callsOf('patch', STATUS).length, 0);
    assert.ok(rest.callsOf('get').every((c) => c.options?.exempt === true));
    assert.deepEqual(clock.pending().map((t) => t.delayMs), [10_000], 'the next report after nodeStatusUpdateFrequency');
    await controller.stop();
    assert.deepEqual(clock.pending(), [], 'stop() ends the wait');
  });

  void it('writes status only on change, or when the report frequency has passed', async () => {
    const { rest, clock, facts, controller, events } = setup();
    await controller.start();
    await clock.advance(10_000 * 5);
    assert.equal(rest.callsOf('patch', STATUS).length, 0, 'nothing changed within the report frequency');
    facts.status = { runtime: { ready: true }, network: { ready: false, reason: 'NetworkPluginNotReady', message: 'cni plugin not initialized' } };
    await clock.advance(10_000);
    const patches = rest.callsOf('patch', STATUS);
    assert.equal(patches.length, 1);
    const patch = patches[0];
    assert.ok(patch);
    assert.equal(patch.patchType, 'strategic');
    assert.equal(patch.options?.exempt, true);
    const ready = stored(rest).status?.conditions?.find((c) => c.type === 'Ready');
    assert.ok(ready);
    assert.equal(ready.status, 'False');
    assert.match(ready.message ?? '', /NetworkReady=false/);
    assert.equal(events.at(-1)?.reason, 'NodeNotReady');
    // Unchanged again: quiet until 5 minutes after the last write.
    await clock.advance(280_000);
    assert.equal(rest.callsOf('patch', STATUS).length, 1);
    await clock.advance(30_000);
    assert.equal(rest.callsOf('patch', STATUS).length, 2);
    // Written at 03:05:05, due again at 03:10:05.
    const ready2 = stored(rest).status?.conditions?.find((c) => c.type === 'Ready');
    assert.ok(ready2);
    assert.equal(ready2.lastHeartbeatTime, '2024-01-02T03:10:05Z');
    assert.equal(ready2.lastTransitionTime, '2024-01-02T03:05:05Z');
    await controller.stop();
  });

  void it('retries a failed report 5 times, then waits for the next tick without throwing', async () => {
    const { rest, clock, facts, logger, controller } = setup();
    await controller.start();
    await settle();
    facts.pressures = { memory: true, disk: false, pid: false };
    rest.failNext('patch', STATUS, 'unavailable', 7);
    const before = rest.callsOf('get', nodePath('node-a')).length;
    await clock.advance(10_000);
    assert.equal(rest.callsOf('patch', STATUS).length, 5);
    // Upstream: the first try reads the Node from the server's cache (resourceVersion=0), each retry the current one.
    const gets = rest.callsOf('get', nodePath('node-a')).slice(before).map((c) => c.options?.query?.resourceVersion);
    assert.deepEqual(gets, ['0', undefined, undefined, undefined, undefined]);
    assert.equal(logger.lines.filter((l) => l.msg.startsWith('Unable to update node status')).length, 1);
    await clock.advance(10_000);
    assert.equal(rest.callsOf('patch', STATUS).length, 8);
    assert.equal(stored(rest).status?.conditions?.find((c) => c.type === 'MemoryPressure')?.status, 'True');
    await controller.stop();
  });

  void it('reports at once on requestUpdate', async () => {
    const { rest, clock, facts, controller } = setup();
    await controller.start();
    await settle();
    facts.problem = 'PLEG is not healthy: pleg has yet to be successful';
    controller.requestUpdate();
    await settle();
    assert.equal(rest.callsOf('patch', STATUS).length, 1);
    assert.deepEqual(clock.pending().map((t) => t.dueAt - clock.now()), [10_000], 'the wait starts again from the early report');
    assert.equal(stored(rest).status?.conditions?.find((c) => c.type === 'Ready')?.message, 'PLEG is not healthy: pleg has yet to be successful');
    await clock.advance(9_000);
    assert.equal(rest.callsOf('patch', STATUS).length, 1);
    await controller.stop();
  });

  void it('with an existing Node, writes the status on the first tick and reports schedulability changes', async () => {
    const { rest, clock, controller, events } = setup();
    rest.put(nodePath('node-a'), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' }, spec: {} });
    await controller.start();
    await settle();
    assert.equal(rest.callsOf('patch', STATUS).length, 1);
    assert.equal(rest.callsOf('patch', nodePath('node-a')).length, 1, 'the default labels were reconciled');
    const node = stored(rest);
    rest.put(nodePath('node-a'), { ...node, spec: { unschedulable: true } });
    await clock.advance(10_000);
    assert.equal(events.at(-1)?.reason, 'NodeNotSchedulable');
    await controller.stop();
  });

  void it('zeroes the extended resources of an existing Node once when the agent has no device checkpoint', async () => {
    const { rest, clock, facts, controller } = setup();
    facts.resetDevices = true;
    rest.put(nodePath('node-a'), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' }, spec: {}, status: { capacity: { 'example.com/dev': '4' }, allocatable: { 'example.com/dev': '4' } } });
    await controller.start();
    await settle();
    assert.deepEqual([stored(rest).status?.capacity?.['example.com/dev'], stored(rest).status?.allocatable?.['example.com/dev']], ['0', '0']);
    rest.put(nodePath('node-a'), { ...stored(rest), status: { ...stored(rest).status, capacity: { ...stored(rest).status?.capacity, 'example.com/dev': '2' } } });
    await clock.advance(10_000);
    assert.equal(stored(rest).status?.capacity?.['example.com/dev'], '2', 'only at registration');
    await controller.stop();
  });

  void it('without registerNode only reports status, and start() resolves when stopped before registering', async () => {
    const a = setup({ registerNode: false });
    a.rest.put(nodePath('node-a'), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' } });
    await a.controller.start();
    await settle();
    assert.equal(a.rest.callsOf('create').length, 0);
    assert.equal(a.rest.callsOf('patch', STATUS).length, 1);
    await a.controller.stop();

    const b = setup();
    b.rest.failNext('create', '/api/v1/nodes', 'unavailable', 1000);
    const started = b.controller.start();
    await b.clock.advance(1_000);
    await b.controller.stop();
    await started;
    assert.equal(b.controller.node(), undefined);
  });
});
