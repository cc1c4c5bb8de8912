/**
 * Node resources through the real nodeagent binary on a real containerd, on this machine's
 * cgroup v1 controllers and real topology (2 CPUs, one NUMA node):
 *
 * - the pods cgroup (`<cgroupRoot>/orchpods`) holds capacity minus the reservations (cpu.shares,
 *   memory.limit_in_bytes, pids.max), and with qosReserved the burstable QoS cgroup's memory limit;
 * - the CPU manager's static policy gives a Guaranteed pod with `cpu: 1` CPU 1 (CPU 0 is reserved),
 *   seen from inside its container, while a Burstable pod runs on the rest; a second such pod is
 *   refused as upstream refuses it (UnexpectedAdmissionError); the memory manager's Static policy
 *   sets cpuset.mems of the Guaranteed container;
 * - an agent restart keeps both assignments (the state file) and refuses the second pod again;
 * - the agent runs in nodeagentCgroups and the test's containerd in --runtime-cgroups, both under
 *   the containerd instance's cgroup root, which containerd-down removes (the after hook checks).
 *
 * Only processes this test started are moved: its agent and its containerd.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { discoverCgroupHierarchies, type CgroupHierarchy } from '../../src/agent/cm/index.js';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { NODE, podManifest, runningContainer, writeManifest } from '../helpers/pods.js';
import { waitFor } from '../helpers/wait.js';

const MI = 1024 ** 2;
let containerd: ContainerdInstance;
let cri: CriClient;
let manifests: string;
let rootDir: string;
let readOnlyPort: number;
let hierarchies: CgroupHierarchy[] = [];
let agent: AgentProcess | undefined;

function args(): string[] {
  const root = containerd.cgroupRoot;
  return [
    `--hostname-override=${NODE}`, `--read-only-port=${readOnlyPort}`,
    '--cpu-manager-policy=static', '--cpu-manager-reconcile-period=1s',
    '--system-reserved=cpu=1,memory=256Mi', '--orch-reserved=memory=128Mi',
    // The memory manager's reservation must equal node allocatable's: 256Mi + 128Mi + the 100Mi hard eviction threshold.
    '--memory-manager-policy=Static', '--reserved-memory=0:memory=484Mi',
    '--feature-gates=QOSReserved=true', '--qos-reserved=memory=50%',
    `--nodeagent-cgroups=${root}/nodeagent`, `--runtime-cgroups=${root}/runtime`,
  ];
}

function fetchText(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(`http://127.0.0.1:${readOnlyPort}${path}`, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => { body += d.toString(); });
      res.on('end', () => { resolve(body); });
      res.on('error', reject);
    }).on('error', reject);
  });
}

async function podNamed(name: string): Promise<Pod | undefined> {
  const list = JSON.parse(await fetchText('/pods')) as { items: Pod[] };
  return list.items.find((p) => p.metadata?.name === `${name}-${NODE}`);
}

async function exec(podName: string, command: string): Promise<string> {
  const c = await waitFor(`a running container of ${podName}`, () => runningContainer(cri, podName), { timeoutMs: 60_000 });
  const r = await cri.execSync({ containerId: c.id, cmd: ['sh', '-c', command], timeout: 10 });
  assert.equal(r.exitCode, 0, r.stderr.toString());
  return r.stdout.toString().trim();
}

async function cgroupFile(controller: string, relative: string): Promise<string> {
  const h = hierarchies.find((x) => x.controllers.includes(controller));
  assert.ok(h !== undefined, `the test needs the cgroup v1 ${controller} controller`);
  return (await readFile(join(h.path, relative), 'utf8')).trim();
}

async function cgroupsOf(pid: number): Promise<string[]> {
  return (await readFile(`/proc/${pid}/cgroup`, 'utf8')).trim().split('\n').map((l) => l.slice(l.indexOf(':', l.indexOf(':') + 1) + 1));
}

async function kernelLimit(name: string): Promise<number> {
  return Number((await readFile(`/proc/sys/kernel/${name}`, 'utf8')).trim());
}

before(async () => {
  assert.equal(process.getuid?.(), 0, 'the resource manager integration test must run as root');
  hierarchies = await discoverCgroupHierarchies();
  containerd = await startContainerd();
  cri = connectCri({ runtimeEndpoint: containerd.endpoint, requestTimeoutMs: 30_000 });
  manifests = await mkdtemp(join(tmpdir(), 'nodeagent-manifests-'));
  rootDir = await mkdtemp(join(tmpdir(), 'nodeagent-root-'));
  readOnlyPort = await freePort();
});

after(async () => {
  await agent?.stop();
  cri.close();
  await containerd.stop();
  await rm(manifests, { recursive: true, force: true });
  await rm(rootDir, { recursive: true, force: true });
  for (const h of hierarchies) {
    const left = await stat(join(h.path, containerd.cgroupRoot)).then(() => true, () => false);
    assert.equal(left, false, `${h.path}${containerd.cgroupRoot} is left behind`);
  }
});

void describe('resource managers and node allocatable through the agent binary', () => {
  void it('enforces node allocatable, pins a Guaranteed pod to its own CPU, refuses a second, and moves the agent and runtime', async () => {
    agent = await startAgentProcess({ endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests, rootDir, args: args() });
    const root = containerd.cgroupRoot;
    const allocatable = totalmem() - 384 * MI;
    assert.equal(await cgroupFile('cpu', `${root}/orchpods/cpu.shares`), '1024', 'one of two CPUs');
    assert.equal(Number(await cgroupFile('memory', `${root}/orchpods/memory.limit_in_bytes`)), Math.floor(allocatable / 4096) * 4096);
    assert.equal(await cgroupFile('pids', `${root}/orchpods/pids.max`), String(Math.min(await kernelLimit('pid_max'), await kernelLimit('threads-max'))));

    const image = containerd.images.busybox;
    const gu = { requests: { cpu: '1', memory: '64Mi' }, limits: { cpu: '1', memory: '64Mi' } };
    await writeManifest(manifests, 'gu.yaml', podManifest({ name: 'gu', image, hostNetwork: true, command: 'exec sleep 3600', extraContainer: { resources: gu } }));
    await writeManifest(manifests, 'bu.yaml', podManifest({ name: 'bu', image, hostNetwork: true, command: 'exec sleep 3600', extraContainer: { resources: { requests: { cpu: '100m' } } } }));
    assert.equal(await exec('gu', 'grep Cpus_allowed_list /proc/self/status'), 'Cpus_allowed_list:\t1');
    await waitFor('the Burstable pod on the shared pool without CPU 1', async () => (await exec('bu', 'grep Cpus_allowed_list /proc/self/status')) === 'Cpus_allowed_list:\t0', { timeoutMs: 30_000 });
    const guContainer = await runningContainer(cri, 'gu');
    const spec = JSON.parse((await cri.containerStatus({ containerId: guContainer?.id ?? '', verbose: true })).info['info'] ?? '{}') as { runtimeSpec?: { linux?: { resources?: { cpu?: { cpus?: string; mems?: string } } } } };
    const cpuset = spec.runtimeSpec?.linux?.resources?.cpu;
    assert.deepEqual([cpuset?.cpus, cpuset?.mems], ['1', '0'], 'the CPU manager set cpuset.cpus, the memory manager cpuset.mems');
    assert.equal(Number(await cgroupFile('memory', `${root}/orchpods/burstable/memory.limit_in_bytes`)), Math.floor((allocatable - 32 * MI) / 4096) * 4096, 'qosReserved holds back half of the Guaranteed request');

    await writeManifest(manifests, 'gu2.yaml', podManifest({ name: 'gu2', image, hostNetwork: true, command: 'exec sleep 3600', extraContainer: { resources: gu } }));
    const refused = await waitFor('the second Guaranteed pod refused', async () => {
      const p = await podNamed('gu2');
      return p?.status?.phase === 'Failed' ? p : undefined;
    }, { timeoutMs: 30_000 });
    assert.deepEqual([refused.status?.reason, refused.status?.message],
      ['UnexpectedAdmissionError', 'Pod was rejected: Allocate failed due to not enough cpus available to satisfy request: requested=1, available=0, which is unexpected']);

    const pid = agent.process.pid ?? 0;
    for (const path of await cgroupsOf(pid)) assert.equal(path, `${root}/nodeagent`, 'the agent in nodeagentCgroups in every hierarchy');
    const runtimePid = Number((await readFile(join(containerd.dir, 'containerd.pid'), 'utf8')).trim());
    await waitFor('containerd in --runtime-cgroups', async () => (await cgroupsOf(runtimePid)).every((p) => p === `${root}/runtime`), { timeoutMs: 10_000 });
  });

  void it('keeps the assignments across an agent restart', async () => {
    const before = JSON.parse(await readFile(join(rootDir, 'cpu_manager_state'), 'utf8')) as { entries: Record<string, Record<string, string>> };
    const containers = [(await runningContainer(cri, 'gu'))?.id, (await runningContainer(cri, 'bu'))?.id];
    await agent?.stop();
    agent = await startAgentProcess({ endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests, rootDir, args: args() });
    await waitFor('the pods seen again', async () => (await podNamed('gu2'))?.status?.phase === 'Failed' && (await podNamed('gu'))?.status?.phase === 'Running', { timeoutMs: 30_000 });
    assert.equal(await exec('gu', 'grep Cpus_allowed_list /proc/self/status'), 'Cpus_allowed_list:\t1');
    assert.equal(await exec('bu', 'grep Cpus_allowed_list /proc/self/status'), 'Cpus_allowed_list:\t0');
    assert.deepEqual([(await runningContainer(cri, 'gu'))?.id, (await runningContainer(cri, 'bu'))?.id], containers, 'the same containers, not recreated');
    const after = JSON.parse(await readFile(join(rootDir, 'cpu_manager_state'), 'utf8')) as { entries: Record<string, Record<string, string>>; defaultCpuSet: string };
    assert.deepEqual(after.entries, before.entries);
    assert.deepEqual(Object.values(after.entries), [{ main: '1' }]);
    assert.equal(after.defaultCpuSet, '0');
    assert.equal((await podNamed('gu2'))?.status?.reason, 'UnexpectedAdmissionError');
  });

  void it('refuses at start a changed CPU manager policy and settings that need cgroup v2', async () => {
    await agent?.stop();
    agent = undefined;
    const withoutCpuPolicy = args().filter((a) => !a.startsWith('--cpu-manager-policy='));
    const changed = await startAgentProcess({ endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests, rootDir, noWait: true, args: [...withoutCpuPolicy, '--cpu-manager-policy=none'] });
    assert.equal(await changed.exited(), 1);
    assert.match(changed.logs(), /configured policy "none" differs from state checkpoint policy "static", please drain this node and delete the CPU manager checkpoint file/);
    const qos = await startAgentProcess({ endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests, rootDir, noWait: true, args: [...args(), '--feature-gates=MemoryQoS=true'] });
    assert.equal(await qos.exited(), 1);
    assert.match(qos.logs(), /featureGates\.MemoryQoS: sets memory\.min and memory\.high of pods and containers, which only cgroup v2 has; this node's memory controller is on cgroup v1/);
    // The running pods were not touched by the refused starts.
    assert.equal(await exec('gu', 'grep Cpus_allowed_list /proc/self/status'), 'Cpus_allowed_list:\t1');
  });
});
