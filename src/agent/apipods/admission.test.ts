import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Node, Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../api/pod/index.js';
import { apiAdmitHandlers, fitsHostPorts, fitsResources, matchesNodeAffinity, podRequest, toleratesNoExecuteTaints } from './admission.js';

const node: Node = {
  metadata: { name: 'n1', labels: { 'orch.io/hostname': 'n1', disk: 'ssd', rank: '5' } },
  spec: { taints: [{ key: 'dedicated', value: 'db', effect: 'NoExecute' }, { key: 'soft', effect: 'NoSchedule' }] },
  status: { allocatable: { cpu: '2', memory: '1Gi', pods: '110' } },
};

function pod(name: string, spec: Partial<NonNullable<Pod['spec']>> = {}, requests?: Record<string, string>): NodePod {
  return {
    metadata: { name, namespace: 'default', uid: name },
    spec: { containers: [{ name: 'c', image: 'busybox', ...(requests === undefined ? {} : { resources: { requests } }) }], ...spec },
  };
}

void describe('admission of API pods', () => {
  void it('computes pod requests with init containers, sidecars and overhead', () => {
    const p = pod('a', {
      initContainers: [
        { name: 'side', image: 'x', restartPolicy: 'Always', resources: { requests: { cpu: '100m' } } },
        { name: 'init', image: 'x', resources: { requests: { cpu: '1' } } },
      ],
      overhead: { cpu: '10m' },
    }, { cpu: '250m' });
    assert.equal(podRequest(p, 'cpu'), 1100 + 10);
    assert.equal(podRequest(pod('b', {}, { memory: '64Mi' }), 'memory'), 64 * 1024 * 1024);
  });

  void it('refuses resources beyond the allocatable left, with upstream reason and message', () => {
    const admitted = [pod('a', {}, { cpu: '1500m' })];
    assert.deepEqual(fitsResources(pod('b', {}, { cpu: '500m' }), admitted, node), { admit: true });
    assert.deepEqual(fitsResources(pod('c', {}, { cpu: '600m' }), admitted, node), {
      admit: false, reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 600, used: 1500, capacity: 2000",
    });
    assert.equal(fitsResources(pod('d', {}, { memory: '2Gi' }), [], node).reason, 'OutOfmemory');
    const gpus: Node = { ...node, status: { allocatable: { ...node.status?.allocatable, 'example.com/gpu': '1' } } };
    assert.equal(fitsResources(pod('e', {}, { 'example.com/gpu': '2' }), [], gpus).reason, 'OutOfexample.com/gpu');
  });

  void it("does not count an extended resource the Node does not list, and counts a device resource at least as the devices pods hold", () => {
    assert.equal(fitsResources(pod('e', {}, { 'example.com/gpu': '1' }), [], node).admit, true, 'a cluster-level resource');
    const unhealthy: Node = { ...node, status: { allocatable: { ...node.status?.allocatable, 'example.com/dev': '0' } } };
    const holder = pod('h', {}, { 'example.com/dev': '2' });
    assert.equal(fitsResources(holder, [], unhealthy).reason, 'OutOfexample.com/dev');
    assert.equal(fitsResources(holder, [], unhealthy, new Map([['example.com/dev', 2]])).admit, true, 'its devices turned unhealthy after the device manager gave them');
    assert.equal(fitsResources(pod('x', {}, { 'example.com/dev': '1' }), [holder], unhealthy, new Map([['example.com/dev', 2]])).reason, 'OutOfexample.com/dev');
  });

  void it('refuses host ports another pod holds, by protocol and IP', () => {
    const web = (name: string, hostPort: number, extra: Record<string, unknown> = {}): NodePod =>
      pod(name, { containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 80, hostPort, ...extra }] }] });
    const admitted = [web('a', 8080)];
    assert.equal(fitsHostPorts(web('b', 8080), admitted).reason, 'NodePorts');
    assert.equal(fitsHostPorts(web('c', 8081), admitted).admit, true);
    assert.equal(fitsHostPorts(web('d', 8080, { protocol: 'UDP' }), admitted).admit, true);
    assert.equal(fitsHostPorts(web('e', 9090, { hostIP: '127.0.0.1' }), [web('f', 9090, { hostIP: '127.0.0.2' })]).admit, true);
  });

  void it('matches nodeSelector and required node affinity against the node labels', () => {
    assert.equal(matchesNodeAffinity(pod('a', { nodeSelector: { disk: 'ssd' } }), node).admit, true);
    assert.equal(matchesNodeAffinity(pod('b', { nodeSelector: { disk: 'hdd' } }), node).reason, 'NodeAffinity');
    const affinity = (operator: string, values?: string[]): NodePod => pod('c', {
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'rank', operator, ...(values === undefined ? {} : { values }) }] }] } } },
    });
    assert.equal(matchesNodeAffinity(affinity('Gt', ['4']), node).admit, true);
    assert.equal(matchesNodeAffinity(affinity('Lt', ['4']), node).admit, false);
    assert.equal(matchesNodeAffinity(affinity('In', ['5', '6']), node).admit, true);
    assert.equal(matchesNodeAffinity(affinity('DoesNotExist'), node).admit, false);
  });

  void it('refuses pods that do not tolerate NoExecute taints (NoSchedule ones do not matter)', () => {
    assert.equal(toleratesNoExecuteTaints(pod('a'), node).reason, 'TaintToleration');
    assert.equal(toleratesNoExecuteTaints(pod('b', { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db' }] }), node).admit, true);
    assert.equal(toleratesNoExecuteTaints(pod('c', { tolerations: [{ operator: 'Exists' }] }), node).admit, true);
    assert.equal(toleratesNoExecuteTaints(pod('d', { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web' }] }), node).admit, false);
  });

  void it('admits everything but host-port clashes while the node is not known', () => {
    const handlers = apiAdmitHandlers(() => undefined);
    const p = pod('a', { nodeSelector: { nothing: 'here' } }, { cpu: '100' });
    assert.ok(handlers.every((h) => h(p, []).admit));
    const known = apiAdmitHandlers(() => node);
    assert.ok(known.some((h) => !h(p, []).admit));
  });
});

void describe('admission with in-place resize', () => {
  void it('counts a pod at the larger of its requests and allocation, and at its allocation while its resize is infeasible', () => {
    const node = { metadata: { name: 'n1' }, spec: {}, status: { allocatable: { cpu: '2' } } };
    const resized = (resize: string | undefined): Pod => ({
      metadata: { name: 'r', uid: 'r' },
      spec: { containers: [{ name: 'main', resources: { requests: { cpu: '1500m' } } }] },
      status: { ...(resize === undefined ? {} : { resize }), containerStatuses: [{ name: 'main', image: 'x', imageID: '', ready: true, restartCount: 0, allocatedResources: { cpu: '500m' } }] },
    });
    const incoming: Pod = { metadata: { name: 'p', uid: 'p' }, spec: { containers: [{ name: 'main', resources: { requests: { cpu: '1' } } }] } };
    const gate = { inPlacePodVerticalScaling: true };
    assert.equal(fitsResources(incoming, [resized('Deferred')], node, undefined, gate).admit, false, 'a pending resize holds its new requests');
    assert.equal(fitsResources(incoming, [resized('Infeasible')], node, undefined, gate).admit, true, 'an infeasible one only what it was allocated');
    assert.equal(fitsResources(incoming, [resized('Infeasible')], node).admit, false, 'without the gate: the spec');
    const own = { ...gate, statusOf: (): PodStatus => ({ resize: 'Infeasible', containerStatuses: [{ name: 'main', image: 'x', imageID: '', ready: true, restartCount: 0, allocatedResources: { cpu: '500m' } }] }) };
    assert.equal(fitsResources(incoming, [resized(undefined)], node, undefined, own).admit, true, 'the agent\'s own status counts');
  });
});
