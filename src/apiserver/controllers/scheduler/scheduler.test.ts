import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/fake-clock.js';
import type { WireObject } from '../../registry/index.js';
import { conflict } from '../../status/index.js';
import { Informer } from '../client/index.js';
import { FakeEventRecorder, FakeResourceClient } from '../client/testing.js';
import { Scheduler, SchedulerVolumes, type Binder } from './index.js';

interface NodeSpec {
  readonly cpu?: string;
  readonly memory?: string;
  readonly pods?: string;
  readonly labels?: Record<string, string>;
  readonly taints?: WireObject[];
  readonly unschedulable?: boolean;
}

function node(name: string, o: NodeSpec = {}): WireObject {
  return {
    metadata: { name, labels: { 'orch.io/hostname': name, ...o.labels } },
    spec: { ...(o.taints === undefined ? {} : { taints: o.taints }), ...(o.unschedulable === true ? { unschedulable: true } : {}) },
    status: { allocatable: { cpu: o.cpu ?? '4', memory: o.memory ?? '8Gi', pods: o.pods ?? '110' } },
  };
}

function pod(name: string, spec: WireObject = {}, requests?: Record<string, string>): WireObject {
  return {
    metadata: { name, namespace: 'default' },
    spec: { schedulerName: 'default-scheduler', containers: [{ name: 'c', image: 'busybox', ...(requests === undefined ? {} : { resources: { requests } }) }], ...spec },
    status: { phase: 'Pending' },
  };
}

async function harness(options: { failBinds?: number; inPlacePodVerticalScaling?: boolean } = {}): Promise<{
  clock: FakeClock; pods: FakeResourceClient; nodes: FakeResourceClient; recorder: FakeEventRecorder; scheduler: Scheduler; nodeOf: (name: string) => string;
}> {
  const clock = new FakeClock();
  const log = (): void => undefined;
  const pods = new FakeResourceClient({ resource: 'pods', kind: 'Pod', clock, statusSubresource: true });
  const nodes = new FakeResourceClient({ resource: 'nodes', kind: 'Node', clock, statusSubresource: true });
  const podInformer = new Informer({ client: pods, clock, log, what: 'pods' });
  const nodeInformer = new Informer({ client: nodes, clock, log, what: 'nodes' });
  const recorder = new FakeEventRecorder();
  let failures = options.failBinds ?? 0;
  const binder: Binder = {
    async bind(namespace, name, _uid, target) {
      if (failures-- > 0) throw new Error('the store is away');
      const p = await pods.get(namespace, name);
      const spec = p.spec as Record<string, unknown>;
      if (typeof spec.nodeName === 'string') throw conflict({ group: '', resource: 'pods/binding' }, name, 'already assigned');
      spec.nodeName = target;
      await pods.update(namespace, name, p);
    },
  };
  const fake = (resource: string, kind: string): FakeResourceClient => new FakeResourceClient({ resource, kind, clock, statusSubresource: true });
  const storage = { volumes: fake('persistentvolumes', 'PersistentVolume'), claims: fake('persistentvolumeclaims', 'PersistentVolumeClaim'), classes: fake('storageclasses', 'StorageClass'), csiNodes: fake('csinodes', 'CSINode') };
  const storageInformers = Object.fromEntries(Object.entries(storage).map(([k, c]) => [k, new Informer({ client: c, clock, log, what: k })])) as Record<keyof typeof storage, Informer>;
  const volumes = new SchedulerVolumes({ ...storageInformers, volumesClient: storage.volumes, claimsClient: storage.claims, clock });
  const scheduler = new Scheduler({
    pods: podInformer, nodes: nodeInformer, podsClient: pods, binder, volumes, recorder, clock, log, random: () => 0,
    ...(options.inPlacePodVerticalScaling === undefined ? {} : { inPlacePodVerticalScaling: options.inPlacePodVerticalScaling }),
  });
  for (const i of Object.values(storageInformers)) await i.start();
  await nodeInformer.start();
  await podInformer.start();
  scheduler.start();
  const nodeOf = (name: string): string => {
    const spec = pods.peek('default', name)?.spec as { nodeName?: string } | undefined;
    return spec?.nodeName ?? '';
  };
  return { clock, pods, nodes, recorder, scheduler, nodeOf };
}

void describe('the scheduler', () => {
  void it('filters a large cluster until enough nodes fit, each cycle starting where the last one stopped', async () => {
    const h = await harness();
    for (let i = 0; i < 250; i++) await h.nodes.create('', node(`n${String(i).padStart(3, '0')}`));
    // 250 nodes: 120 feasible nodes are enough (sampling.ts); every node fits and scores the same
    // until it holds a pod, and ties go to the first one filtered (random 0).
    for (const name of ['p1', 'p2', 'p3']) {
      await h.pods.create('default', pod(name, {}, { cpu: '100m' }));
      await h.clock.advance(0);
    }
    assert.deepEqual(['p1', 'p2', 'p3'].map(h.nodeOf), ['n000', 'n120', 'n240']);
    await h.scheduler.close();
  });

  void it('binds a pod to the node with the most room and records Scheduled', async () => {
    const h = await harness();
    await h.nodes.create('', node('busy', { cpu: '4' }));
    await h.nodes.create('', node('idle', { cpu: '4' }));
    await h.pods.create('default', { ...pod('running', { nodeName: 'busy' }, { cpu: '3' }), status: { phase: 'Running' } });
    await h.pods.create('default', pod('web', {}, { cpu: '500m', memory: '64Mi' }));
    await h.clock.advance(0);
    assert.equal(h.nodeOf('web'), 'idle');
    assert.deepEqual(h.recorder.events.map((e) => [e.reason, e.note]), [['Scheduled', 'Successfully assigned default/web to idle']]);
    assert.equal(h.scheduler.pending, 0);
    await h.scheduler.close();
  });

  void it('counts pods it placed before their binding is seen, and frees the room of finished pods', async () => {
    const h = await harness();
    await h.nodes.create('', node('n1', { cpu: '1' }));
    for (const name of ['a', 'b', 'c']) await h.pods.create('default', pod(name, {}, { cpu: '400m' }));
    await h.clock.advance(0);
    assert.deepEqual(['a', 'b', 'c'].map(h.nodeOf), ['n1', 'n1', '']);
    const finished = h.pods.peek('default', 'a');
    assert.ok(finished !== undefined);
    await h.pods.update('default', 'a', { ...finished, status: { phase: 'Succeeded' } }, 'status');
    await h.clock.advance(1_000);
    assert.equal(h.nodeOf('c'), 'n1');
    await h.scheduler.close();
  });

  void it('explains a pod that fits nowhere, node by node, and binds it once a node with room joins', async () => {
    const h = await harness();
    await h.nodes.create('', node('small', { cpu: '1' }));
    for (const name of ['db-1', 'db-2']) await h.nodes.create('', node(name, { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] }));
    await h.pods.create('default', pod('big', {}, { cpu: '2' }));
    await h.clock.advance(0);
    const message = '0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: db}. '
      + 'preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling..';
    assert.deepEqual(h.recorder.events.map((e) => [e.type, e.reason, e.note]), [['Warning', 'FailedScheduling', message]]);
    const conditions = ((h.pods.peek('default', 'big')?.status ?? {}) as { conditions?: WireObject[] }).conditions;
    assert.deepEqual(conditions, [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastTransitionTime: '2024-01-02T03:04:05Z' }]);
    // Its own status write is not a reason to try again.
    await h.clock.advance(30_000);
    assert.equal(h.recorder.events.length, 1);
    await h.nodes.create('', node('large', { cpu: '8' }));
    await h.clock.advance(999);
    assert.equal(h.nodeOf('big'), '', 'waits out its back-off (1 s after the first attempt)');
    await h.clock.advance(1_001);
    assert.equal(h.nodeOf('big'), 'large');
    await h.scheduler.close();
  });

  void it('says no nodes are available when there are none', async () => {
    const h = await harness();
    await h.pods.create('default', pod('lonely'));
    await h.clock.advance(0);
    assert.deepEqual(h.recorder.events.map((e) => e.note), ['no nodes available to schedule pods']);
    await h.scheduler.close();
  });

  void it('schedules higher priority first, then the older pod', async () => {
    const h = await harness();
    await h.pods.create('default', pod('old-low', { priority: 0 }, { cpu: '3' }));
    await h.clock.advance(1_000);
    await h.pods.create('default', pod('new-low', { priority: 0 }, { cpu: '3' }));
    await h.pods.create('default', pod('high', { priority: 100 }, { cpu: '3' }));
    await h.clock.advance(0);
    // Nothing fits yet (no nodes); one node with room for one pod arrives.
    await h.nodes.create('', node('n1', { cpu: '4' }));
    await h.clock.advance(2_000);
    assert.deepEqual(['high', 'old-low', 'new-low'].map(h.nodeOf), ['n1', '', '']);
    await h.nodes.create('', node('n2', { cpu: '4' }));
    await h.clock.advance(10_000);
    assert.deepEqual(['high', 'old-low', 'new-low'].map(h.nodeOf), ['n1', 'n2', '']);
    await h.scheduler.close();
  });

  void it('leaves pods of other schedulers, deleting pods and gated pods alone', async () => {
    const h = await harness();
    await h.nodes.create('', node('n1'));
    await h.pods.create('default', pod('custom', { schedulerName: 'my-scheduler' }));
    await h.pods.create('default', pod('gated', { schedulingGates: [{ name: 'wait' }] }));
    await h.pods.create('default', { ...pod('going'), metadata: { name: 'going', namespace: 'default', deletionTimestamp: '2024-01-02T03:04:05Z' } });
    await h.clock.advance(5_000);
    assert.deepEqual(['custom', 'gated', 'going'].map(h.nodeOf), ['', '', '']);
    assert.equal(h.recorder.events.length, 0);
    await h.scheduler.close();
  });

  void it('tries a failed binding again after its back-off', async () => {
    const h = await harness({ failBinds: 1 });
    await h.nodes.create('', node('n1'));
    await h.pods.create('default', pod('web'));
    await h.clock.advance(0);
    assert.equal(h.nodeOf('web'), '');
    assert.deepEqual(h.recorder.events.map((e) => e.note), ['binding rejected: the store is away']);
    await h.clock.advance(1_000);
    assert.equal(h.nodeOf('web'), 'n1');
    await h.scheduler.close();
  });

  void it('spreads pods of equal score at random (the pick among the best)', async () => {
    const h = await harness();
    for (const name of ['n1', 'n2', 'n3']) await h.nodes.create('', node(name));
    for (let i = 0; i < 6; i++) await h.pods.create('default', pod(`p${i}`, {}, { cpu: '1', memory: '1Gi' }));
    await h.clock.advance(0);
    const placed = Array.from({ length: 6 }, (_, i) => h.nodeOf(`p${i}`));
    assert.deepEqual(new Set(placed), new Set(['n1', 'n2', 'n3']), 'least-allocated spreads equal pods over equal nodes');
    await h.scheduler.close();
  });

  /** A running pod on n1 whose container `c` requests `spec` and holds `allocated` (the node agent's status). */
  function running(spec: string, allocated: string, resize?: string): WireObject {
    return {
      ...pod('resized', { nodeName: 'n1' }, { cpu: spec }),
      status: { phase: 'Running', ...(resize === undefined ? {} : { resize }), containerStatuses: [{ name: 'c', allocatedResources: { cpu: allocated } }] },
    };
  }

  void it('with InPlacePodVerticalScaling counts a bound pod at its allocation until the node agent lowers it, then lets waiting pods try again', async () => {
    const h = await harness({ inPlacePodVerticalScaling: true });
    await h.nodes.create('', node('n1', { cpu: '2' }));
    await h.pods.create('default', running('1500m', '1500m'));
    await h.pods.create('default', pod('web', {}, { cpu: '1' }));
    await h.clock.advance(0);
    assert.equal(h.nodeOf('web'), '');
    // The resize down is in the spec; the node agent has not allocated it yet: the node stays full.
    await h.pods.update('default', 'resized', running('500m', '1500m'));
    await h.clock.advance(30_000);
    assert.equal(h.nodeOf('web'), '');
    assert.equal(h.recorder.events.length, 1, 'no new attempt: nothing it holds went down');
    // The node agent allocates 500m (InProgress): the room is free.
    await h.pods.update('default', 'resized', running('500m', '500m', 'InProgress'), 'status');
    await h.clock.advance(1_000);
    assert.equal(h.nodeOf('web'), 'n1');
    await h.scheduler.close();
  });

  void it('with InPlacePodVerticalScaling counts the allocation of a bound pod above its spec; without the gate only the spec counts', async () => {
    for (const gate of [true, false]) {
      const h = await harness({ inPlacePodVerticalScaling: gate });
      await h.nodes.create('', node('n1', { cpu: '2' }));
      // Spec 500m, allocated 1500m (a resize down not yet allocated; or the status of an older spec).
      await h.pods.create('default', running('500m', '1500m'));
      await h.pods.create('default', pod('web', {}, { cpu: '1' }));
      await h.clock.advance(0);
      assert.equal(h.nodeOf('web'), gate ? '' : 'n1', `gate ${gate}`);
      await h.scheduler.close();
    }
  });
});
