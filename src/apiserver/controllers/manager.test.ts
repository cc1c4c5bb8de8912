import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import { FakeResourceClient } from './client/testing.js';
import { ControllerManager, type ControllerClients } from './index.js';

function clients(clock: FakeClock): ControllerClients & { podsFake: FakeResourceClient; nodesFake: FakeResourceClient; leasesFake: FakeResourceClient } {
  const podsFake = new FakeResourceClient({ resource: 'pods', kind: 'Pod', clock, statusSubresource: true });
  const nodesFake = new FakeResourceClient({ resource: 'nodes', kind: 'Node', clock, statusSubresource: true });
  const leasesFake = new FakeResourceClient({ resource: 'leases', kind: 'Lease', apiVersion: 'coordination.orch.io/v1', clock });
  return {
    pods: podsFake, nodes: nodesFake, leases: leasesFake, podsFake, nodesFake, leasesFake,
    nodeLeases: new FakeResourceClient({ resource: 'leases', kind: 'Lease', apiVersion: 'coordination.orch.io/v1', clock }),
    events: new FakeResourceClient({ resource: 'events', kind: 'Event', apiVersion: 'events.orch.io/v1', clock }),
    namespaces: new FakeResourceClient({ resource: 'namespaces', kind: 'Namespace', clock }),
    serviceAccounts: new FakeResourceClient({ resource: 'serviceaccounts', kind: 'ServiceAccount', clock }),
    configMaps: new FakeResourceClient({ resource: 'configmaps', kind: 'ConfigMap', clock }),
    persistentVolumes: new FakeResourceClient({ resource: 'persistentvolumes', kind: 'PersistentVolume', clock }),
    persistentVolumeClaims: new FakeResourceClient({ resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', clock }),
    storageClasses: new FakeResourceClient({ resource: 'storageclasses', kind: 'StorageClass', clock }),
    csiDrivers: new FakeResourceClient({ resource: 'csidrivers', kind: 'CSIDriver', clock }),
    csiNodes: new FakeResourceClient({ resource: 'csinodes', kind: 'CSINode', clock }),
    volumeAttachments: new FakeResourceClient({ resource: 'volumeattachments', kind: 'VolumeAttachment', clock }),
  };
}

function manager(identity: string, c: ControllerClients, clock: FakeClock, controllers: readonly string[] = ['*'], elect = true): { m: ControllerManager; log: string[] } {
  const log: string[] = [];
  const bound: string[] = [];
  const m = new ControllerManager({
    clients: c,
    binder: { bind: (_ns, name, _uid, node) => { bound.push(`${name}->${node}`); return Promise.resolve(); } },
    controllers,
    leaderElection: { enabled: elect, namespace: 'orch-system', name: 'orch-controllers', identity, leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
    nodeMonitorPeriodMs: 5_000, nodeMonitorGracePeriodMs: 40_000, nodeStartupGracePeriodMs: 60_000, terminatedPodGcThreshold: 12_500,
    rootCaPem: 'CA', features: { inPlacePodVerticalScaling: false }, clock, log: (l) => log.push(l), hostname: 'host',
  });
  return { m, log };
}

void describe('the controller manager', () => {
  void it('runs the loops on the leader only, and on the other replica once the leader stops', async () => {
    const clock = new FakeClock();
    const c = clients(clock);
    const a = manager('a', c, clock);
    const b = manager('b', c, clock);
    a.m.start();
    await clock.advance(0);
    b.m.start();
    await clock.advance(10_000);
    assert.equal(a.m.running, true);
    assert.equal(b.m.running, false);
    assert.ok(a.log.includes('controllers: running scheduler, node-lifecycle-controller, taint-eviction-controller, pod-garbage-collector-controller, serviceaccount-controller, '
      + 'root-ca-certificate-publisher-controller, persistentvolume-binder-controller, persistentvolume-attach-detach-controller, '
      + 'persistentvolumeclaim-protection-controller, persistentvolume-protection-controller, ephemeral-volume-controller'), a.log.join('\n'));
    assert.ok(b.log.includes('leader election: a leads; the control loops run there'));
    await a.m.close();
    assert.equal(a.m.running, false);
    await clock.advance(2_400);
    assert.equal(b.m.running, true);
    await b.m.close();
  });

  void it('runs only what --controllers enables, at once without leader election, and nothing for an empty list', async () => {
    const clock = new FakeClock();
    const c = clients(clock);
    const some = manager('a', c, clock, ['*', '-scheduler', '-podgc', '-serviceaccount', '-root-ca-cert-publisher', '-persistentvolume-binder', '-attachdetach', '-pvc-protection', '-pv-protection', '-ephemeral-volume'], false);
    some.m.start();
    await clock.advance(0);
    assert.ok(some.log.includes('controllers: running node-lifecycle-controller, taint-eviction-controller'));
    assert.equal(c.leasesFake.all().length, 0, 'no Lease without leader election');
    await some.m.close();
    const none = manager('b', c, clock, [], false);
    none.m.start();
    await clock.advance(0);
    assert.equal(none.m.running, false);
    await none.m.close();
    const electing = manager('c', c, clock, [], true);
    electing.m.start();
    await clock.advance(10_000);
    assert.equal(c.leasesFake.all().length, 0, 'no loop enabled: no leader election, no Lease written');
    assert.ok(electing.log.includes('controllers: none enabled (--controllers); no leader election'));
    await electing.m.close();
  });

  void it('tries again when the informers cannot list', async () => {
    const clock = new FakeClock();
    const c = clients(clock);
    c.nodesFake.failNext('list', new Error('the store is starting'));
    const a = manager('a', c, clock, ['*'], false);
    a.m.start();
    await clock.advance(0);
    assert.equal(a.m.running, false);
    assert.ok(a.log.some((l) => l.includes('cannot start (trying again in 1 s): the store is starting')));
    await clock.advance(1_000);
    assert.equal(a.m.running, true);
    await a.m.close();
  });
});
