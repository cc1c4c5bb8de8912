/**
 * The container manager over recorded sysfs trees (1, 2 and 4 NUMA nodes), stand-in cgroup
 * hierarchies in a temporary directory, the FakeRuntime and the FakeClock.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { NodePod } from '../../api/pod/index.js';

import { OrchError } from '../../api/errors.js';
import { FakeClock } from '../../api/fake-clock.js';
import { runningContainerRefs, updateContainerCpuset } from '../kuberuntime/index.js';
import { FakeLogger } from '../logging/testing.js';
import { FakeRuntime } from '../runtime/cri/testing.js';
import { CM_CGROUP_V2_REQUIRED } from './host-cgroups.js';
import { createContainerManager, type ContainerManager, type ContainerManagerSettings } from './container-manager.js';
import { BURSTABLE, guaranteedPod, podWith } from './fixtures.js';
import { FOUR_NUMA_SYSFS, ONE_NUMA_SYSFS, TWO_NUMA_SYSFS, writeSysfsTree } from './machine/testdata/index.js';
import type { CgroupHierarchy } from './hierarchies.js';

let dir: string;
let fake: FakeRuntime;
let clock: FakeClock;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cm-manager-'));
  fake = new FakeRuntime();
  clock = new FakeClock();
});
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

function gates(...on: string[]): { enabled(name: string): boolean } {
  return { enabled: (name) => name === 'MemoryManager' || on.includes(name) };
}

function settings(extra: Partial<ContainerManagerSettings> = {}): ContainerManagerSettings {
  return {
    cgroupRoot: '/cmroot', cgroupsPerQOS: true, cgroupDriver: 'cgroupfs',
    enforceNodeAllocatable: ['pods'], systemReservedCgroup: '', orchReservedCgroup: '',
    reservation: { systemReserved: { cpu: '1', memory: '1Gi' }, orchReserved: {}, reservedSystemCPUs: '', evictionHard: {}, ignoreEviction: false },
    qosReserved: {}, cpuManagerPolicy: 'static', cpuManagerPolicyOptions: {}, cpuManagerReconcilePeriodMs: 10_000,
    memoryManagerPolicy: 'None', reservedMemory: [], topologyManagerPolicy: 'none', topologyManagerScope: 'container', topologyManagerPolicyOptions: {},
    nodeagentCgroups: '', systemCgroups: '', runtimeCgroups: '', runtimeSocket: '/run/none.sock',
    memorySwapBehavior: '', memoryThrottlingFactorSet: false, gates: gates(), rootDir: join(dir, 'root'), ...extra,
  };
}

async function manager(tree: Readonly<Record<string, string>>, s: ContainerManagerSettings, events: string[] = []): Promise<ContainerManager> {
  const sysRoot = await writeSysfsTree(tree);
  const procRoot = join(dir, 'proc');
  await mkdir(join(procRoot, 'sys/kernel'), { recursive: true });
  await writeFile(join(procRoot, 'sys/kernel/pid_max'), '32768\n');
  await writeFile(join(procRoot, 'sys/kernel/threads-max'), '4000\n');
  const hierarchies: CgroupHierarchy[] = [];
  for (const c of ['cpu', 'memory', 'pids']) {
    const pods = join(dir, 'cgroup', c, 'cmroot/orchpods');
    await mkdir(pods, { recursive: true });
    for (const f of { cpu: ['cpu.shares'], memory: ['memory.limit_in_bytes'], pids: ['pids.max'] }[c] ?? []) await writeFile(join(pods, f), '');
    hierarchies.push({ path: join(dir, 'cgroup', c), version: 1, controllers: [c] });
  }
  await mkdir(s.rootDir, { recursive: true });
  const cm = createContainerManager(s, {
    clock, logger: new FakeLogger(), hierarchies, sysRoot, procRoot,
    onNodeEvent: (type, reason, message) => { events.push(`${type} ${reason} ${message}`); },
    runtime: { runningContainers: () => runningContainerRefs(fake), updateCpuset: (id, cpus) => updateContainerCpuset(fake, id, cpus) },
  });
  try {
    await cm.prepare();
  } finally {
    await rm(sysRoot, { recursive: true, force: true });
  }
  return cm;
}

async function run(pod: NodePod): Promise<string> {
  fake.images.set('busybox', 'sha256:busybox');
  const sandboxConfig = { metadata: { name: pod.metadata.name, namespace: 'default', uid: pod.metadata.uid, attempt: 0 }, labels: { 'io.orch.pod.uid': pod.metadata.uid } };
  const sandbox = await fake.runPodSandbox({ config: sandboxConfig });
  const id = await fake.createContainer({
    podSandboxId: sandbox, sandboxConfig,
    config: { metadata: { name: 'c0', attempt: 0 }, image: { image: 'busybox' }, labels: { 'io.orch.pod.uid': pod.metadata.uid, 'io.orch.container.name': 'c0' } },
  });
  await fake.startContainer(id);
  return id;
}

void describe('the container manager', () => {
  void it('enforces node allocatable on the pods cgroup and hands out an exclusive CPU, refusing a second one as upstream', async () => {
    const events: string[] = [];
    const cm = await manager(ONE_NUMA_SYSFS, settings(), events);
    const active: NodePod[] = [];
    await cm.start({ activePods: () => active, sourcesReady: () => true });
    assert.equal(await readFile(join(dir, 'cgroup/cpu/cmroot/orchpods/cpu.shares'), 'utf8'), '1024', 'two CPUs less the one reserved');
    assert.equal(await readFile(join(dir, 'cgroup/memory/cmroot/orchpods/memory.limit_in_bytes'), 'utf8') !== '', true);
    assert.equal(await readFile(join(dir, 'cgroup/pids/cmroot/orchpods/pids.max'), 'utf8'), '4000');
    assert.deepEqual(events, ['Normal NodeAllocatableEnforced Updated Node Allocatable limit across pods']);

    const gu = guaranteedPod('gu', ['1']);
    const bu = podWith('bu', [BURSTABLE]);
    assert.deepEqual(await cm.admit(bu, []), { admit: true });
    assert.deepEqual(await cm.admit(gu, [bu]), { admit: true });
    active.push(bu, gu);
    assert.deepEqual(cm.cpuset(gu, { name: 'c0' }), { cpus: '1' });
    assert.deepEqual(cm.cpuset(bu, { name: 'c0' }), { cpus: '0' });
    assert.deepEqual(await cm.admit(guaranteedPod('gu2', ['1']), [bu, gu]), {
      admit: false, reason: 'UnexpectedAdmissionError',
      message: 'Allocate failed due to not enough cpus available to satisfy request: requested=1, available=0, which is unexpected',
    });

    // The Burstable container started before the exclusive allocation runs on both CPUs until the reconcile.
    const running = await run(bu);
    await clock.advance(10_000);
    assert.equal(fake.containers.get(running)?.resources?.cpusetCpus, '0');
    await cm.stop();
  });

  void it('keeps the assignment across a restart and releases it once the pod is gone and the sources are ready', async () => {
    const gu = guaranteedPod('gu', ['1']);
    const first = await manager(ONE_NUMA_SYSFS, settings());
    await first.start({ activePods: () => [gu], sourcesReady: () => true });
    await first.admit(gu, []);
    await first.stop();
    const again = await manager(ONE_NUMA_SYSFS, settings());
    let ready = false;
    const active: NodePod[] = [];
    await again.start({ activePods: () => active, sourcesReady: () => ready });
    assert.deepEqual(await again.admit(podWith('bu', [BURSTABLE]), []), { admit: true }, 'not swept before the sources are ready');
    assert.deepEqual(again.cpuset(gu, { name: 'c0' }), { cpus: '1' });
    ready = true;
    await clock.advance(10_000);
    assert.deepEqual(again.cpuset(gu, { name: 'c0' }), { cpus: '0-1' }, 'released: the pod is not active');
    await again.stop();
  });

  void it('refuses a pod that needs two NUMA nodes under single-numa-node (recorded 2-NUMA machine)', async () => {
    const cm = await manager(TWO_NUMA_SYSFS, settings({ topologyManagerPolicy: 'single-numa-node' }));
    await cm.start({ activePods: () => [], sourcesReady: () => false });
    assert.deepEqual(await cm.admit(guaranteedPod('wide', ['10']), []), { admit: false, reason: 'TopologyAffinityError', message: 'Resources cannot be allocated with Topology locality' });
    assert.deepEqual(cm.cpuset(guaranteedPod('wide', ['10']), { name: 'c0' }), { cpus: '0-15' }, 'nothing was kept for the refused pod');
    assert.deepEqual(await cm.admit(guaranteedPod('narrow', ['6']), []), { admit: true });
    assert.equal(cm.cpuset(guaranteedPod('narrow', ['6']), { name: 'c0' }).cpus, '1-3,9-11', 'on node 0, CPU 0 reserved');
    await cm.stop();
  });

  void it('scope pod refuses what scope container admits (two containers of 6 CPUs, 8 per node)', async () => {
    const pod = guaranteedPod('pair', ['6', '6']);
    const byPod = await manager(TWO_NUMA_SYSFS, settings({ topologyManagerPolicy: 'single-numa-node', topologyManagerScope: 'pod' }));
    await byPod.start({ activePods: () => [], sourcesReady: () => false });
    assert.equal((await byPod.admit(pod, [])).reason, 'TopologyAffinityError');
    await byPod.stop();
    await rm(join(dir, 'root'), { recursive: true });
    const byContainer = await manager(TWO_NUMA_SYSFS, settings({ topologyManagerPolicy: 'single-numa-node' }));
    await byContainer.start({ activePods: () => [], sourcesReady: () => false });
    assert.deepEqual(await byContainer.admit(pod, []), { admit: true });
    assert.deepEqual([byContainer.cpuset(pod, { name: 'c0' }).cpus, byContainer.cpuset(pod, { name: 'c1' }).cpus], ['1-3,9-11', '4-6,12-14']);
    await byContainer.stop();
  });

  void it('aligns CPUs and memory on one node of a 4-NUMA machine, and restricted refuses CPUs and memory it cannot align', async () => {
    const memory = { memoryManagerPolicy: 'Static', reservedMemory: [{ numaNode: 0, limits: { memory: '1Gi' } }] } as const;
    const cm = await manager(FOUR_NUMA_SYSFS, settings({ ...memory, topologyManagerPolicy: 'best-effort' }));
    await cm.start({ activePods: () => [], sourcesReady: () => false });
    const small = podWith('small', [{ requests: { cpu: '2', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } }]);
    assert.deepEqual(await cm.admit(small, []), { admit: true });
    assert.deepEqual(cm.cpuset(small, { name: 'c0' }), { cpus: '1,9', mems: '0' }, 'both on node 0: the whole core 1 (CPU 0 is reserved) and its memory');
    await cm.stop();
    await rm(join(dir, 'root'), { recursive: true });
    const restricted = await manager(FOUR_NUMA_SYSFS, settings({ ...memory, topologyManagerPolicy: 'restricted' }));
    await restricted.start({ activePods: () => [], sourcesReady: () => false });
    const wide = podWith('wide', [{ requests: { cpu: '10', memory: '1Gi' }, limits: { cpu: '10', memory: '1Gi' } }]);
    assert.deepEqual(await restricted.admit(wide, []), { admit: false, reason: 'TopologyAffinityError', message: 'Resources cannot be allocated with Topology locality' });
    await restricted.stop();
  });

  void it('refuses at prepare what needs cgroup v2 on this cgroup v1 layout', async () => {
    await assert.rejects(manager(ONE_NUMA_SYSFS, settings({ gates: gates('MemoryQoS') })),
      (err: unknown) => err instanceof OrchError && err.code === CM_CGROUP_V2_REQUIRED && /featureGates\.MemoryQoS/.test(err.message));
  });
});
