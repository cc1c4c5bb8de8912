/**
 * Devices: (1) the time from a device plugin's ListAndWatch health change to the Node's
 * allocatable in the API server, next to a raw GET + PATCH of the Node's status from this
 * process (the write the agent makes), p50 of 20 each; (2) the device manager's CPU per
 * Allocate (topology hints, the choice of devices, the plugin's Allocate over gRPC, the
 * checkpoint written), next to the raw Allocate call to the same plugin, medians.
 *
 * (1) runs the built agent (API-server mode, SQLite orch-apiserver, one containerd) and the
 * sample plugin (examples/device-plugin) as child processes; a health change is a command to the
 * plugin, its arrival a watch event of the Node. (2) runs the device manager in this process
 * (its CPU is this process's, grpc-js included) with the sample plugin as a child process on its
 * socket. `--quick`: 5 changes, 20 allocations.
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Metadata, credentials, type GrpcObject, type ServiceClientConstructor } from '@grpc/grpc-js';
import type { Node } from 'kubernetes-types/core/v1.js';
import { realClock } from '../src/api/clock.js';
import { grpcPackage, unaryCall } from '../src/api/grpc-proto.js';
import type { NodePod } from '../src/api/pod/index.js';
import { createDeviceManager } from '../src/agent/cm/index.js';
import { LogRoot } from '../src/agent/logging/index.js';
import { startAgentProcess } from '../test/helpers/agent.js';
import { startApiServer } from '../test/helpers/apiserver.js';
import { freePort, startContainerd } from '../test/helpers/containerd.js';
import { startDevicePlugin } from '../test/helpers/device-plugin.js';
import { removeTempDir } from '../test/helpers/tempdir.js';
import { waitFor } from '../test/helpers/wait.js';
import { withSteal } from './steal.js';
import { exitOnSignals, formatTable, isMain, percentile, type Row } from './table.js';

const RESOURCE = 'example.com/dev';
const NODE = 'bench-devices';

export interface DevicesBenchResult {
  readonly changes: number;
  /** ms: health change → the Node's allocatable in the API server. */
  readonly healthP50: number;
  /** ms: GET + PATCH of the Node's status from this process. */
  readonly patchP50: number;
  readonly allocations: number;
  /** ms of CPU: the device manager's allocation of one container's device. */
  readonly allocateCpuMs: number;
  /** ms of CPU: the raw Allocate call. */
  readonly rawCpuMs: number;
  readonly steal: number;
}

async function healthLatency(changes: number, print: (l: string) => void): Promise<{ healthP50: number; patchP50: number }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'na-bench-devices-'));
  const ctrd = await startContainerd();
  const server = await startApiServer({ storage: 'sqlite' });
  const rootDir = path.join(dir, 'root');
  const agent = await startAgentProcess({
    endpoint: ctrd.endpoint, cgroupRoot: ctrd.cgroupRoot, rootDir,
    args: [`--hostname-override=${NODE}`, '--node-ip=127.0.0.1', `--port=${await freePort()}`, `--orchconfig=${server.adminKubeconfig}`],
  });
  const plugin = await startDevicePlugin({ resource: RESOURCE, rootDir, devices: [{ id: 'a' }, { id: 'b' }] });
  try {
    const watch = await server.client.watch(`/api/v1/nodes?watch=true&fieldSelector=metadata.name%3D${NODE}`);
    const allocatable = async (want: string): Promise<void> => {
      for (;;) {
        const e = await watch.next(30_000);
        if ((e.object as Node).status?.allocatable?.[RESOURCE] === want) return;
      }
    };
    await allocatable('2');
    const health: number[] = [];
    for (let i = 0; i < changes; i++) {
      const healthy = i % 2 === 1;
      const t = performance.now();
      plugin.setDevices([{ id: 'a' }, { id: 'b', healthy }]);
      await allocatable(healthy ? '2' : '1');
      health.push(performance.now() - t);
    }
    watch.close();
    const patch: number[] = [];
    for (let i = 0; i < changes; i++) {
      const t = performance.now();
      const res = await server.client.request('GET', `/api/v1/nodes/${NODE}`);
      if (res.status !== 200) throw new Error(`GET node: ${res.status}`);
      const patched = await server.client.request('PATCH', `/api/v1/nodes/${NODE}/status`, {
        body: { status: { capacity: { 'example.com/bench': String(i) } } }, contentType: 'application/strategic-merge-patch+json',
      });
      if (patched.status !== 200) throw new Error(`PATCH node status: ${patched.status} ${patched.text}`);
      patch.push(performance.now() - t);
    }
    print(`health change → allocatable: ${health.map((v) => v.toFixed(0)).join(' ')} ms`);
    return { healthP50: percentile(health, 50), patchP50: percentile(patch, 50) };
  } finally {
    await agent.stop();
    await plugin.kill();
    await server.stop();
    await ctrd.stop();
    await removeTempDir(dir);
  }
}

function pod(i: number): NodePod {
  const resources = { requests: { [RESOURCE]: '1' }, limits: { [RESOURCE]: '1' } };
  return { metadata: { name: `p${i}`, namespace: 'bench', uid: `uid-${i}` }, spec: { containers: [{ name: 'main', image: 'busybox', resources }] } };
}

async function allocateCpu(allocations: number): Promise<{ allocateCpuMs: number; rawCpuMs: number; steal: number }> {
  const rootDir = await mkdtemp(path.join(os.tmpdir(), 'na-bench-devices-alloc-'));
  const sink = { write: (stream: 'out' | 'err', line: string) => { if (stream === 'err') process.stderr.write(line); } };
  const logger = new LogRoot({ format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink, clock: realClock }).logger('bench');
  const devices = createDeviceManager({
    dir: path.join(rootDir, 'device-plugins'), clock: realClock, logger, gates: { enabled: () => false },
    runtimeVersion: () => Promise.resolve({ name: 'containerd', version: 'v1.6.20' }),
  });
  let active: NodePod[] = [];
  await devices.hints.start({ activePods: () => active, sourcesReady: () => true, numaNodes: [0], running: [], affinity: () => ({ numaAffinity: undefined, preferred: false }) });
  const plugin = await startDevicePlugin({ resource: RESOURCE, rootDir, devices: Array.from({ length: 8 }, (_, i) => ({ id: `dev-${i}` })) });
  const pkg = grpcPackage('deviceplugin-v1beta1.proto')['v1beta1'] as GrpcObject;
  const Plugin = pkg['DevicePlugin'] as ServiceClientConstructor;
  const raw = new Plugin(`unix://${path.join(rootDir, 'device-plugins', 'example-com-dev.sock')}`, credentials.createInsecure());
  try {
    await plugin.waitFor('registered');
    await waitFor('the devices reported', () => devices.node.capacity().allocatable.get(RESOURCE) === 8);
    const ours: number[] = [];
    const base: number[] = [];
    const once = async (i: number): Promise<void> => {
      const p = pod(i);
      const container = { name: 'main', image: 'busybox', resources: { requests: { [RESOURCE]: '1' }, limits: { [RESOURCE]: '1' } } };
      p.spec = { containers: [container] };
      // The previous pod is gone: its device is freed at this allocation (as at a real admission).
      active = [p];
      let cpu = process.cpuUsage();
      devices.hints.topologyHints(p, container);
      await devices.hints.allocate(p, container, { numaAffinity: undefined, preferred: false });
      let d = process.cpuUsage(cpu);
      ours.push((d.user + d.system) / 1000);
      cpu = process.cpuUsage();
      await unaryCall(raw, 'Allocate', { containerRequests: [{ devicesIds: ['dev-0'] }] }, new Metadata(), 30_000);
      d = process.cpuUsage(cpu);
      base.push((d.user + d.system) / 1000);
    };
    for (let i = 0; i < 5; i++) await once(-1 - i); // warm: JIT, connections
    ours.length = 0;
    base.length = 0;
    const { steal } = await withSteal(async () => {
      for (let i = 0; i < allocations; i++) await once(i);
    });
    return { allocateCpuMs: percentile(ours, 50), rawCpuMs: percentile(base, 50), steal };
  } finally {
    raw.close();
    await devices.hints.stop();
    await plugin.kill();
    await removeTempDir(rootDir);
  }
}

export async function runDevicesBench(o: { readonly quick?: boolean; readonly print?: (line: string) => void } = {}): Promise<DevicesBenchResult> {
  const print = o.print ?? ((l: string) => void process.stderr.write(`${l}\n`));
  const changes = o.quick === true ? 5 : 20;
  const allocations = o.quick === true ? 20 : 200;
  print(`devices bench: ${changes} health changes, ${allocations} allocations`);
  const latency = await healthLatency(changes, print);
  const cpu = await allocateCpu(allocations);
  print(`allocation: ${cpu.allocateCpuMs} ms CPU (raw Allocate ${cpu.rawCpuMs} ms), steal ${cpu.steal.toFixed(1)} %`);
  return { changes, ...latency, allocations, ...cpu };
}

export function devicesRows(r: DevicesBenchResult): Row[] {
  return [
    {
      measure: `device health change (ListAndWatch) → the Node's allocatable in the API server, p50 of ${r.changes}`,
      baseline: `GET + PATCH of the Node's status ${r.patchP50.toFixed(0)} ms`, ours: `${r.healthP50.toFixed(0)} ms`, target: '1 s',
    },
    {
      measure: `device allocation of one container (hints, choice, Allocate, checkpoint): agent CPU, median of ${r.allocations}`,
      baseline: `raw Allocate call ${r.rawCpuMs.toFixed(2)} ms CPU`, ours: `${r.allocateCpuMs.toFixed(2)} ms CPU`, target: '',
    },
  ];
}

async function main(): Promise<void> {
  exitOnSignals();
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
  process.stdout.write(`${formatTable(devicesRows(await runDevicesBench({ quick: values.quick }))).join('\n')}\n`);
}

if (isMain(import.meta.url)) void main();
