/**
 * What the watch cache saves (issue 38), against real orch-apiserver processes on etcd and
 * SQLite:
 * - the server's (and etcd's) CPU milliseconds per Node GET, as the node agents' status loop
 *   sends it: `?resourceVersion=0` (the watch cache) and without (the store), and the same
 *   with `--watch-cache=false`; 200 nodes, GETs at concurrency 16;
 * - the memory of 30,000 pods (a node agent's pod with status and managedFields) held as
 *   encoded JSON Buffers (what the cache keeps) and as decoded objects (what upstream keeps).
 *
 * Run: `npm run build && node --expose-gc dist/bench/experiments/watch-cache.js [--gets 4000]`.
 * The machine is shared: the load average is printed beside the figures; nothing is asserted.
 */
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startApiServer, v1Node, v1Pod, type ApiServer } from '../../test/helpers/apiserver.js';
import { startEtcd } from '../../test/helpers/etcd.js';
import { waitFor } from '../../test/helpers/wait.js';

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU time (user + system) a process has used so far, in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

const load = (): string => loadavg().map((l) => l.toFixed(2)).join(' ');

async function run(total: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < total) {
      const i = next;
      next += 1;
      await task(i);
    }
  }));
}

async function nodeGets(label: string, server: ApiServer, etcdPids: readonly number[], gets: number): Promise<void> {
  const nodes = 200;
  for (let i = 0; i < nodes; i++) {
    const res = await server.client.request('POST', '/api/v1/nodes', { body: v1Node(`n${i}`, 10250) });
    if (res.status !== 201) throw new Error(`create node n${i}: ${res.status} ${res.text}`);
  }
  await waitFor('the last node at resourceVersion=0', async () => (await server.client.request('GET', `/api/v1/nodes/n${nodes - 1}?resourceVersion=0`)).status === 200);
  // Alternated twice: on a shared machine the second round of each is the steadier one.
  for (const query of ['?resourceVersion=0', '', '?resourceVersion=0', '']) {
    const get = async (i: number): Promise<void> => {
      const res = await server.client.request('GET', `/api/v1/nodes/n${i % nodes}${query}`);
      if (res.status !== 200) throw new Error(`GET: ${res.status}`);
    };
    await run(500, 16, get); // warm-up
    const pid = server.pid ?? 0;
    const before = { server: cpuMs(pid), etcd: etcdPids.reduce((s, p) => s + cpuMs(p), 0), at: Date.now() };
    await run(gets, 16, get);
    const after = { server: cpuMs(pid), etcd: etcdPids.reduce((s, p) => s + cpuMs(p), 0), at: Date.now() };
    console.log(`${label} GET node${query === '' ? ' (no resourceVersion)' : query}: server ${((after.server - before.server) / gets).toFixed(3)} ms CPU/GET, etcd ${((after.etcd - before.etcd) / gets).toFixed(3)}, ${Math.round(gets / ((after.at - before.at) / 1000))} GET/s; load ${load()}`);
  }
}

/** A node agent's pod as stored: spec, status with conditions and container statuses, managedFields. */
function storedPod(i: number): Record<string, unknown> {
  const pod = v1Pod(`web-${i}`, `n${i % 3000}`) as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
  const time = '2026-12-07T05:00:00Z';
  return {
    ...pod,
    metadata: {
      ...pod.metadata, namespace: `ns${i % 50}`, uid: `6f1f4c3e-2b7a-4a8e-9d3c-${String(i).padStart(12, '0')}`, resourceVersion: String(1000 + i),
      creationTimestamp: time, labels: { app: 'web', 'pod-template-hash': '7d4b9c8f6d' },
      managedFields: [
        { manager: 'orch', operation: 'Update', apiVersion: 'v1', time, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:command': {} } } } } },
        { manager: 'nodeagent', operation: 'Update', apiVersion: 'v1', time, subresource: 'status', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:conditions': {}, 'f:containerStatuses': {}, 'f:podIP': {}, 'f:phase': {} } } },
      ],
    },
    spec: { ...pod.spec, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst', serviceAccountName: 'default', schedulerName: 'default-scheduler', tolerations: [{ key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }] },
    status: {
      phase: 'Running', hostIP: '10.0.0.5', podIP: `10.244.${i % 250}.${i % 200}`, startTime: time, qosClass: 'BestEffort',
      conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: time })),
      containerStatuses: [{ name: 'c', ready: true, restartCount: 0, image: 'busybox:1.36', imageID: 'docker.io/library/busybox@sha256:' + 'a'.repeat(64), containerID: 'containerd://' + 'b'.repeat(64), started: true, state: { running: { startedAt: time } } }],
    },
  };
}

function memory(count: number): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) {
    console.log('memory: run with node --expose-gc');
    return;
  }
  const sample = (): { heap: number; buffers: number } => {
    gc();
    const m = process.memoryUsage();
    return { heap: m.heapUsed, buffers: m.arrayBuffers };
  };
  const base = sample();
  const buffers = Array.from({ length: count }, (_, i) => {
    const text = JSON.stringify(storedPod(i));
    const json = Buffer.allocUnsafeSlow(Buffer.byteLength(text, 'utf8'));
    json.write(text, 'utf8');
    return json;
  });
  const asBuffers = sample();
  const jsonBytes = buffers.reduce((s, b) => s + b.length, 0);
  buffers.length = 0;
  const base2 = sample();
  const objects = Array.from({ length: count }, (_, i) => JSON.parse(JSON.stringify(storedPod(i))) as unknown);
  const asObjects = sample();
  const mb = (n: number): string => `${(n / 1048576).toFixed(1)} MB`;
  console.log(`memory of ${count} pods (${Math.round(jsonBytes / count)} bytes of JSON each): as Buffers ${mb(asBuffers.heap - base.heap)} heap + ${mb(asBuffers.buffers - base.buffers)} off-heap; `
    + `as decoded objects ${mb(asObjects.heap - base2.heap)} heap (${objects.length} kept)`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { gets: { type: 'string', default: '4000' }, pods: { type: 'string', default: '30000' } } });
  const gets = Number(values.gets);
  memory(Number(values.pods));
  const etcd = await startEtcd();
  try {
    for (const [label, args] of [['etcd, --watch-cache=true', []], ['etcd, --watch-cache=false', ['--watch-cache=false']]] as const) {
      const server = await startApiServer({ storage: 'etcd', etcdEndpoints: etcd.endpoints, args: [...args] });
      try {
        await nodeGets(label, server, etcd.pids(), gets);
      } finally {
        await server.stop();
      }
    }
  } finally {
    await etcd.stop();
  }
  const sqlite = await startApiServer({ storage: 'sqlite' });
  try {
    await nodeGets('sqlite, --watch-cache=true', sqlite, [], gets);
  } finally {
    await sqlite.stop();
  }
}

await main();
