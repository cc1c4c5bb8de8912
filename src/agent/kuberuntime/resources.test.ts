import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { containerResources, isCriticalPod, isNodeCriticalPod, milliCpuToQuota, milliCpuToShares, oomScoreAdjust } from './resources.js';

const GiB = 1024 ** 3;

function pod(containers: Container[], extra: Partial<Pod> = {}): Pod {
  return { metadata: { name: 'p', namespace: 'n', uid: 'u' }, spec: { containers }, ...extra };
}

void describe('CPU shares and quota', () => {
  void it('shares = milli × 1024 / 1000 within [2, 262144]', () => {
    assert.equal(milliCpuToShares(0), 2);
    assert.equal(milliCpuToShares(1), 2);
    assert.equal(milliCpuToShares(2), 2);
    assert.equal(milliCpuToShares(100), 102);
    assert.equal(milliCpuToShares(250), 256);
    assert.equal(milliCpuToShares(1000), 1024);
    assert.equal(milliCpuToShares(1_000_000), 262_144);
  });

  void it('quota = milli × period / 1000, at least 1000 µs, 0 without a limit', () => {
    assert.equal(milliCpuToQuota(0, 100_000), 0);
    assert.equal(milliCpuToQuota(5, 100_000), 1000);
    assert.equal(milliCpuToQuota(10, 100_000), 1000);
    assert.equal(milliCpuToQuota(250, 100_000), 25_000);
    assert.equal(milliCpuToQuota(1500, 100_000), 150_000);
    assert.equal(milliCpuToQuota(500, 50_000), 25_000);
  });
});

void describe('oomScoreAdjust', () => {
  const burst = (memory: string): Container => ({ name: 'a', resources: { requests: { memory } } });
  void it('guaranteed -997, best-effort 1000, burstable scaled by the request within [3, 999]', () => {
    const g: Container = { name: 'a', resources: { limits: { cpu: '1', memory: '1Gi' } } };
    assert.equal(oomScoreAdjust(pod([g]), g, 4 * GiB), -997);
    assert.equal(oomScoreAdjust(pod([{ name: 'a' }]), { name: 'a' }, 4 * GiB), 1000);
    assert.equal(oomScoreAdjust(pod([burst('1Gi')]), burst('1Gi'), 4 * GiB), 750);
    assert.equal(oomScoreAdjust(pod([burst('400Mi')]), burst('400Mi'), 4 * GiB), 903);
    assert.equal(oomScoreAdjust(pod([burst('4Gi')]), burst('4Gi'), 4 * GiB), 3, 'floor: 1000 + (-997)');
    assert.equal(oomScoreAdjust(pod([burst('8Gi')]), burst('8Gi'), 4 * GiB), 3);
    assert.equal(oomScoreAdjust(pod([burst('1')]), burst('1'), 4 * GiB), 999, 'never the best-effort score');
  });

  void it('critical pods are static, mirror and system-priority ones', () => {
    const c: Container = { name: 'a' };
    assert.ok(isCriticalPod(pod([c], { metadata: { name: 'p', annotations: { 'orch.io/config.source': 'file' } } })));
    assert.ok(!isCriticalPod(pod([c], { metadata: { name: 'p', annotations: { 'orch.io/config.source': 'api' } } })));
    assert.ok(isCriticalPod(pod([c], { metadata: { name: 'p', annotations: { 'orch.io/config.mirror': 'x' } } })));
    assert.ok(isCriticalPod({ spec: { containers: [c], priority: 2_000_000_000 } }));
  });

  void it('only node-critical pods (critical and of class system-node-critical) get the guaranteed score whatever their QoS', () => {
    const c: Container = { name: 'a' };
    const fromFile = { name: 'p', annotations: { 'orch.io/config.source': 'file' } };
    const staticPod = pod([c], { metadata: fromFile });
    assert.equal(oomScoreAdjust(staticPod, c, GiB), 1000, 'a best-effort static pod stays best-effort');
    assert.ok(!isNodeCriticalPod(staticPod));
    const nodeCritical = pod([c], { metadata: fromFile, spec: { containers: [c], priorityClassName: 'system-node-critical' } });
    assert.ok(isNodeCriticalPod(nodeCritical));
    assert.equal(oomScoreAdjust(nodeCritical, c, GiB), -997);
    const apiPod = pod([c], { metadata: { name: 'p', annotations: { 'orch.io/config.source': 'api' } }, spec: { containers: [c], priorityClassName: 'system-node-critical' } });
    assert.ok(!isNodeCriticalPod(apiPod), 'the class alone does not make an API pod critical');
    assert.equal(oomScoreAdjust(apiPod, c, GiB), 1000);
    const bySystemPriority = { spec: { containers: [c], priority: 2_000_001_000, priorityClassName: 'system-node-critical' } };
    assert.equal(oomScoreAdjust(bySystemPriority, c, GiB), -997);
  });
});

void describe('containerResources', () => {
  const settings = { cpuCFSQuota: true, cpuCFSQuotaPeriodUs: 100_000, memoryCapacityBytes: 4 * GiB };
  void it('converts requests and limits', () => {
    const c: Container = { name: 'a', resources: { requests: { cpu: '250m', memory: '64Mi' }, limits: { cpu: '500m', memory: '128Mi' } } };
    assert.deepEqual(containerResources(pod([c]), c, settings), {
      cpuShares: 256, cpuQuota: 50_000, cpuPeriod: 100_000, memoryLimitInBytes: 128 * 1024 * 1024, oomScoreAdj: 1000 - Math.floor((1000 * 64 * 1024 * 1024) / (4 * GiB)),
    });
  });

  void it('takes shares from the limit when only a limit is set; no quota without cpuCFSQuota or a limit', () => {
    const c: Container = { name: 'a', resources: { limits: { cpu: '2', memory: '1Gi' } } };
    assert.deepEqual(containerResources(pod([c]), c, { ...settings, cpuCFSQuota: false }), { cpuShares: 2048, memoryLimitInBytes: GiB, oomScoreAdj: -997 });
    assert.deepEqual(containerResources(pod([{ name: 'a' }]), { name: 'a' }, settings), { cpuShares: 2, oomScoreAdj: 1000 });
  });

  void it('sets memory+swap on a cgroup v1 node: the memory limit (no swap), or -1 with UnlimitedSwap', () => {
    const c: Container = { name: 'a', resources: { limits: { memory: '1Gi' } } };
    assert.equal(containerResources(pod([c]), c, { ...settings, memorySwap: 'no-swap' }).memorySwapLimitInBytes, GiB);
    assert.equal(containerResources(pod([{ name: 'a' }]), { name: 'a' }, { ...settings, memorySwap: 'no-swap' }).memorySwapLimitInBytes, undefined, 'no memory limit: nothing to match');
    assert.equal(containerResources(pod([c]), c, { ...settings, memorySwap: 'unlimited' }).memorySwapLimitInBytes, -1);
    assert.equal(containerResources(pod([c]), c, settings).memorySwapLimitInBytes, undefined);
  });
});
