import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/fake-clock.js';
import type { WireObject } from '../../registry/index.js';
import { Informer } from '../client/index.js';
import { FakeEventRecorder, FakeResourceClient } from '../client/testing.js';
import { Scheduler, SchedulerVolumes, type Binder } from './index.js';

type Obj = WireObject;
const KINDS = { pods: 'Pod', nodes: 'Node', volumes: 'PersistentVolume', claims: 'PersistentVolumeClaim', classes: 'StorageClass', csiNodes: 'CSINode' } as const;
type Fakes = Record<keyof typeof KINDS, FakeResourceClient>;

async function harness(): Promise<{ clock: FakeClock; f: Fakes; recorder: FakeEventRecorder; scheduler: Scheduler; nodeOf: (pod: string) => string; notes: () => string[] }> {
  const clock = new FakeClock();
  const log = (): void => undefined;
  const f = Object.fromEntries(Object.entries(KINDS).map(([k, kind]) => [k, new FakeResourceClient({ resource: k, kind, clock, statusSubresource: true })])) as Fakes;
  const i = Object.fromEntries(Object.entries(f).map(([k, c]) => [k, new Informer({ client: c, clock, log, what: k })])) as Record<keyof Fakes, Informer>;
  const binder: Binder = {
    async bind(namespace, name, _uid, node) {
      const p = await f.pods.get(namespace, name);
      (p.spec as Obj).nodeName = node;
      await f.pods.update(namespace, name, p);
    },
  };
  const recorder = new FakeEventRecorder();
  const volumes = new SchedulerVolumes({ claims: i.claims, volumes: i.volumes, classes: i.classes, csiNodes: i.csiNodes, volumesClient: f.volumes, claimsClient: f.claims, clock });
  const scheduler = new Scheduler({ pods: i.pods, nodes: i.nodes, podsClient: f.pods, binder, volumes, recorder, clock, log, random: () => 0 });
  for (const inf of Object.values(i)) await inf.start();
  scheduler.start();
  return {
    clock, f, recorder, scheduler,
    nodeOf: (pod) => ((f.pods.peek('default', pod)?.spec as { nodeName?: string } | undefined)?.nodeName ?? ''),
    notes: () => recorder.events.filter((e) => e.reason === 'FailedScheduling').map((e) => e.note),
  };
}

const node = (name: string): Obj => ({ metadata: { name, labels: { 'orch.io/hostname': name } }, spec: {}, status: { allocatable: { cpu: '4', memory: '8Gi', pods: '110' } } });
const pod = (name: string, claims: string[]): Obj => ({
  metadata: { name, namespace: 'default' },
  spec: { schedulerName: 'default-scheduler', containers: [{ name: 'c', image: 'busybox' }], volumes: claims.map((c, n) => ({ name: `v${n}`, persistentVolumeClaim: { claimName: c } })) },
  status: { phase: 'Pending' },
});
const claim = (name: string, spec: Obj = {}): Obj => ({ metadata: { name, namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec }, status: { phase: 'Pending' } });
const localVolume = (name: string, nodeName: string, extra: Obj = {}): Obj => ({
  metadata: { name },
  spec: {
    capacity: { storage: '5Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: 'local', local: { path: '/mnt' },
    nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'orch.io/hostname', operator: 'In', values: [nodeName] }] }] } }, ...extra,
  },
  status: { phase: 'Available' },
});
const wfc = { metadata: { name: 'local' }, provisioner: 'orch.io/no-provisioner', volumeBindingMode: 'WaitForFirstConsumer' };

void describe('the scheduler\'s volume plugins', () => {
  void it('binds a WaitForFirstConsumer claim to a volume of the chosen node, then the pod once the claim is bound', async () => {
    const h = await harness();
    for (const n of ['n1', 'n2']) await h.f.nodes.create('', node(n));
    await h.f.classes.create('', wfc);
    await h.f.volumes.create('', localVolume('on-n2', 'n2'));
    await h.f.claims.create('default', claim('data', { storageClassName: 'local' }));
    await h.f.pods.create('default', pod('web', ['data']));
    await h.clock.advance(0);
    const pv = h.f.volumes.peek('', 'on-n2');
    const ref = (pv?.spec as Obj).claimRef as Obj;
    assert.deepEqual([ref.namespace, ref.name, ref.uid], ['default', 'data', ((h.f.claims.peek('default', 'data')?.metadata as Obj).uid)]);
    assert.equal(((pv?.metadata as Obj).annotations as Obj)['pv.orch.io/bound-by-controller'], 'yes');
    assert.equal(h.nodeOf('web'), '', 'the pod waits for the PV controller to bind the claim');
    // The PV controller's half.
    const c = h.f.claims.peek('default', 'data') ?? {};
    await h.f.claims.update('default', 'data', { ...c, metadata: { ...(c.metadata as Obj), annotations: { 'pv.orch.io/bind-completed': 'yes' } }, spec: { ...(c.spec as Obj), volumeName: 'on-n2' } });
    await h.clock.advance(1_000);
    assert.equal(h.nodeOf('web'), 'n2');
    await h.scheduler.close();
  });

  void it('explains claims that cannot be satisfied with upstream\'s texts', async () => {
    const h = await harness();
    for (const n of ['n1', 'n2']) await h.f.nodes.create('', node(n));
    await h.f.classes.create('', wfc);
    await h.f.classes.create('', { metadata: { name: 'now' }, provisioner: 'csi.example.com', volumeBindingMode: 'Immediate' });
    await h.f.volumes.create('', localVolume('far', 'n9', { claimRef: { namespace: 'default', name: 'bound', uid: 'x' } }));
    await h.f.claims.create('default', claim('bound', { storageClassName: 'local', volumeName: 'far' }));
    await h.f.claims.create('default', claim('nothing', { storageClassName: 'local' }));
    await h.f.claims.create('default', claim('immediate', { storageClassName: 'now' }));
    for (const [p, c] of [['missing', 'nope'], ['conflict', 'bound'], ['unbindable', 'nothing'], ['early', 'immediate']] as const) await h.f.pods.create('default', pod(p, [c]));
    await h.clock.advance(0);
    const unresolvable = (what: string): string => `0/2 nodes are available: ${what}. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..`;
    assert.deepEqual(h.notes().sort(), [
      unresolvable('2 node(s) didn\'t find available persistent volumes to bind'),
      unresolvable('2 node(s) had volume node affinity conflict'),
      unresolvable('persistentvolumeclaim "nope" not found'),
      unresolvable('pod has unbound immediate PersistentVolumeClaims'),
    ].sort());
    const condition = ((h.f.pods.peek('default', 'missing')?.status as Obj).conditions as Obj[])[0];
    assert.deepEqual([condition?.reason, condition?.message], ['Unschedulable', unresolvable('persistentvolumeclaim "nope" not found')]);
    // The missing claim appears: the pod is tried again (and now waits on a volume for it).
    await h.f.claims.create('default', claim('nope', { storageClassName: 'local' }));
    await h.clock.advance(2_000);
    assert.ok(h.notes().filter((n) => n.includes('find available persistent volumes')).length >= 2);
    await h.scheduler.close();
  });

  void it('lets one pod only use a ReadWriteOncePod claim, and keeps to the CSI attach limit of each node', async () => {
    const h = await harness();
    for (const n of ['n1', 'n2']) await h.f.nodes.create('', node(n));
    await h.f.csiNodes.create('', { metadata: { name: 'n1' }, spec: { drivers: [{ name: 'd.csi', nodeID: 'n1', allocatable: { count: 1 } }] } });
    const csi = (name: string, handle: string, claimName: string): Obj => ({
      metadata: { name }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], csi: { driver: 'd.csi', volumeHandle: handle }, claimRef: { namespace: 'default', name: claimName } }, status: { phase: 'Bound' },
    });
    await h.f.volumes.create('', csi('pv-a', 'a', 'a'));
    await h.f.volumes.create('', csi('pv-b', 'b', 'b'));
    await h.f.claims.create('default', claim('a', { volumeName: 'pv-a' }));
    await h.f.claims.create('default', claim('b', { volumeName: 'pv-b' }));
    await h.f.volumes.create('', { metadata: { name: 'pv-solo' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOncePod'], hostPath: { path: '/solo' }, claimRef: { namespace: 'default', name: 'solo' } }, status: { phase: 'Bound' } });
    await h.f.claims.create('default', claim('solo', { accessModes: ['ReadWriteOncePod'], volumeName: 'pv-solo' }));
    await h.f.pods.create('default', { ...pod('first', ['a']), spec: { ...(pod('first', ['a']).spec as Obj), nodeName: 'n1' } });
    await h.f.pods.create('default', pod('second', ['b']));
    await h.clock.advance(0);
    assert.equal(h.nodeOf('second'), 'n2', 'n1 has its one d.csi volume already');
    await h.f.pods.create('default', { ...pod('owner', ['solo']), spec: { ...(pod('owner', ['solo']).spec as Obj), nodeName: 'n2' } });
    await h.f.pods.create('default', pod('intruder', ['solo']));
    await h.clock.advance(0);
    assert.equal(h.nodeOf('intruder'), '');
    assert.ok(h.notes().includes('0/2 nodes are available: 2 node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod. '
      + 'preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..'), h.notes().join('\n'));
    await h.scheduler.close();
  });
});
