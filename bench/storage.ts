/**
 * Storage: the time a pod with one CSI volume takes to Running next to the same pod with an
 * emptyDir (p50 of 10 each, interleaved), and the agent's CPU per CSI mount: the agent
 * process's CPU time over the CSI pod's start minus that over the emptyDir pod's, medians.
 *
 * The built agent runs in API-server mode (orch-apiserver on SQLite with its controllers, one
 * containerd) with the sample CSI driver (examples/csi-hostpath: NodeStageVolume and
 * NodePublishVolume bind mounts; no attach). Each CSI pod has its own PersistentVolume and a
 * claim pre-bound to it, made before the timing starts, so each start stages and publishes once;
 * pods are given to the node by name (no scheduler in the timing). A start is timed from the
 * create request to the pod's Running on a watch; each pod is deleted (and a CSI volume
 * unstaged) before the next starts. `--quick`: 3 of each.
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { startAgentProcess } from '../test/helpers/agent.js';
import { kubectlCreate, startApiServer, type ApiServer } from '../test/helpers/apiserver.js';
import { freePort, startContainerd } from '../test/helpers/containerd.js';
import { startCsiDriver, type CsiDriverProcess } from '../test/helpers/csi-driver.js';
import { removeTempDir } from '../test/helpers/tempdir.js';
import { waitFor } from '../test/helpers/wait.js';
import { sampleProcess } from './agent.js';
import { withSteal } from './steal.js';
import { exitOnSignals, formatTable, isMain, percentile, type Row } from './table.js';

const NODE = 'bench-storage';
const DRIVER = 'hostpath.csi.example.com';
const PODS = '/api/v1/namespaces/default/pods';

export interface StorageBenchResult {
  readonly pods: number;
  /** ms: create → Running. */
  readonly emptyDirP50: number;
  readonly csiP50: number;
  /** ms of the agent's CPU over a pod's start. */
  readonly emptyDirCpuMs: number;
  readonly csiCpuMs: number;
  readonly steal: number;
  readonly load: string;
}

const pod = (name: string, volume: Record<string, unknown>): Record<string, unknown> => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name },
  spec: {
    nodeName: NODE, restartPolicy: 'Always', terminationGracePeriodSeconds: 0,
    containers: [{ name: 'c', image: 'busybox:1.35', imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
    volumes: [{ name: 'data', ...volume }],
  },
});

async function startPod(server: ApiServer, agentPid: number, body: Record<string, unknown>): Promise<{ ms: number; cpuMs: number }> {
  const name = (body['metadata'] as { name: string }).name;
  const list = await server.client.request('GET', PODS);
  const rv = (list.body['metadata'] as { resourceVersion?: string } | undefined)?.resourceVersion ?? '';
  const watch = await server.client.watch(`${PODS}?watch=true&resourceVersion=${rv}&fieldSelector=metadata.name%3D${name}`);
  try {
    const cpu = await sampleProcess(agentPid);
    const t = performance.now();
    const created = await server.client.request('POST', PODS, { body });
    if (created.status !== 201) throw new Error(`create pod ${name}: ${created.status} ${created.text}`);
    for (;;) {
      const e = await watch.next(60_000);
      if ((e.object as Pod).status?.phase === 'Running') break;
    }
    const ms = performance.now() - t;
    return { ms, cpuMs: ((await sampleProcess(agentPid)).cpuSeconds - cpu.cpuSeconds) * 1000 };
  } finally {
    watch.close();
  }
}

async function deletePod(server: ApiServer, name: string, driver: CsiDriverProcess, handle?: string): Promise<void> {
  await server.client.request('DELETE', `${PODS}/${name}`);
  await waitFor(`pod ${name} gone`, async () => (await server.client.request('GET', `${PODS}/${name}`)).status === 404, { timeoutMs: 60_000 });
  if (handle !== undefined) await waitFor(`${handle} unstaged`, () => driver.calls('NodeUnstageVolume').some((c) => c.request?.['volumeId'] === handle), { timeoutMs: 60_000 });
}

export async function runStorageBench(o: { readonly quick?: boolean; readonly print?: (line: string) => void } = {}): Promise<StorageBenchResult> {
  const print = o.print ?? ((l: string) => void process.stderr.write(`${l}\n`));
  const pods = o.quick === true ? 3 : 10;
  print(`storage bench: ${pods} emptyDir pods and ${pods} CSI pods, interleaved`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'na-bench-storage-'));
  const ctrd = await startContainerd();
  const server = await startApiServer({ storage: 'sqlite', controllers: true });
  const rootDir = path.join(dir, 'root');
  const agent = await startAgentProcess({
    endpoint: ctrd.endpoint, cgroupRoot: ctrd.cgroupRoot, rootDir,
    args: [`--hostname-override=${NODE}`, '--node-ip=127.0.0.1', `--port=${await freePort()}`, `--orchconfig=${server.adminKubeconfig}`],
  });
  const driver = await startCsiDriver({ name: DRIVER, nodeId: NODE, rootDir });
  try {
    await driver.waitFor('registration-status');
    const agentPid = agent.process.pid ?? 0;
    await kubectlCreate(server, [{ apiVersion: 'storage.orch.io/v1', kind: 'CSIDriver', metadata: { name: DRIVER }, spec: { attachRequired: false } }]);
    const volumes = Array.from({ length: pods + 1 }, (_, i) => [
      { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: `pv-${i}` }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: '', csi: { driver: DRIVER, volumeHandle: `vol-${i}` } } },
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `claim-${i}` }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', volumeName: `pv-${i}`, resources: { requests: { storage: '1Gi' } } } },
    ]).flat();
    await kubectlCreate(server, volumes);
    await waitFor('the claims bound', async () => {
      const list = await server.client.request('GET', '/api/v1/namespaces/default/persistentvolumeclaims');
      return (list.body['items'] as { status?: { phase?: string } }[]).every((c) => c.status?.phase === 'Bound');
    }, { timeoutMs: 60_000 });
    // Warm: the image, the JIT, the driver's connection.
    await startPod(server, agentPid, pod('warm-e', { emptyDir: {} }));
    await deletePod(server, 'warm-e', driver);
    await startPod(server, agentPid, pod('warm-c', { persistentVolumeClaim: { claimName: `claim-${pods}` } }));
    await deletePod(server, 'warm-c', driver, `vol-${pods}`);
    const empty: { ms: number; cpuMs: number }[] = [];
    const csi: { ms: number; cpuMs: number }[] = [];
    const { steal } = await withSteal(async () => {
      for (let i = 0; i < pods; i++) {
        empty.push(await startPod(server, agentPid, pod(`e-${i}`, { emptyDir: {} })));
        await deletePod(server, `e-${i}`, driver);
        csi.push(await startPod(server, agentPid, pod(`c-${i}`, { persistentVolumeClaim: { claimName: `claim-${i}` } })));
        await deletePod(server, `c-${i}`, driver, `vol-${i}`);
      }
    });
    print(`emptyDir: ${empty.map((s) => s.ms.toFixed(0)).join(' ')} ms; CSI: ${csi.map((s) => s.ms.toFixed(0)).join(' ')} ms`);
    print(`agent CPU: emptyDir ${empty.map((s) => s.cpuMs.toFixed(0)).join(' ')} ms; CSI ${csi.map((s) => s.cpuMs.toFixed(0)).join(' ')} ms`);
    return {
      pods, steal, load: os.loadavg().map((l) => l.toFixed(2)).join(' '),
      emptyDirP50: percentile(empty.map((s) => s.ms), 50), csiP50: percentile(csi.map((s) => s.ms), 50),
      emptyDirCpuMs: percentile(empty.map((s) => s.cpuMs), 50), csiCpuMs: percentile(csi.map((s) => s.cpuMs), 50),
    };
  } finally {
    await agent.stop();
    await driver.kill();
    await server.stop();
    await ctrd.stop();
    await removeTempDir(dir);
  }
}

export function storageRows(r: StorageBenchResult): Row[] {
  return [
    {
      measure: `API-server mode: pod with one CSI volume (sample hostpath driver: stage + publish) create → Running, p50 of ${r.pods}`,
      baseline: `the same pod with an emptyDir ${r.emptyDirP50.toFixed(0)} ms`, ours: `${r.csiP50.toFixed(0)} ms`, target: '',
    },
    {
      measure: `agent CPU per CSI mount: the CSI pod's start minus the emptyDir pod's, medians of ${r.pods}`,
      baseline: `emptyDir pod start ${r.emptyDirCpuMs.toFixed(0)} ms CPU`, ours: `${(r.csiCpuMs - r.emptyDirCpuMs).toFixed(0)} ms CPU (pod start ${r.csiCpuMs.toFixed(0)} ms)`, target: '',
    },
  ];
}

async function main(): Promise<void> {
  exitOnSignals();
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
  const r = await runStorageBench({ quick: values.quick });
  process.stderr.write(`steal ${r.steal.toFixed(1)} %, load average ${r.load}\n`);
  process.stdout.write(`${formatTable(storageRows(r)).join('\n')}\n`);
}

if (isMain(import.meta.url)) void main();
