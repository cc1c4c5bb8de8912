/**
 * Resources and QoS on real containers and cgroups: the QoS class in the status; the QoS
 * hierarchy on disk (pods root, burstable, besteffort, a cgroup per pod) in the cpu, memory
 * and pids hierarchies with the pod-level limits (cpu.shares, cpu.cfs_quota_us,
 * memory.limit_in_bytes, pids.max from podPidsLimit) and the QoS cgroups' shares; the
 * container's own limits as it sees them; OOM score adjustments by QoS (one warning where the
 * kernel refuses them); the systemd naming; pod cgroups removed when pods go.
 */
import assert from 'node:assert/strict';
import { readdir, readFile, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { realClock } from '../../src/api/clock.js';
import type { Container } from 'kubernetes-types/core/v1.js';
import { createPodCgroups } from '../../src/agent/cm/index.js';
import { hasSysResourceCapability } from '../../src/agent/kuberuntime/index.js';
import { LogRoot } from '../../src/agent/logging/index.js';
import { waitFor } from '../helpers/wait.js';
import { startHealthyNode, type HealthyNode } from './healthy-harness.js';
import type { NodePod } from '../../src/api/pod/index.js';

const SERVE = 'trap "exit 0" TERM; while true; do sleep 0.2; done';
const MiB = 1024 * 1024;
const CGROUP = '/sys/fs/cgroup';

async function exists(p: string): Promise<boolean> {
  return stat(p).then(() => true, () => false);
}

async function removeTree(dir: string): Promise<void> {
  if (!(await exists(dir))) return;
  for (const e of await readdir(dir, { withFileTypes: true })) if (e.isDirectory()) await removeTree(path.join(dir, e.name));
  await rmdir(dir);
}

void describe('resources and QoS cgroups on real containers', { timeout: 300_000 }, () => {
  let node: HealthyNode;
  let busybox = '';
  const serve = (name: string, resources?: Container['resources']): Container => ({ name, image: busybox, command: ['sh', '-c', SERVE], ...(resources === undefined ? {} : { resources }) });
  const pods: Record<'guaranteed' | 'burstable' | 'limited' | 'besteffort', NodePod> = {} as Record<'guaranteed' | 'burstable' | 'limited' | 'besteffort', NodePod>;
  const read = async (controller: string, relative: string, file: string) => (await readFile(path.join(CGROUP, controller, node.ctrd.cgroupRoot, relative, file), 'utf8')).trim();
  const podDir = (pod: NodePod, qos: string) => path.join('orchpods', qos, `pod${pod.metadata.uid}`);

  before(async () => {
    node = await startHealthyNode({ podPidsLimit: 100 });
    busybox = node.ctrd.images.busybox;
    pods.guaranteed = node.pod('guaranteed', { containers: [serve('app', { limits: { cpu: '500m', memory: '64Mi' } })] });
    pods.burstable = node.pod('burstable', {
      containers: [serve('a', { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } }), serve('b', { requests: { cpu: '50m' } })],
    });
    pods.limited = node.pod('limited', { containers: [serve('app', { requests: { cpu: '100m', memory: '16Mi' }, limits: { cpu: '300m', memory: '48Mi' } })] });
    pods.besteffort = node.pod('besteffort', { containers: [serve('app')] });
    for (const pod of Object.values(pods)) node.run(pod);
    for (const pod of Object.values(pods)) await node.waitStatus(pod, 'Running', (s) => s.phase === 'Running' && (s.containerStatuses ?? []).every((c) => c.ready));
  });
  after(async () => {
    await node.stop();
  });

  void it('the QoS class is in each pod status', () => {
    const classes = Object.values(pods).map((p) => node.statusOf(p)?.qosClass);
    assert.deepEqual(classes, ['Guaranteed', 'Burstable', 'Burstable', 'BestEffort']);
  });

  void it('the QoS hierarchy on disk, with the pod limits in every hierarchy and the QoS cgroups\' shares', async () => {
    const g = podDir(pods.guaranteed, '');
    assert.deepEqual([await read('cpu', g, 'cpu.shares'), await read('cpu', g, 'cpu.cfs_quota_us'), await read('cpu', g, 'cpu.cfs_period_us')], ['512', '50000', '100000']);
    assert.equal(await read('memory', g, 'memory.limit_in_bytes'), String(64 * MiB));
    const b = podDir(pods.burstable, 'burstable');
    assert.deepEqual([await read('cpu', b, 'cpu.shares'), await read('cpu', b, 'cpu.cfs_quota_us')], ['153', '-1'], 'not every container has a CPU limit: no quota');
    assert.ok(Number(await read('memory', b, 'memory.limit_in_bytes')) > 2 ** 60, 'not every container has a memory limit: none');
    const l = podDir(pods.limited, 'burstable');
    assert.deepEqual([await read('cpu', l, 'cpu.shares'), await read('cpu', l, 'cpu.cfs_quota_us'), await read('memory', l, 'memory.limit_in_bytes')], ['102', '30000', String(48 * MiB)]);
    const e = podDir(pods.besteffort, 'besteffort');
    assert.equal(await read('cpu', e, 'cpu.shares'), '2');
    for (const [pod, dir] of [[pods.guaranteed, g], [pods.burstable, b], [pods.limited, l], [pods.besteffort, e]] as const) {
      assert.equal(await read('pids', dir, 'pids.max'), '100', `pids.max of ${pod.metadata.name}`);
      for (const controller of ['cpu', 'memory', 'pids', 'cpuset', 'systemd']) {
        assert.ok(await exists(path.join(CGROUP, controller, node.ctrd.cgroupRoot, dir)), `${controller}: ${dir}`);
      }
    }
    assert.equal(await read('cpu', 'orchpods/burstable', 'cpu.shares'), '256', 'the burstable pods\' requests: 150m + 100m');
    assert.equal(await read('cpu', 'orchpods/besteffort', 'cpu.shares'), '2');
  });

  void it('each container sees its own CPU shares, quota and memory limit', async () => {
    const cat = async (pod: NodePod, container: string, file: string) => (await node.exec(pod, container, ['cat', file])).stdout.trim();
    assert.equal(await cat(pods.guaranteed, 'app', '/sys/fs/cgroup/memory/memory.limit_in_bytes'), String(64 * MiB));
    assert.equal(await cat(pods.guaranteed, 'app', '/sys/fs/cgroup/cpu/cpu.cfs_quota_us'), '50000');
    assert.equal(await cat(pods.guaranteed, 'app', '/sys/fs/cgroup/cpu/cpu.shares'), '512');
    assert.equal(await cat(pods.burstable, 'a', '/sys/fs/cgroup/cpu/cpu.cfs_quota_us'), '20000');
    assert.equal(await cat(pods.burstable, 'a', '/sys/fs/cgroup/memory/memory.limit_in_bytes'), String(64 * MiB));
    assert.equal(await cat(pods.burstable, 'b', '/sys/fs/cgroup/cpu/cpu.cfs_quota_us'), '-1');
    assert.equal(await cat(pods.burstable, 'b', '/sys/fs/cgroup/cpu/cpu.shares'), '51');
  });

  void it('OOM score adjustments by QoS (static pods too), with one clear warning where the kernel does not allow lowering them', async () => {
    const adj = async (pod: NodePod, container: string) => Number((await node.exec(pod, container, ['cat', '/proc/1/oom_score_adj'])).stdout.trim());
    assert.equal(await adj(pods.besteffort, 'app'), 1000);
    const burstable = await adj(pods.burstable, 'a');
    assert.ok(burstable > 900 && burstable < 1000, `burstable: ${burstable}`);
    // A static pod is critical but not node-critical (upstream IsNodeCriticalPod): its QoS decides.
    const fromFile = node.pod('static-besteffort', { containers: [serve('app')] });
    const staticPod: NodePod = { ...fromFile, metadata: { ...fromFile.metadata, annotations: { 'orch.io/config.source': 'file' } } };
    node.run(staticPod);
    await node.waitStatus(staticPod, 'Running', (s) => s.phase === 'Running');
    assert.equal(await adj(staticPod, 'app'), 1000, 'a best-effort static pod');
    node.remove(staticPod);
    const warnings = node.logs.filter((l) => l.includes('OOM score adjustments below 0 cannot be applied'));
    if (hasSysResourceCapability()) {
      assert.equal(await adj(pods.guaranteed, 'app'), -997);
      assert.equal(warnings.length, 0);
    } else {
      assert.ok((await adj(pods.guaranteed, 'app')) > -997, 'the runtime kept its own score');
      assert.equal(warnings.length, 1, warnings.join(''));
      const again = node.pod('guaranteed-2', { containers: [serve('app', { limits: { cpu: '100m', memory: '16Mi' } })] });
      node.run(again);
      await node.waitStatus(again, 'Running', (s) => s.phase === 'Running');
      assert.equal(node.logs.filter((l) => l.includes('OOM score adjustments below 0 cannot be applied')).length, 1, 'a single warning');
      node.remove(again);
    }
  });

  void it('the systemd driver names the same hierarchy as slices', async () => {
    const root = `hc${process.pid.toString(36)}`;
    const logger = new LogRoot({ clock: realClock, format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: () => undefined } }).logger('cm');
    const cgroups = createPodCgroups({ clock: realClock, cgroupRoot: `${root}.slice`, cgroupsPerQOS: true, cgroupDriver: 'systemd', logger, podPidsLimit: 50 });
    const pod = pods.burstable;
    const uid = pod.metadata.uid;
    try {
      assert.equal(await cgroups.ensure(pod), `${root}-orchpods-burstable-pod${uid.replace(/-/g, '_')}.slice`);
      const dir = path.join(CGROUP, 'pids', `${root}.slice`, `${root}-orchpods.slice`, `${root}-orchpods-burstable.slice`, `${root}-orchpods-burstable-pod${uid.replace(/-/g, '_')}.slice`);
      assert.equal((await readFile(path.join(dir, 'pids.max'), 'utf8')).trim(), '50');
      await cgroups.remove(uid);
      assert.ok(!(await exists(dir)));
    } finally {
      for (const controller of await readdir(CGROUP)) await removeTree(path.join(CGROUP, controller, `${root}.slice`));
    }
  });

  void it('pod cgroups are removed in every hierarchy when the pods go', async () => {
    const dirs = [podDir(pods.guaranteed, ''), podDir(pods.burstable, 'burstable'), podDir(pods.limited, 'burstable'), podDir(pods.besteffort, 'besteffort')];
    for (const pod of Object.values(pods)) node.remove(pod);
    // The agent removes a pod's cgroup in all hierarchies side by side, then updates the QoS
    // shares: the end state is waited for as a whole (some hierarchies, e.g. freezer, are not
    // among those looked at directly, but listPodUIDs reads them all).
    await waitFor('the pod cgroups gone from every hierarchy and the burstable shares back to 2', async () => {
      for (const controller of ['cpu', 'memory', 'pids', 'systemd', 'unified']) {
        for (const dir of dirs) if (await exists(path.join(CGROUP, controller, node.ctrd.cgroupRoot, dir))) return false;
      }
      const left = await node.cgroups.listPodUIDs();
      if (left.length > 0) throw new Error(`pod cgroups still listed: ${left.join(', ')}`);
      const shares = await read('cpu', 'orchpods/burstable', 'cpu.shares');
      if (shares !== '2') throw new Error(`burstable cpu.shares is ${shares}, not 2`);
      return true;
    }, { timeoutMs: 20_000 });
    assert.ok(await exists(path.join(CGROUP, 'cpu', node.ctrd.cgroupRoot, 'orchpods', 'burstable')), 'the QoS cgroups stay');
  });
});
