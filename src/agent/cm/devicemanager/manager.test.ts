import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Metadata, credentials, type GrpcObject, type ServiceClientConstructor } from '@grpc/grpc-js';
import { FakeClock } from '../../../api/fake-clock.js';
import { grpcPackage, unaryCall } from '../../../api/grpc-proto.js';
import type { NodePod } from '../../../api/pod/index.js';
import { FakeLogger } from '../../logging/testing.js';
import { maskOf } from '../topologymanager/index.js';
import { createDeviceManager, type DeviceManager } from './index.js';
import { FakeDevicePlugins } from './testing.js';

const RESOURCE = 'example.com/dev';
const ANY = { numaAffinity: undefined, preferred: false };
let dir = '';

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'devicemanager-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function pod(name: string, counts: readonly number[], init: readonly number[] = []): NodePod {
  const container = (prefix: string) => (n: number, i: number) => ({ name: `${prefix}${i}`, image: 'busybox', resources: { limits: { [RESOURCE]: String(n) }, requests: { [RESOURCE]: String(n) } } });
  return { metadata: { name, namespace: 'default', uid: `uid-${name}` }, spec: { containers: counts.map(container('c')), initContainers: init.map(container('i')) } };
}

interface Harness {
  readonly devices: DeviceManager;
  readonly plugins: FakeDevicePlugins;
  readonly clock: FakeClock;
  readonly logger: FakeLogger;
  readonly active: NodePod[];
  readonly dir: string;
  changes: number;
  ready: boolean;
}

async function harness(sub: string, options: { numaNodes?: number[]; running?: { podUID: string; name: string }[]; gates?: string[]; runtime?: string } = {}): Promise<Harness> {
  const pluginDir = path.join(dir, sub);
  const plugins = new FakeDevicePlugins();
  const clock = new FakeClock();
  const logger = new FakeLogger();
  const gates = new Set(options.gates ?? []);
  const devices = createDeviceManager({
    dir: pluginDir, clock, logger, gates: { enabled: (g) => gates.has(g) }, dial: plugins.dial,
    runtimeVersion: () => Promise.resolve({ name: 'containerd', version: options.runtime ?? 'v1.6.20' }),
  });
  const h: Harness = { devices, plugins, clock, logger, active: [], dir: pluginDir, changes: 0, ready: true };
  devices.node.onChange(() => { h.changes++; });
  await devices.hints.start({
    activePods: () => h.active, sourcesReady: () => h.ready, numaNodes: options.numaNodes ?? [0], running: options.running ?? [], affinity: () => ANY,
  });
  return h;
}

/** Calls Register on the agent's registration socket, as a plugin does. */
async function register(h: Harness, request: Record<string, unknown>): Promise<string | undefined> {
  const pkg = grpcPackage('deviceplugin-v1beta1.proto')['v1beta1'] as GrpcObject;
  const Registration = pkg['Registration'] as ServiceClientConstructor;
  const client = new Registration(`unix://${path.join(h.dir, 'nodeagent.sock')}`, credentials.createInsecure());
  try {
    await unaryCall(client, 'Register', { version: 'v1beta1', endpoint: 'dev.sock', resourceName: RESOURCE, ...request }, new Metadata(), 5_000);
    return undefined;
  } catch (err) {
    return (err as { details: string }).details;
  } finally {
    client.close();
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => { setImmediate(resolve); });
}

async function registered(h: Harness, devices: { id: string; health?: string; numa?: number[] }[]): Promise<ReturnType<FakeDevicePlugins['add']>> {
  const plugin = h.plugins.add(RESOURCE, path.join(h.dir, 'dev.sock'));
  assert.equal(await register(h, {}), undefined);
  plugin.send(devices);
  await flush();
  return plugin;
}

const capacityOf = (h: Harness): [number | undefined, number | undefined, readonly string[]] => {
  const c = h.devices.node.capacity();
  return [c.capacity.get(RESOURCE), c.allocatable.get(RESOURCE), c.removed];
};

void describe('device plugin registration', () => {
  void it('refuses a wrong version, a name outside the extended resources and a bad endpoint, each with its reason, and keeps nothing', async () => {
    const h = await harness('refusals');
    h.plugins.add(RESOURCE, path.join(h.dir, 'dev.sock'));
    assert.equal(await register(h, { version: 'v1alpha1' }), 'requested API version "v1alpha1" is not supported by nodeagent. Supported versions are ["v1beta1"]');
    assert.match(await register(h, { resourceName: 'orch.io/dev' }) ?? '', /^the ResourceName "orch.io\/dev" is invalid: it must not be in the orch.io namespace/);
    assert.match(await register(h, { resourceName: 'gpu' }) ?? '', /the ResourceName "gpu" is invalid: it must be a domain-prefixed name/);
    assert.match(await register(h, { resourceName: 'Example.com/dev' }) ?? '', /domain must be a lowercase DNS-1123 subdomain/);
    assert.match(await register(h, { endpoint: '../escape.sock' }) ?? '', /endpoint "..\/escape.sock" of example.com\/dev must be the name of the plugin's socket file/);
    assert.match(await register(h, { endpoint: 'nobody.sock' }) ?? '', /failed to dial device plugin example.com\/dev at .*nobody.sock: connection refused/);
    assert.deepEqual(capacityOf(h), [undefined, undefined, []]);
    await h.devices.hints.stop();
  });

  void it('reports capacity and allocatable from ListAndWatch and follows health, refusing a bad answer whole', async () => {
    const h = await harness('health', { numaNodes: [0, 1] });
    const plugin = await registered(h, [{ id: 'a' }, { id: 'b' }, { id: 'c', health: 'Unhealthy' }]);
    assert.deepEqual(capacityOf(h), [3, 2, []]);
    const before = h.changes;
    plugin.send([{ id: 'a' }, { id: 'b', health: 'Unhealthy' }, { id: 'c', health: 'Unhealthy' }]);
    await flush();
    assert.deepEqual(capacityOf(h), [3, 1, []]);
    assert.equal(h.changes, before + 1, 'the node status is told at once');

    plugin.sendRaw({ devices: [{ ID: '', health: 'Healthy' }, { ID: 'x'.repeat(64), health: 'Healthy' }, { ID: 'a', health: 'Good' }, { ID: 'a', health: 'Healthy' }] });
    plugin.sendRaw({ devices: [{ ID: 'a', health: 'Healthy', topology: { nodes: [{ ID: 7 }] } }] });
    plugin.sendRaw({ devices: [{ ID: 'a', health: 'Healthy', topology: { nodes: [{ ID: 7 }] } }] });
    await flush();
    assert.deepEqual(capacityOf(h), [3, 1, []], 'nothing changed');
    const refusals = h.logger.lines.filter((l) => l.msg.startsWith('ListAndWatch answer refused'));
    assert.equal(refusals.length, 2, 'a repeated refusal is not logged again');
    assert.match(String(refusals[0]?.fields['problems']), /device #0: ID is empty; device "x{64}": ID has 64 characters, at most 63 are allowed; device "a": health "Good" is neither Healthy nor Unhealthy; device "a": ID listed twice/);
    assert.match(String(refusals[1]?.fields['problems']), /device "a": NUMA node 7 is not one of this machine's NUMA nodes \(0,1\)/);
    await h.devices.hints.stop();
  });

  void it('turns the devices unhealthy when the stream ends, and removes the resource after 5 minutes without the plugin', async () => {
    const h = await harness('gone');
    const plugin = await registered(h, [{ id: 'a' }, { id: 'b' }]);
    plugin.stop();
    await flush();
    assert.deepEqual(capacityOf(h), [2, 0, []]);
    const changes = h.changes;
    await h.clock.advance(5 * 60_000 + 10);
    assert.equal(h.changes, changes + 1, 'the node status is told when the resource goes');
    assert.deepEqual(capacityOf(h), [undefined, undefined, [RESOURCE]]);
    const checkpoint = JSON.parse(await readFile(path.join(h.dir, 'nodeagent_internal_checkpoint'), 'utf8')) as { Data: { RegisteredDevices: object } };
    assert.deepEqual(checkpoint.Data.RegisteredDevices, {});
    await registered(h, [{ id: 'a' }]);
    assert.deepEqual(capacityOf(h), [1, 1, []], 'a plugin that comes back brings the resource back');
    await h.devices.hints.stop();
  });

  void it('takes a second registration of a resource in place of the first', async () => {
    const h = await harness('replace');
    const first = await registered(h, [{ id: 'a' }]);
    const second = h.plugins.add(RESOURCE, path.join(h.dir, 'dev2.sock'));
    assert.equal(await register(h, { endpoint: 'dev2.sock' }), undefined);
    await flush();
    assert.equal(first.closed, true);
    assert.deepEqual(capacityOf(h), [1, 1, []], 'the devices stay until the new plugin reports');
    second.send([{ id: 'x' }, { id: 'y' }]);
    await flush();
    assert.deepEqual(capacityOf(h), [2, 2, []]);
    await h.devices.hints.stop();
  });
});

void describe('device allocation', () => {
  void it('allocates in upstream order, reuses init containers\' devices, and refuses beyond the devices with upstream\'s text', async () => {
    const h = await harness('allocate');
    const plugin = await registered(h, [{ id: 'a' }, { id: 'b' }, { id: 'c' }]);
    const p1 = pod('p1', [2], [1]);
    h.active.push(p1);
    for (const c of [...p1.spec!.initContainers!, ...p1.spec!.containers]) await h.devices.hints.allocate(p1, c, ANY);
    assert.deepEqual(plugin.calls, ['Allocate a', 'Allocate a,b']);
    const options = await h.devices.containers.containerDevices(p1, p1.spec!.containers[0]!);
    assert.ok(options !== undefined);
    assert.deepEqual(options.envs, [{ name: 'DEVICES', value: 'a,b' }]);
    assert.deepEqual(options.devices.map((d) => d.containerPath), ['/dev/a', '/dev/b']);
    assert.deepEqual(options.mounts, [{ containerPath: '/opt/dev', hostPath: '/var/lib/dev', readOnly: true }]);
    assert.deepEqual(h.devices.node.allocated(), new Map([[RESOURCE, 2]]));

    const p2 = pod('p2', [2]);
    h.active.push(p2);
    await assert.rejects(h.devices.hints.allocate(p2, p2.spec!.containers[0]!, ANY), /requested number of devices unavailable for example.com\/dev. Requested: 2, Available: 1/);
    assert.deepEqual(h.devices.node.allocated(), new Map([[RESOURCE, 2]]), 'nothing kept of the refused allocation');
    h.active.splice(0);
    const p3 = pod('p3', [3]);
    h.active.push(p3);
    await h.devices.hints.allocate(p3, p3.spec!.containers[0]!, ANY);
    assert.equal(plugin.calls.at(-1), 'Allocate a,b,c', 'the devices of pods no longer active are free again');
    await h.devices.hints.stop();
  });

  void it('gives topology hints by NUMA node and lets the plugin choose among the aligned devices', async () => {
    const h = await harness('topology', { numaNodes: [0, 1] });
    const plugin = await registered(h, [{ id: 'n0a', numa: [0] }, { id: 'n0b', numa: [0] }, { id: 'n0c', numa: [0] }, { id: 'n1a', numa: [1] }]);
    plugin.options = { preStartRequired: false, getPreferredAllocationAvailable: true };
    assert.equal(await register(h, {}), undefined, 'registered again with the preferred allocation');
    plugin.send([{ id: 'n0a', numa: [0] }, { id: 'n0b', numa: [0] }, { id: 'n0c', numa: [0] }, { id: 'n1a', numa: [1] }]);
    await flush();
    plugin.preferred = () => ['n0c', 'n0b'];
    const p = pod('p', [2]);
    h.active.push(p);
    const hints = h.devices.hints.topologyHints(p, p.spec!.containers[0]!);
    assert.deepEqual(hints?.[RESOURCE], [
      { numaAffinity: maskOf(0), preferred: true }, { numaAffinity: maskOf(0, 1), preferred: false },
    ]);
    await h.devices.hints.allocate(p, p.spec!.containers[0]!, { numaAffinity: maskOf(0), preferred: true });
    assert.deepEqual(plugin.calls, ['GetPreferredAllocation n0a,n0b,n0c must= size=2', 'Allocate n0b,n0c']);
    assert.deepEqual(h.devices.podResources.devicesOf(p.metadata.uid, 'c0'), [
      { resourceName: RESOURCE, deviceId: 'n0b', numaNode: 0 }, { resourceName: RESOURCE, deviceId: 'n0c', numaNode: 0 },
    ]);
    const big = pod('big', [4]);
    assert.deepEqual(h.devices.hints.topologyHints(big, big.spec!.containers[0]!)?.[RESOURCE], [], 'not enough devices: no hint');
    await h.devices.hints.stop();
  });

  void it('keeps allocations across a restart from the checkpoint: running containers keep their devices, none is handed out twice', async () => {
    const first = await harness('restart');
    const plugin = await registered(first, [{ id: 'a' }, { id: 'b' }]);
    const p1 = pod('p1', [1]);
    first.active.push(p1);
    await first.devices.hints.allocate(p1, p1.spec!.containers[0]!, ANY);
    await first.devices.hints.stop();

    const again = await harness('restart', { running: [{ podUID: p1.metadata.uid, name: 'c0' }] });
    again.ready = false;
    assert.deepEqual(capacityOf(again), [0, 0, []], 'capacity 0 until the plugin registers again');
    assert.equal(again.devices.node.resetExtendedResources(), false);
    again.active.push(p1);
    await again.devices.hints.allocate(p1, p1.spec!.containers[0]!, ANY);
    assert.deepEqual(again.plugins.bySocket.size, 0, 'no plugin was asked: the running container keeps its device');
    const replugged = await registered(again, [{ id: 'a' }, { id: 'b' }]);
    again.ready = true;
    const p2 = pod('p2', [1]);
    again.active.push(p2);
    await again.devices.hints.allocate(p2, p2.spec!.containers[0]!, ANY);
    const held = [...again.devices.podResources.devicesOf(p1.metadata.uid, 'c0'), ...again.devices.podResources.devicesOf(p2.metadata.uid, 'c0')].map((d) => d.deviceId).sort();
    assert.deepEqual(held, ['a', 'b'], 'each device held once');
    assert.equal(replugged.calls.length, 1);
    assert.deepEqual(plugin.calls.length, 1);
    await again.devices.hints.stop();
  });

  void it('starts without a corrupted checkpoint, naming it, and zeroes the extended resources only without any checkpoint', async () => {
    const fresh = await harness('fresh');
    assert.equal(fresh.devices.node.resetExtendedResources(), true);
    await fresh.devices.hints.stop();
    const sub = path.join(dir, 'corrupt');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(sub, { recursive: true });
    await writeFile(path.join(sub, 'nodeagent_internal_checkpoint'), '{"Data":{"PodDeviceEntries":null,"RegisteredDevices":{}},"Checksum":1}');
    const h = await harness('corrupt');
    const line = h.logger.lines.find((l) => l.msg.startsWith('Continuing without the device manager checkpoint'));
    assert.ok(line !== undefined);
    assert.match(String(line.fields['err']), new RegExp(`checkpoint ${sub}/nodeagent_internal_checkpoint: checksum 1 does not match`));
    assert.equal(h.devices.node.resetExtendedResources(), false, 'a checkpoint was there');
    assert.ok(existsSync(path.join(sub, 'nodeagent.sock')), 'the registration socket is served');
    await h.devices.hints.stop();
  });

  void it('calls PreStartContainer when asked, and refuses CDI devices the runtime cannot take', async () => {
    const h = await harness('prestart', { gates: ['DevicePluginCDIDevices'] });
    const plugin = h.plugins.add(RESOURCE, path.join(h.dir, 'dev.sock'));
    plugin.options = { preStartRequired: true, getPreferredAllocationAvailable: false };
    assert.equal(await register(h, {}), undefined);
    plugin.send([{ id: 'a' }]);
    await flush();
    const p = pod('p', [1]);
    h.active.push(p);
    await h.devices.hints.allocate(p, p.spec!.containers[0]!, ANY);
    await h.devices.containers.containerDevices(p, p.spec!.containers[0]!);
    assert.deepEqual(plugin.calls, ['Allocate a', 'PreStartContainer a']);
    plugin.preStartError = 'device busy';
    await assert.rejects(h.devices.containers.containerDevices(p, p.spec!.containers[0]!), /device plugin PreStartContainer rpc failed with err: .*device busy/);
    await h.devices.hints.stop();
  });

  void it('passes CDI devices to a runtime that takes them, refuses them on containerd 1.6, and leaves them out with the gate off, saying so', async () => {
    const run = async (sub: string, gates: string[], runtime: string): Promise<{ h: Harness; result: Promise<unknown> }> => {
      const h = await harness(sub, { gates, runtime });
      const plugin = h.plugins.add(RESOURCE, path.join(h.dir, 'dev.sock'));
      plugin.cdiDevices = ['vendor.com/dev=a'];
      assert.equal(await register(h, {}), undefined);
      plugin.send([{ id: 'a' }]);
      await flush();
      const p = pod('p', [1]);
      h.active.push(p);
      await h.devices.hints.allocate(p, p.spec!.containers[0]!, ANY);
      return { h, result: h.devices.containers.containerDevices(p, p.spec!.containers[0]!) };
    };
    const old = await run('cdi-old', ['DevicePluginCDIDevices'], 'v1.6.20');
    await assert.rejects(old.result, /container c0 of pod default\/p is given the CDI devices vendor.com\/dev=a by its device plugin, but the container runtime containerd v1.6.20 does not support CDI/);
    await old.h.devices.hints.stop();
    const recent = await run('cdi-new', ['DevicePluginCDIDevices'], 'v1.7.2');
    assert.deepEqual((await recent.result as { cdiDevices: string[] }).cdiDevices, ['vendor.com/dev=a']);
    await recent.h.devices.hints.stop();
    const off = await run('cdi-off', [], 'v1.7.2');
    assert.deepEqual((await off.result as { cdiDevices: string[] }).cdiDevices, []);
    assert.ok(off.h.logger.lines.some((l) => l.level === 'warn' && /DevicePluginCDIDevices feature gate is off/.test(l.msg)));
    await off.h.devices.hints.stop();
  });
});
