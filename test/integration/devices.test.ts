/**
 * Devices through the real nodeagent binary on a real containerd, with the sample device plugin
 * (examples/device-plugin) as a child process offering three example.com/dev devices, each a
 * real character device node:
 *
 * - a Guaranteed pod asking for two devices gets them in its container: the plugin's env var,
 *   its read-only mount and the device nodes (writable, as /dev/null is); the plugin saw
 *   GetPreferredAllocation, Allocate and PreStartContainer;
 * - the pod resources API lists its devices and exclusive CPU, answers GetAllocatableResources
 *   and Get (gate on);
 * - a pod beyond the devices is refused with upstream's UnexpectedAdmissionError text;
 * - the agent restarted with the pods running keeps their containers and allocation (the
 *   checkpoint), the plugin registers again by itself, and no device is handed out twice;
 * - a corrupted checkpoint is refused with its path named and the agent starts without it.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { get } from 'node:http';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Metadata, credentials, type Client, type GrpcObject, type ServiceClientConstructor } from '@grpc/grpc-js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { grpcPackage, unaryCall } from '../../src/api/grpc-proto.js';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { startDevicePlugin, type DevicePluginProcess } from '../helpers/device-plugin.js';
import { NODE, podManifest, runningContainer, writeManifest } from '../helpers/pods.js';
import { removeTempDir } from '../helpers/tempdir.js';
import { waitFor, within } from '../helpers/wait.js';

const RESOURCE = 'example.com/dev';
let dir: string;
let rootDir: string;
let manifests: string;
let containerd: ContainerdInstance;
let cri: CriClient;
let readOnlyPort: number;
let agent: AgentProcess | undefined;
let plugin: DevicePluginProcess;

const args = (): string[] => [
  `--hostname-override=${NODE}`, `--read-only-port=${readOnlyPort}`, '--cpu-manager-policy=static', '--system-reserved=cpu=1',
  '--cpu-manager-reconcile-period=1s', '--feature-gates=NodeagentPodResourcesGet=true',
];

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
  assert.equal(r.exitCode, 0, `${command}: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
}

function devicePod(name: string, count: number, guaranteed = false): string {
  const resources = guaranteed
    ? { requests: { cpu: '1', memory: '64Mi', [RESOURCE]: String(count) }, limits: { cpu: '1', memory: '64Mi', [RESOURCE]: String(count) } }
    : { requests: { [RESOURCE]: String(count) }, limits: { [RESOURCE]: String(count) } };
  return podManifest({ name, image: containerd.images.busybox, hostNetwork: true, command: 'exec sleep 3600', extraContainer: { resources } });
}

function podResourcesClient(): Client {
  const pkg = grpcPackage('podresources-v1.proto')['v1'] as GrpcObject;
  const Lister = pkg['PodResourcesLister'] as ServiceClientConstructor;
  return new Lister(`unix://${join(rootDir, 'pod-resources', 'nodeagent.sock')}`, credentials.createInsecure());
}

before(async () => {
  assert.equal(process.getuid?.(), 0, 'the devices integration test must run as root (mknod, containerd)');
  dir = await mkdtemp(join(tmpdir(), 'devices-'));
  rootDir = join(dir, 'root');
  manifests = join(dir, 'manifests');
  const { mkdir } = await import('node:fs/promises');
  await mkdir(manifests, { recursive: true });
  containerd = await startContainerd();
  cri = connectCri({ runtimeEndpoint: containerd.endpoint, requestTimeoutMs: 30_000 });
  readOnlyPort = await freePort();
  agent = await startAgentProcess({ endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests, rootDir, args: args() });
  plugin = await startDevicePlugin({
    resource: RESOURCE, rootDir, devices: [{ id: 'dev-0' }, { id: 'dev-1' }, { id: 'dev-2' }], preStartRequired: true, getPreferredAllocationAvailable: true,
  });
  await plugin.waitFor('registered');
});

// Each step under its own deadline, so that a hang names the step; every step runs.
after(async () => {
  const failures: unknown[] = [];
  const step = async (what: string, run: () => Promise<unknown>): Promise<void> => {
    await within(what, run(), 90_000).catch((err: unknown) => { failures.push(err); });
  };
  await step('stopping the agent', async () => agent?.stop());
  await step('killing the device plugin', () => plugin.kill());
  cri.close();
  await step('stopping containerd', () => containerd.stop());
  await step('removing the test directory', () => removeTempDir(dir));
  if (failures.length > 0) throw new AggregateError(failures, `${failures.length} teardown step(s) failed`);
});

void describe('devices through the agent binary', () => {
  void it('gives a pod its devices: env, mount, device nodes; the pod resources API lists them with the exclusive CPU', async () => {
    await writeManifest(manifests, 'gpu.yaml', devicePod('gpu', 2, true));
    const allocate = await plugin.waitFor('allocate');
    assert.deepEqual(allocate['ids'], [['dev-1', 'dev-2']], 'the plugin preferred the highest IDs');
    assert.deepEqual((await plugin.waitFor('preferred'))['answer'], [['dev-2', 'dev-1']]);
    await plugin.waitFor('prestart');
    assert.equal(await exec('gpu', 'echo $EXAMPLE_DEVICES'), 'dev-1,dev-2');
    assert.equal(await exec('gpu', 'grep " /run/example-devices " /proc/mounts | grep -c "[ ,]ro[ ,]"'), '1', 'the mount is read-only');
    assert.equal(await exec('gpu', 'ls /dev/example-dev-1 /dev/example-dev-2 && echo hello > /dev/example-dev-1 && head -c 1 /dev/example-dev-2 | wc -c'), '/dev/example-dev-1\n/dev/example-dev-2\n0');
    assert.match(await exec('gpu', 'stat -c %t:%T /dev/example-dev-1'), /^1:3$/);

    const client = podResourcesClient();
    try {
      const list = await unaryCall<{ podResources: { name: string; containers: { devices: { resourceName: string; deviceIds: string[] }[]; cpuIds: number[] }[] }[] }>(
        client, 'List', {}, new Metadata(), 10_000);
      const gpu = list.podResources.find((p) => p.name === `gpu-${NODE}`)?.containers[0];
      assert.ok(gpu !== undefined);
      assert.deepEqual(gpu.devices.map((d) => [d.resourceName, ...d.deviceIds]).sort(), [[RESOURCE, 'dev-1'], [RESOURCE, 'dev-2']]);
      assert.deepEqual(gpu.cpuIds, [1], 'the exclusive CPU of the Guaranteed container');
      const allocatable = await unaryCall<{ devices: { deviceIds: string[] }[]; cpuIds: number[] }>(client, 'GetAllocatableResources', {}, new Metadata(), 10_000);
      assert.deepEqual(allocatable.devices.flatMap((d) => d.deviceIds).sort(), ['dev-0', 'dev-1', 'dev-2']);
      assert.deepEqual(allocatable.cpuIds, [1]);
      const one = await unaryCall<{ podResources: { name: string } }>(client, 'Get', { podName: `gpu-${NODE}`, podNamespace: 'default' }, new Metadata(), 10_000);
      assert.equal(one.podResources.name, `gpu-${NODE}`);
    } finally {
      client.close();
    }
  });

  void it('refuses a pod beyond the devices with upstream\'s reason', async () => {
    await writeManifest(manifests, 'one.yaml', devicePod('one', 1));
    assert.equal(await exec('one', 'echo $EXAMPLE_DEVICES'), 'dev-0');
    await writeManifest(manifests, 'third.yaml', devicePod('third', 1));
    const refused = await waitFor('the third pod refused', async () => {
      const p = await podNamed('third');
      return p?.status?.phase === 'Failed' ? p : undefined;
    }, { timeoutMs: 30_000 });
    assert.deepEqual([refused.status?.reason, refused.status?.message], [
      'UnexpectedAdmissionError',
      'Pod was rejected: Allocate failed due to requested number of devices unavailable for example.com/dev. Requested: 1, Available: 0, which is unexpected',
    ]);
  });

  void it('keeps running pods\' devices across an agent restart and hands out none twice', async () => {
    const before = [(await runningContainer(cri, 'gpu'))?.id, (await runningContainer(cri, 'one'))?.id];
    const checkpoint = JSON.parse(await readFile(join(rootDir, 'device-plugins', 'nodeagent_internal_checkpoint'), 'utf8')) as { Data: { PodDeviceEntries: { ResourceName: string; DeviceIDs: Record<string, string[]> }[] } };
    assert.deepEqual(checkpoint.Data.PodDeviceEntries.flatMap((e) => Object.values(e.DeviceIDs).flat()).sort(), ['dev-0', 'dev-1', 'dev-2']);
    const registrations = plugin.events.length;
    await agent?.stop();
    agent = await startAgentProcess({ endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests, rootDir, args: args() });
    await plugin.waitFor('registered', registrations, 30_000);
    await waitFor('the pods seen again', async () => (await podNamed('gpu'))?.status?.phase === 'Running' && (await podNamed('one'))?.status?.phase === 'Running', { timeoutMs: 30_000 });
    assert.deepEqual([(await runningContainer(cri, 'gpu'))?.id, (await runningContainer(cri, 'one'))?.id], before, 'the same containers');
    await writeManifest(manifests, 'fourth.yaml', devicePod('fourth', 1));
    const refused = await waitFor('the fourth pod refused', async () => {
      const p = await podNamed('fourth');
      return p?.status?.phase === 'Failed' ? p : undefined;
    }, { timeoutMs: 30_000 });
    assert.equal(refused.status?.reason, 'UnexpectedAdmissionError');
    assert.equal(plugin.events.filter((e) => e.event === 'allocate').length, 2, 'no Allocate since the restart');
  });

  void it('starts without a corrupted checkpoint, naming it', async () => {
    await agent?.stop();
    const file = join(rootDir, 'device-plugins', 'nodeagent_internal_checkpoint');
    await writeFile(file, (await readFile(file, 'utf8')).replace('dev-0', 'dev-9'));
    agent = await startAgentProcess({ endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests, rootDir, args: args() });
    await agent.waitForLog(new RegExp(`Continuing without the device manager checkpoint.*checkpoint ${file}: checksum \\d+ does not match the content`));
    assert.equal(await exec('gpu', 'echo $EXAMPLE_DEVICES'), 'dev-1,dev-2', 'the running pods are not touched');
  });
});
