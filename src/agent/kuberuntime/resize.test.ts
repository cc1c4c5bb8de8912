import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container, ResourceRequirements } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../api/pod/index.js';
import { FakeLogger } from '../logging/testing.js';
import type { UpdateContainerResourcesRequest } from '../runtime/cri/index.js';
import type { PodActions } from './compute-actions.js';
import type { RuntimeManagerOptions } from './options.js';
import { inPlaceResizeOf, updateContainers } from './resize.js';
import type { RuntimePodStatus } from './types.js';

const MI = 1024 * 1024;

function setup(usedBytes: number, have: ResourceRequirements, want: ResourceRequirements, memorySwap?: 'no-swap') {
  const calls: UpdateContainerResourcesRequest[] = [];
  const applied: ResourceRequirements[] = [];
  const logger = new FakeLogger();
  const runtime = {
    updateContainerResources: (r: UpdateContainerResourcesRequest) => { calls.push(r); return Promise.resolve(); },
    containerStats: () => Promise.resolve({ attributes: null, cpu: null, writableLayer: null, swap: null, memory: { timestamp: '0', usageBytes: { value: String(usedBytes) }, workingSetBytes: null, availableBytes: null, rssBytes: null, pageFaults: null, majorPageFaults: null } }),
  } as unknown as RuntimeManagerOptions['runtime'];
  const container: Container = { name: 'main', image: 'x', resources: want };
  const pod = { metadata: { uid: 'u', name: 'p', namespace: 'n' }, spec: { containers: [container] } } as NodePod;
  const status = { containers: [{ id: 'c1', name: 'main', state: 'running' }] } as unknown as RuntimePodStatus;
  const run = () => updateContainers(
    { capacity: () => ({ cpuMilli: 2000, memoryBytes: 1024 * MI }), resources: { cpuCFSQuota: true, cpuCFSQuotaPeriodUs: 100_000, ...(memorySwap === undefined ? {} : { memorySwap }) }, logger },
    { runtime, logger, inPlaceResize: { current: () => have, applied: (_u, _id, r) => { applied.push(r); } } },
    { pod, status, actions: { containersToUpdate: [container] } as unknown as PodActions },
  );
  return { calls, applied, logger, run };
}

void describe('updating running containers in place', () => {
  void it('gives the container its new resources and records them', async () => {
    const t = setup(10 * MI, { limits: { cpu: '200m', memory: '64Mi' } }, { limits: { cpu: '300m', memory: '128Mi' } });
    await t.run();
    assert.equal(t.calls.length, 1);
    const [call] = t.calls;
    assert.ok(call?.linux !== undefined);
    assert.equal(call.containerId, 'c1');
    assert.equal(call.linux.cpuQuota, 30000);
    assert.equal(call.linux.memoryLimitInBytes, 128 * MI);
    assert.deepEqual(t.applied, [{ limits: { cpu: '300m', memory: '128Mi' } }]);
  });

  void it('does not lower a memory limit below what the container uses, and does once it uses less', async () => {
    const busy = setup(100 * MI, { limits: { memory: '128Mi' } }, { limits: { memory: '64Mi' } });
    await busy.run();
    assert.equal(busy.calls.length, 0);
    assert.deepEqual(busy.applied, []);
    assert.ok(busy.logger.lines.some((l) => l.msg.includes('Not lowering')));
    const idle = setup(10 * MI, { limits: { memory: '128Mi' } }, { limits: { memory: '64Mi' } });
    await idle.run();
    assert.equal(idle.calls[0]?.linux?.memoryLimitInBytes, 64 * MI);
  });
});

void describe('the update on each cgroup version', () => {
  void it('v2 (no swap setting: the unified hierarchy has no memory+swap limit): shares, quota and period and the memory limit only, which runc writes as cpu.weight, cpu.max and memory.max', async () => {
    const t = setup(10 * MI, { requests: { cpu: '100m' }, limits: { cpu: '200m', memory: '64Mi' } }, { requests: { cpu: '250m' }, limits: { cpu: '500m', memory: '96Mi' } });
    await t.run();
    const linux = t.calls[0]?.linux;
    assert.deepEqual([linux?.cpuShares, linux?.cpuQuota, linux?.cpuPeriod, linux?.memoryLimitInBytes, linux?.memorySwapLimitInBytes], [256, 50_000, 100_000, 96 * MI, undefined]);
  });

  void it('v1 with swap accounting: memory+swap follows the new memory limit (no swap beyond it)', async () => {
    const t = setup(10 * MI, { limits: { memory: '64Mi' } }, { limits: { memory: '96Mi' } }, 'no-swap');
    await t.run();
    assert.deepEqual([t.calls[0]?.linux?.memoryLimitInBytes, t.calls[0]?.linux?.memorySwapLimitInBytes], [96 * MI, 96 * MI]);
  });
});

void describe('which pods are resized in place', () => {
  void it('API pods with the gate on; never static pods (as upstream), nothing with the gate off', () => {
    const resize = { current: () => ({}), applied: () => undefined };
    const apiPod = { metadata: { uid: 'u', name: 'p', namespace: 'n', annotations: { 'orch.io/config.source': 'api' } } } as NodePod;
    const staticPod = { metadata: { uid: 'u', name: 'p', namespace: 'n', annotations: { 'orch.io/config.source': 'file' } } } as NodePod;
    assert.notEqual(inPlaceResizeOf({ inPlaceResize: resize }, apiPod), undefined);
    assert.equal(inPlaceResizeOf({ inPlaceResize: resize }, staticPod), undefined);
    assert.equal(inPlaceResizeOf({}, apiPod), undefined);
  });
});
