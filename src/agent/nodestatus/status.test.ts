import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeLogger } from '../logging/testing.js';
import { FakeFacts, fakeMachine } from './fakes.js';
import { computeStatus, statusChanged, statusPatch, type StatusConfig } from './status.js';
import type { WireNode } from './types.js';

const T0 = Date.UTC(2024, 0, 2, 3, 4, 5);
const config: StatusConfig = {
  nodeName: 'n1', hostname: 'n1', nodeIPs: ['10.0.0.5'], port: 10250, agentVersion: 'v0.1.0', maxPods: 110, podsPerCore: 0,
  reservation: { systemReserved: {}, orchReserved: {}, evictionHard: { 'memory.available': '100Mi' } }, maxImages: 50,
};

function sources(facts = new FakeFacts(), machine = () => Promise.resolve(fakeMachine())): Parameters<typeof computeStatus>[1] {
  return { facts, machine, logger: new FakeLogger() };
}

void describe('one status report', () => {
  void it('fills capacity, allocatable, addresses, nodeInfo, the endpoint, images and conditions', async () => {
    const { status, events } = await computeStatus(undefined, sources(), config, T0);
    assert.deepEqual(status.capacity, { cpu: '4', 'ephemeral-storage': '100Gi', memory: '8Gi', pods: '110' });
    assert.equal(status.allocatable?.memory, '8092Mi');
    assert.deepEqual(status.addresses, [{ type: 'InternalIP', address: '10.0.0.5' }, { type: 'Hostname', address: 'n1' }]);
    assert.deepEqual(status.daemonEndpoints, { nodeagentEndpoint: { Port: 10250 } });
    assert.deepEqual(status.nodeInfo, {
      machineID: 'm-1', systemUUID: 'u-1', bootID: 'b-1', kernelVersion: '6.1.0', osImage: 'Debian GNU/Linux 12 (bookworm)',
      containerRuntimeVersion: 'containerd://1.7.2', nodeagentVersion: 'v0.1.0', kubeletVersion: 'v0.1.0', kubeProxyVersion: 'v0.1.0',
      operatingSystem: 'linux', architecture: 'amd64',
    });
    assert.equal(status.images?.length, 1);
    assert.equal(status.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    assert.equal(events.length, 3);
  });

  void it('keeps the previous images and runtime version when they cannot be read; a down runtime is NotReady', async () => {
    const first = await computeStatus(undefined, sources(), config, T0);
    const facts = new FakeFacts();
    facts.imagesFail = true;
    facts.runtimeDown = true;
    facts.runtimeVersion = () => Promise.reject(new Error('down'));
    const base: WireNode = { metadata: { name: 'n1' }, status: first.status };
    const { status } = await computeStatus(base, sources(facts), config, T0 + 10_000);
    assert.deepEqual(status.images, first.status.images);
    assert.equal(status.nodeInfo?.containerRuntimeVersion, 'containerd://1.7.2');
    const ready = status.conditions?.find((c) => c.type === 'Ready');
    assert.ok(ready);
    assert.equal(ready.status, 'False');
    assert.equal(ready.message, 'container runtime is down: connection refused');
  });

  void it('without machine facts keeps the server capacity', async () => {
    const first = await computeStatus(undefined, sources(), config, T0);
    const { status } = await computeStatus({ status: first.status }, sources(new FakeFacts(), () => Promise.reject(new Error('no /proc'))), config, T0);
    assert.deepEqual(status.capacity, first.status.capacity);
    assert.equal(status.nodeInfo?.machineID, 'm-1');
  });

  void it('sees no change in heartbeat times alone, a change in anything else', async () => {
    const first = await computeStatus(undefined, sources(), config, T0);
    const later = await computeStatus({ status: first.status }, sources(), config, T0 + 60_000);
    assert.equal(statusChanged(first.status, later.status), false);
    // The server may keep quantities in another spelling of the same value.
    assert.equal(statusChanged({ ...first.status, capacity: { ...first.status.capacity, memory: '8192Mi' } }, later.status), false);
    const facts = new FakeFacts();
    facts.imageList = [...facts.imageList, { names: ['x'], sizeBytes: 1 }];
    const moreImages = await computeStatus({ status: first.status }, sources(facts), config, T0 + 60_000);
    assert.equal(statusChanged(first.status, moreImages.status), true);
    assert.equal(statusChanged(undefined, first.status), true);
  });

  void it('patches removed resources to null, replaces addresses, sends only its own conditions', async () => {
    const first = await computeStatus(undefined, sources(), config, T0);
    const current = {
      ...first.status,
      capacity: { ...first.status.capacity, 'hugepages-2Mi': '0' },
      conditions: [...(first.status.conditions ?? []), { type: 'NetworkUnavailable', status: 'False' }],
    };
    const { status } = statusPatch(current, first.status);
    assert.equal((status.capacity as Record<string, unknown>)['hugepages-2Mi'], null);
    assert.deepEqual((status.addresses as unknown[])[0], { $patch: 'replace' });
    assert.deepEqual((status.conditions as { type: string }[]).map((c) => c.type), ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready']);
  });

  void it('keeps the resources it does not own, reports the device plugin resources, and zeroes extended resources when asked', async () => {
    const facts = new FakeFacts();
    facts.devices = { capacity: new Map([['example.com/dev', 3]]), allocatable: new Map([['example.com/dev', 2]]), removed: ['example.com/gone'] };
    const first = await computeStatus(undefined, sources(facts), config, T0);
    const base: WireNode = {
      status: {
        ...first.status,
        capacity: { ...first.status.capacity, 'example.com/dongle': '4', 'hugepages-1Gi': '0' },
        allocatable: { ...first.status.allocatable, 'example.com/stale': '1' },
      },
    };
    const { status } = await computeStatus(base, sources(facts), config, T0 + 10_000);
    assert.deepEqual(status.capacity, {
      cpu: '4', 'ephemeral-storage': '100Gi', 'example.com/dev': '3', 'example.com/dongle': '4', 'example.com/gone': '0', memory: '8Gi', pods: '110',
    }, "an administrator's extended resource stays; hugepages the machine does not have go");
    assert.equal(status.allocatable?.['example.com/dev'], '2');
    assert.equal(status.allocatable['example.com/dongle'], '4', 'its allocatable follows its capacity');
    assert.equal(status.allocatable['example.com/gone'], '0');
    assert.equal(status.allocatable['example.com/stale'], undefined, 'an extended resource without capacity leaves allocatable');
    const reset = await computeStatus(base, sources(new FakeFacts()), config, T0 + 10_000, { resetExtended: true });
    assert.deepEqual([reset.status.capacity?.['example.com/dongle'], reset.status.allocatable?.['example.com/dongle']], ['0', '0']);
  });

  void it('reports the volumes in use when the agent has them, replaces the list, and removes the last one with null', async () => {
    const plain = await computeStatus(undefined, sources(), config, T0);
    assert.equal(plain.status.volumesInUse, undefined, 'not given: left alone');
    assert.equal(statusPatch(undefined, plain.status).status['volumesInUse'], undefined);
    const facts = new FakeFacts();
    let inUse: readonly string[] = ['orch.io/csi/d^a', 'orch.io/csi/d^b'];
    facts.volumesInUse = () => Promise.resolve(inUse);
    const first = await computeStatus(undefined, sources(facts), config, T0);
    assert.deepEqual(first.status.volumesInUse, ['orch.io/csi/d^a', 'orch.io/csi/d^b']);
    assert.deepEqual(statusPatch(undefined, first.status).status['volumesInUse'], ['orch.io/csi/d^a', 'orch.io/csi/d^b']);
    inUse = ['orch.io/csi/d^b'];
    const second = await computeStatus({ status: first.status }, sources(facts), config, T0);
    assert.equal(statusChanged(first.status, second.status), true, 'a volume left: reported at once');
    inUse = [];
    const third = await computeStatus({ status: second.status }, sources(facts), config, T0);
    assert.equal(statusPatch(second.status, third.status).status['volumesInUse'], null);
    assert.equal(statusPatch(third.status, third.status).status['volumesInUse'], undefined, 'none before, none now: not sent');
    facts.volumesInUse = () => Promise.reject(new Error('disk'));
    const kept = await computeStatus({ status: second.status }, sources(facts), config, T0);
    assert.deepEqual(kept.status.volumesInUse, ['orch.io/csi/d^b'], 'an unreadable list keeps the server\'s');
  });
});
