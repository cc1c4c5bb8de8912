/**
 * The server-side apply bench: what field management costs, in process (no HTTP) over a fresh
 * SQLite store with the pods and nodes registries of orch-apiserver.
 *
 * - CPU per write of a typical pod (two containers, env, ports, mounts, probes, volumes; created
 *   by `kubectl apply --server-side`, its status written by the node agent): a label changed by
 *   an update (PUT of the whole object) next to the same change by an apply of the manifest. The
 *   share of the update spent keeping managedFields is measured on the same objects.
 * - The bytes managedFields add to that pod (its JSON without them is the baseline).
 * - A node status write as the node agent sends it (a merge patch of the conditions' heartbeat
 *   times on nodes/status), and the share of it spent keeping managedFields.
 *
 *   node dist/bench/apply.js [--quick]   (--quick: 200 writes of each kind instead of 2000)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { nodeDefinition } from '../src/apiserver/resources/nodes/index.js';
import { podDefinition } from '../src/apiserver/resources/pods/index.js';
import { ResourceRegistry, metaOf, type StrategyContext, type WireObject } from '../src/apiserver/registry/index.js';
import { openSqliteStore } from '../src/apiserver/storage/index.js';
import { formatTable, isMain, type Row } from './table.js';

export interface ApplyBenchOptions {
  readonly quick?: boolean;
  readonly print?: (line: string) => void;
}

export interface ApplyBenchResult {
  readonly updateUs: number;
  readonly updateFieldsUs: number;
  readonly applyUs: number;
  readonly podBytes: number;
  readonly managedFieldsBytes: number;
  readonly managedFieldsEntries: number;
  readonly nodeStatusUs: number;
  readonly nodeStatusFieldsUs: number;
}

const ctx = (): StrategyContext => ({ user: { name: 'bench', uid: '', groups: ['system:masters'] }, now: new Date() });

/** The manifest of a typical pod (what kubectl sends): two containers, probes, env, mounts. */
export function podManifest(label: string): WireObject {
  const container = (name: string, image: string, port: number): WireObject => ({
    name, image, imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', 'exec httpd -f -p 8080'],
    ports: [{ name: 'http', containerPort: port }, { name: 'metrics', containerPort: port + 1000 }],
    env: [{ name: 'MODE', value: 'production' }, { name: 'LOG_LEVEL', value: 'info' }, { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
    readinessProbe: { httpGet: { path: '/healthz', port }, periodSeconds: 5 },
    volumeMounts: [{ name: 'config', mountPath: '/etc/app' }, { name: 'cache', mountPath: '/cache' }],
  });
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: 'web', namespace: 'bench', labels: { app: 'web', tier: 'frontend', release: label }, annotations: { 'example.com/owner': 'team-a' } },
    spec: {
      nodeName: 'node-1',
      containers: [container('web', 'registry.local/web:1.2.3', 8080), container('proxy', 'registry.local/proxy:2.0', 9090)],
      volumes: [{ name: 'config', configMap: { name: 'web-config' } }, { name: 'cache', emptyDir: {} }],
    },
  };
}

function podStatus(pod: WireObject, heartbeat: string): WireObject {
  const started = { running: { startedAt: '2024-05-01T10:00:05Z' } };
  return {
    ...pod,
    status: {
      phase: 'Running', hostIP: '10.0.0.1', podIP: '10.1.0.7', podIPs: [{ ip: '10.1.0.7' }], startTime: '2024-05-01T10:00:00Z', qosClass: 'Burstable',
      conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True', lastTransitionTime: heartbeat })),
      containerStatuses: ['web', 'proxy'].map((name) => ({ name, ready: true, restartCount: 0, image: `registry.local/${name}`, imageID: `sha256:${'a'.repeat(64)}`, containerID: `containerd://${'b'.repeat(64)}`, started: true, state: started })),
    },
  };
}

function nodeObject(): WireObject {
  const condition = (type: string, status: string): WireObject => ({ type, status, lastHeartbeatTime: '2024-05-01T10:00:00Z', lastTransitionTime: '2024-05-01T09:00:00Z', reason: `Node${type}`, message: `node agent reports ${type}` });
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: { name: 'node-1', labels: { 'orch.io/hostname': 'node-1', 'orch.io/os': 'linux', 'orch.io/arch': 'amd64' } },
    status: {
      capacity: { cpu: '2', memory: '4Gi', pods: '110' }, allocatable: { cpu: '2', memory: '3Gi', pods: '110' },
      conditions: [condition('MemoryPressure', 'False'), condition('DiskPressure', 'False'), condition('PIDPressure', 'False'), condition('Ready', 'True')],
      addresses: [{ type: 'InternalIP', address: '10.0.0.1' }, { type: 'Hostname', address: 'node-1' }],
      daemonEndpoints: { nodeagentEndpoint: { Port: 10250 } },
      nodeInfo: { machineID: 'm', systemUUID: 's', bootID: 'b', kernelVersion: '6.1.0', osImage: 'Debian GNU/Linux 12', containerRuntimeVersion: 'containerd://1.6.20', nodeagentVersion: 'v1.30.0', orchProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64' },
      images: Array.from({ length: 20 }, (_, i) => ({ names: [`registry.local/image-${i}@sha256:${String(i).padStart(64, '0')}`, `registry.local/image-${i}:1.0`], sizeBytes: 10_000_000 + i })),
    },
  };
}

/** CPU microseconds per call of `op`, over `n` calls. */
async function cpuPerOp(n: number, op: (i: number) => unknown): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) await op(i);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

export async function runApplyBench(options: ApplyBenchOptions = {}): Promise<ApplyBenchResult> {
  const print = options.print ?? ((line: string) => process.stderr.write(`${line}\n`));
  const n = options.quick === true ? 200 : 2000;
  const dir = mkdtempSync(join(tmpdir(), 'apply-bench-'));
  const store = await openSqliteStore({ dataDir: dir, compactionIntervalMs: 3_600_000 });
  try {
    const pods = new ResourceRegistry({ def: podDefinition, store });
    const nodes = new ResourceRegistry({ def: nodeDefinition, store });
    const apply = (label: string): Promise<unknown> => {
      const manifest = podManifest(label);
      return pods.apply(ctx(), 'bench', 'web', manifest, { dryRun: false, fieldManager: 'kubectl', force: true, raw: manifest });
    };
    await apply('r0');
    let pod = await pods.get('bench', 'web');
    await pods.update(ctx(), 'bench', 'web', podStatus(pod, '2024-05-01T10:00:10Z'), { dryRun: false, subresource: 'status', fieldManager: 'nodeagent' });
    pod = await pods.get('bench', 'web');
    const entries = metaOf(pod).managedFields as unknown[];
    const managedFieldsBytes = JSON.stringify(entries).length + ',"managedFields":'.length;
    const bare = structuredClone(pod);
    delete metaOf(bare).managedFields;
    const podBytes = JSON.stringify(bare).length;
    print(`apply bench: a pod of ${podBytes} bytes of JSON, managedFields ${managedFieldsBytes} bytes in ${entries.length} entries; ${n} writes of each kind`);

    // Warm up both paths once before measuring.
    await apply('warm');
    const updateUs = await cpuPerOp(n, async (i) => {
      const current = await pods.get('bench', 'web');
      metaOf(current).labels = { ...(metaOf(current).labels as object), release: `u${i}` };
      await pods.update(ctx(), 'bench', 'web', current, { dryRun: false, fieldManager: 'editor' });
    });
    const readUs = await cpuPerOp(n, () => pods.get('bench', 'web'));
    const current = await pods.get('bench', 'web');
    const updateFieldsUs = await cpuPerOp(n, (i) => {
      const next = structuredClone(current);
      metaOf(next).labels = { ...(metaOf(next).labels as object), release: `f${i}` };
      pods.fields.update(current, next, 'editor', '', new Date());
    });
    const applyUs = await cpuPerOp(n, (i) => apply(`a${i}`));

    await nodes.create(ctx(), '', nodeObject(), { dryRun: false, fieldManager: 'nodeagent' });
    const heartbeat = (i: number): WireObject => ({
      status: { conditions: ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'].map((type) => ({ type, lastHeartbeatTime: new Date(Date.parse('2024-05-01T10:00:00Z') + (i + 1) * 10_000).toISOString().replace(/\.\d+Z$/, 'Z') })) },
    });
    await nodes.patch(ctx(), '', 'node-1', 'strategic', heartbeat(0), { dryRun: false, subresource: 'status', fieldManager: 'nodeagent' });
    const nodeStatusUs = await cpuPerOp(n, (i) => nodes.patch(ctx(), '', 'node-1', 'strategic', heartbeat(i + 1), { dryRun: false, subresource: 'status', fieldManager: 'nodeagent' }));
    const node = await nodes.get('', 'node-1');
    const nodeStatusFieldsUs = await cpuPerOp(n, (i) => {
      const next = structuredClone(node);
      const conditions = (next.status as { conditions: WireObject[] }).conditions;
      for (const c of conditions) c.lastHeartbeatTime = new Date(Date.parse('2024-06-01T10:00:00Z') + i * 10_000).toISOString().replace(/\.\d+Z$/, 'Z');
      nodes.fields.update(node, next, 'nodeagent', 'status', new Date());
    });
    print(`apply bench: update ${updateUs.toFixed(0)} µs (a read ${readUs.toFixed(0)} µs of it), of which managedFields ${updateFieldsUs.toFixed(0)} µs; apply ${applyUs.toFixed(0)} µs; node status ${nodeStatusUs.toFixed(0)} µs, of which managedFields ${nodeStatusFieldsUs.toFixed(0)} µs`);
    return { updateUs: updateUs - readUs, updateFieldsUs, applyUs, podBytes, managedFieldsBytes, managedFieldsEntries: entries.length, nodeStatusUs, nodeStatusFieldsUs };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function applyRows(r: ApplyBenchResult): Row[] {
  const us = (v: number): string => `${Math.round(v)} µs`;
  return [
    {
      measure: 'server-side apply: CPU per write of a typical pod (a label changed; in process, SQLite)',
      baseline: `update (PUT) ${us(r.updateUs)}, of which managedFields ${us(r.updateFieldsUs)}`,
      ours: `apply ${us(r.applyUs)}`,
      target: '',
    },
    {
      measure: 'managedFields in that pod (applied by kubectl, status by the node agent)',
      baseline: `pod without them ${r.podBytes} bytes`,
      ours: `+${r.managedFieldsBytes} bytes (${r.managedFieldsEntries} entries, +${Math.round((r.managedFieldsBytes / r.podBytes) * 100)} %)`,
      target: '',
    },
    {
      measure: 'node status write (conditions heartbeat, strategic merge patch of nodes/status): CPU per write',
      baseline: '',
      ours: `${us(r.nodeStatusUs)}, of which managedFields ${us(r.nodeStatusFieldsUs)}`,
      target: '',
    },
  ];
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
  const result = await runApplyBench({ quick: values.quick });
  process.stdout.write(`${formatTable(applyRows(result)).join('\n')}\n`);
}
