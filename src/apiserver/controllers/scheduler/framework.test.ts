import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WireObject } from '../../registry/index.js';
import { balancedAllocationScore, filterNode, fitErrorMessage, leastAllocatedScore } from './framework.js';
import { NodeInfo } from './node-info.js';
import { DEFAULT_MEMORY_REQUEST, podInfo } from './pod-info.js';

function nodeInfo(name: string, extra: { labels?: Record<string, string>; spec?: WireObject; allocatable?: Record<string, string> } = {}): NodeInfo {
  const info = new NodeInfo(name);
  info.setNode({
    metadata: { name, labels: extra.labels ?? {} },
    spec: extra.spec ?? {},
    status: { allocatable: extra.allocatable ?? { cpu: '2', memory: '4Gi', pods: '3' } },
  });
  return info;
}

function pod(name: string, spec: WireObject = {}, requests?: Record<string, string>): ReturnType<typeof podInfo> {
  return podInfo({
    metadata: { name, namespace: 'default', creationTimestamp: '2024-01-02T03:04:05Z' },
    spec: { containers: [{ name: 'c', image: 'busybox', ...(requests === undefined ? {} : { resources: { requests } }) }], ...spec },
  });
}

const reasons = (p: ReturnType<typeof podInfo>, n: NodeInfo): readonly string[] | undefined => filterNode(p, n)?.reasons;

void describe('the scheduler filters', () => {
  void it('node selector and required node affinity', () => {
    const ssd = nodeInfo('a', { labels: { disk: 'ssd', zone: 'z1' } });
    assert.equal(reasons(pod('p', { nodeSelector: { disk: 'ssd' } }), ssd), undefined);
    assert.deepEqual(reasons(pod('p', { nodeSelector: { disk: 'hdd' } }), ssd), ["node(s) didn't match Pod's node affinity/selector"]);
    const affinity = (op: string, values: string[]): WireObject => ({
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: op, values }] }] } } },
    });
    assert.equal(reasons(pod('p', affinity('In', ['z1', 'z2'])), ssd), undefined);
    assert.equal(filterNode(pod('p', affinity('NotIn', ['z1'])), ssd)?.unresolvable, true);
  });

  void it('taints of effect NoSchedule and NoExecute unless tolerated; PreferNoSchedule never filters', () => {
    const tainted = nodeInfo('t', { spec: { taints: [{ key: 'gpu', value: 'yes', effect: 'NoExecute' }, { key: 'soft', effect: 'PreferNoSchedule' }] } });
    assert.deepEqual(reasons(pod('p'), tainted), ['node(s) had untolerated taint {gpu: yes}']);
    assert.equal(reasons(pod('p', { tolerations: [{ key: 'gpu', operator: 'Equal', value: 'yes', effect: 'NoExecute' }] }), tainted), undefined);
    assert.equal(reasons(pod('p', { tolerations: [{ operator: 'Exists' }] }), tainted), undefined);
    assert.deepEqual(reasons(pod('p', { tolerations: [{ key: 'gpu', operator: 'Equal', value: 'no' }] }), tainted), ['node(s) had untolerated taint {gpu: yes}']);
    const unreachable = nodeInfo('u', { spec: { taints: [{ key: 'node.orch.io/unreachable', effect: 'NoSchedule' }] } });
    assert.deepEqual(reasons(pod('p'), unreachable), ['node(s) had untolerated taint {node.orch.io/unreachable: }']);
  });

  void it('a cordoned node, unless the pod tolerates the unschedulable taint; a pod naming another node', () => {
    const cordoned = nodeInfo('c', { spec: { unschedulable: true } });
    assert.deepEqual(reasons(pod('p'), cordoned), ['node(s) were unschedulable']);
    assert.equal(reasons(pod('p', { tolerations: [{ key: 'node.orch.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] }), cordoned), undefined);
    assert.deepEqual(reasons(pod('p', { nodeName: 'elsewhere' }), nodeInfo('n')), ["node(s) didn't match the requested node name"]);
  });

  void it('resources against allocatable minus bound pods, the pod count, and host ports', () => {
    const n = nodeInfo('n');
    n.addPod(pod('bound', { containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 80, hostPort: 8080 }], resources: { requests: { cpu: '1500m' } } }] }));
    assert.equal(reasons(pod('fits', {}, { cpu: '500m' }), n), undefined);
    assert.deepEqual(reasons(pod('big', {}, { cpu: '600m', memory: '5Gi', 'example.com/gpu': '1' }), n), ['Insufficient cpu', 'Insufficient memory', 'Insufficient example.com/gpu']);
    // cpu, memory, ephemeral-storage, then the others by name, whatever the order of the requests.
    assert.deepEqual(reasons(pod('many', {}, { 'example.com/b': '1', 'ephemeral-storage': '1Pi', 'example.com/a': '1', memory: '5Gi', cpu: '4' }), n),
      ['Insufficient cpu', 'Insufficient memory', 'Insufficient ephemeral-storage', 'Insufficient example.com/a', 'Insufficient example.com/b']);
    assert.equal(filterNode(pod('big', {}, { cpu: '4' }), n)?.unresolvable, false);
    const port = pod('port', { containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 80, hostPort: 8080 }] }] });
    assert.deepEqual(reasons(port, n), ["node(s) didn't have free ports for the requested pod ports"]);
    n.addPod(pod('two'));
    n.addPod(pod('three'));
    assert.deepEqual(reasons(pod('four'), n), ['Too many pods']);
    n.removePod('default/three');
    assert.equal(reasons(pod('four'), n), undefined);
  });

  void it('extended resources (device plugins) against allocatable minus what bound pods hold', () => {
    const n = nodeInfo('d', { allocatable: { cpu: '2', memory: '4Gi', pods: '10', 'example.com/dev': '2' } });
    n.addPod(pod('holder', {}, { 'example.com/dev': '1' }));
    assert.equal(reasons(pod('one', {}, { 'example.com/dev': '1' }), n), undefined);
    assert.deepEqual(reasons(pod('two', {}, { 'example.com/dev': '2' }), n), ['Insufficient example.com/dev']);
    n.removePod('default/holder');
    assert.equal(reasons(pod('two', {}, { 'example.com/dev': '2' }), n), undefined);
  });

  void it('falls back to the capacity when a node gives no allocatable', () => {
    const info = new NodeInfo('cap');
    info.setNode({ metadata: { name: 'cap' }, status: { capacity: { cpu: '2', memory: '1Gi', pods: '10' } } });
    assert.equal(reasons(pod('p', {}, { cpu: '1' }), info), undefined);
  });
});

void describe('the scheduler with InPlacePodVerticalScaling', () => {
  /** A bound pod of two containers: `a` resized (spec `spec`, allocated `allocated`), `b` with 100m and no memory request. */
  function resized(spec: Record<string, string>, allocated: Record<string, string>, resize?: string): WireObject {
    return {
      metadata: { name: 'r', namespace: 'default' },
      spec: { nodeName: 'n', containers: [{ name: 'a', image: 'x', resources: { requests: spec } }, { name: 'b', image: 'x', resources: { requests: { cpu: '100m' } } }] },
      status: {
        phase: 'Running', ...(resize === undefined ? {} : { resize }),
        containerStatuses: [{ name: 'a', allocatedResources: allocated }, { name: 'b', allocatedResources: { cpu: '100m' } }],
      },
    };
  }
  const on = { inPlacePodVerticalScaling: true };

  void it('counts each container at the larger of its requests and allocatedResources, per resource', () => {
    // A resize up not yet applied (cpu) and one down already allocated (memory): the larger of each.
    const info = podInfo(resized({ cpu: '1500m', memory: '256Mi' }, { cpu: '500m', memory: '1Gi' }), on);
    assert.deepEqual([...info.requests], [['cpu', 1600], ['memory', 1024 ** 3]]);
    // Scores count the same amounts; `b` requests no memory, so it counts the default.
    assert.equal(info.nonZeroCpu, 1600);
    assert.equal(info.nonZeroMemory, 1024 ** 3 + DEFAULT_MEMORY_REQUEST);
    // A resource only the allocation names counts too.
    assert.deepEqual([...podInfo(resized({ cpu: '1' }, { cpu: '1', 'example.com/dev': '1' }), on).requests], [['cpu', 1100], ['example.com/dev', 1]]);
  });

  void it('counts only the allocation while the resize is Infeasible, and only the spec with the gate off', () => {
    const infeasible = resized({ cpu: '64' }, { cpu: '500m' }, 'Infeasible');
    assert.equal(podInfo(infeasible, on).requests.get('cpu'), 600);
    assert.equal(podInfo(infeasible).requests.get('cpu'), 64_100);
    assert.equal(podInfo(resized({ cpu: '200m' }, { cpu: '1' })).requests.get('cpu'), 300);
  });

  void it('a pending pod has no allocation: its requests', () => {
    assert.equal(podInfo(pod('p', {}, { cpu: '250m' }).object, on).requests.get('cpu'), 250);
  });

  void it('a node is full while a bound pod holds its allocation, whatever its spec asks now', () => {
    const n = nodeInfo('n');
    n.addPod(podInfo(resized({ cpu: '500m' }, { cpu: '1500m' }, 'InProgress'), on));
    assert.deepEqual(reasons(pod('p', {}, { cpu: '500m' }), n), ['Insufficient cpu']);
    n.addPod(podInfo(resized({ cpu: '500m' }, { cpu: '500m' }), on));
    assert.equal(reasons(pod('p', {}, { cpu: '500m' }), n), undefined);
  });
});

void describe('the scheduler scores and message', () => {
  void it('least allocated prefers free nodes; balanced allocation prefers even use of cpu and memory', () => {
    const empty = nodeInfo('e', { allocatable: { cpu: '4', memory: '4Gi', pods: '110' } });
    const half = nodeInfo('h', { allocatable: { cpu: '4', memory: '4Gi', pods: '110' } });
    half.addPod(pod('x', {}, { cpu: '2', memory: '2Gi' }));
    const p = pod('p', {}, { cpu: '1', memory: '1Gi' });
    assert.ok(leastAllocatedScore(p, empty) > leastAllocatedScore(p, half));
    assert.equal(balancedAllocationScore(p, half), 100);
    const skewed = nodeInfo('s', { allocatable: { cpu: '4', memory: '4Gi', pods: '110' } });
    skewed.addPod(pod('y', {}, { cpu: '3' }));
    assert.ok(balancedAllocationScore(p, skewed) < 100);
  });

  void it('counts reasons over the nodes, sorted as upstream; preemptionPolicy Never has its own ending', () => {
    const p = pod('p');
    const failures = [
      { reasons: ['Insufficient cpu', 'Insufficient memory'], unresolvable: false },
      { reasons: ['Insufficient cpu'], unresolvable: false },
      { reasons: ['node(s) were unschedulable'], unresolvable: true },
    ];
    assert.equal(fitErrorMessage(p, 3, failures),
      '0/3 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable, 2 Insufficient cpu. '
      + 'preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..');
    assert.equal(fitErrorMessage(pod('n', { preemptionPolicy: 'Never' }), 1, [failures[2] ?? failures[0]!]),
      '0/1 nodes are available: 1 node(s) were unschedulable. preemption: not eligible due to preemptionPolicy=Never..');
  });
});
