import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { PodStatus, ResourceRequirements } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../api/pod/index.js';
import { FakeLogger } from '../logging/testing.js';
import { createResizeManager, type ResizeManager } from './manager.js';

const dir = mkdtempSync(join(tmpdir(), 'resize-manager-'));
after(() => { rmSync(dir, { recursive: true, force: true }); });

function pod(uid: string, resources: ResourceRequirements): NodePod {
  return {
    metadata: { uid, name: uid, namespace: 'default' },
    spec: { containers: [{ name: 'main', image: 'x', resources, resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }] }] },
  };
}
const running: PodStatus = { phase: 'Running', containerStatuses: [{ name: 'main', containerID: 'containerd://c1', image: 'x', imageID: '', ready: true, restartCount: 0, state: { running: {} } }] };
const small = { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } };
const other = pod('other', { requests: { cpu: '1', memory: '1Gi' } });

function manager(path: string, active: NodePod[] = [other]): ResizeManager {
  return createResizeManager({ statePath: path, logger: new FakeLogger(), allocatable: () => ({ cpuMilli: 2000, memoryBytes: 4 * 1024 ** 3 }), activePods: () => active });
}

void describe('the resize manager', () => {
  void it('allocates a new pod its requests, accepts a resize that fits and keeps the allocation across a restart', () => {
    const path = join(dir, 'accept');
    const m = manager(path);
    const p = pod('p1', small);
    assert.equal(m.allocatedPod(p, undefined), p);
    assert.equal(m.decorate(p, p, running, undefined).resize, undefined, 'c1 seen running with its spec');
    const grown = pod('p1', { requests: { cpu: '900m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } });
    assert.equal(m.allocatedPod(grown, running), grown, 'fits beside the other pod (1 CPU + 900m of 2)');
    const status = m.decorate(grown, grown, running, running);
    assert.equal(status.resize, 'InProgress', 'the container still has 500m');
    const [first] = status.containerStatuses ?? [];
    assert.deepEqual(first?.allocatedResources, { cpu: '900m', memory: '1Gi' });
    assert.deepEqual(first.resources, { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m', memory: '1Gi' } });
    m.applied('p1', 'c1', { requests: { cpu: '900m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } });
    const done = m.decorate(grown, grown, running, running);
    assert.equal(done.resize, undefined, 'cleared once the container has its spec');
    const restarted = manager(path);
    assert.equal(restarted.allocatedPod(grown, done), grown, 'the checkpoint kept the 900m allocation: nothing to admit');
  });

  void it('defers a resize that does not fit beside the other pods and runs the pod as allocated meanwhile', () => {
    const m = manager(join(dir, 'defer'));
    const p = pod('p2', small);
    m.allocatedPod(p, undefined);
    const grown = pod('p2', { requests: { cpu: '1500m', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } });
    const allocated = m.allocatedPod(grown, running);
    assert.deepEqual(allocated.spec?.containers[0]?.resources, small, 'the allocated requests and the admitted limits');
    assert.deepEqual(m.deferred(), ['p2']);
    assert.equal(m.decorate(grown, allocated, running, running).resize, 'Deferred');
    const roomy = createResizeManager({ statePath: join(dir, 'defer'), logger: new FakeLogger(), allocatable: () => ({ cpuMilli: 2000, memoryBytes: 4 * 1024 ** 3 }), activePods: () => [] });
    assert.equal(roomy.allocatedPod(grown, running), grown, 'the other pod left: accepted');
    assert.deepEqual(roomy.deferred(), []);
  });

  void it('finds a resize beyond the node infeasible, and leaves pods that are not running alone', () => {
    const m = manager(join(dir, 'infeasible'));
    m.allocatedPod(pod('p3', small), undefined);
    const huge = pod('p3', { requests: { cpu: '3', memory: '1Gi' }, limits: { cpu: '3', memory: '1Gi' } });
    assert.equal(m.allocatedPod(huge, { phase: 'Pending' }).spec?.containers[0]?.resources?.requests?.cpu, '500m', 'pending: not resized yet');
    assert.deepEqual(m.deferred(), []);
    const allocated = m.allocatedPod(huge, running);
    assert.equal(allocated.spec?.containers[0]?.resources?.requests?.cpu, '500m');
    assert.equal(m.decorate(huge, allocated, running, running).resize, 'Infeasible');
    m.removePod('p3');
    const again = manager(join(dir, 'infeasible'));
    assert.equal(again.allocatedPod(huge, running), huge, 'a removed pod starts over');
  });
});

void describe('the pod cgroup during a resize', () => {
  void it('keeps the pod cgroup at what a running container still has until the containers were lowered', () => {
    const m = manager(join(dir, 'cgroup'));
    const p = pod('p4', small);
    m.allocatedPod(p, undefined);
    m.applied('p4', 'c1', small);
    const lowered = pod('p4', { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '700m', memory: '512Mi' } });
    m.allocatedPod(lowered, running);
    const widened = m.podForCgroup(lowered, new Map([['main', 'c1']]));
    assert.deepEqual(widened.spec?.containers[0]?.resources?.limits, { cpu: '1', memory: '1Gi' }, 'the container still has 1 CPU and 1Gi');
    assert.equal(m.podForCgroup(lowered, new Map()), lowered, 'no running instance: the allocation itself');
    const raised = pod('p4', { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } });
    assert.equal(m.podForCgroup(raised, new Map([['main', 'c1']])), raised, 'a raise goes to the pod cgroup first');
  });
});
