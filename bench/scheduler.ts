/**
 * The scheduler bench: 1 000 pending pods onto 100 registered nodes (no agents, no containers),
 * in process on a fresh SQLite store per round, next to the raw create rate of the same store
 * measured in the same round:
 *
 * - baseline: Store.create of the same 1 000 pod objects, 16 in flight (the scheduler's bindings
 *   in flight);
 * - ours: pods bound per second, from the start of the scheduler (its informers list the 100
 *   nodes and 1 000 pods) to the last pod seen bound on a watch. Every pod costs a filter and
 *   score pass over the 100 nodes, a pods/binding write and a Scheduled event.
 *
 * Rounds interleave the two (3, the median; 1 with --quick).
 *
 *   node dist/bench/scheduler.js [--quick]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { realClock } from '../src/api/clock.js';
import { ControllerManager, registryClient } from '../src/apiserver/controllers/index.js';
import { CONTROLLERS_USER } from '../src/apiserver/controllers/client/index.js';
import { ResourceRegistry, watchObjects, type ResourceDefinition, type WireObject } from '../src/apiserver/registry/index.js';
import { eventDefinitions } from '../src/apiserver/resources/events/index.js';
import { configMapDefinition } from '../src/apiserver/resources/configmaps/index.js';
import { leaseDefinition } from '../src/apiserver/resources/leases/index.js';
import { namespaceDefinition } from '../src/apiserver/resources/namespaces/index.js';
import { nodeDefinition } from '../src/apiserver/resources/nodes/index.js';
import { bindPod, podDefinition } from '../src/apiserver/resources/pods/index.js';
import { serviceAccountDefinition } from '../src/apiserver/resources/serviceaccounts/index.js';
import { persistentVolumeClaimDefinition, persistentVolumeDefinition } from '../src/apiserver/resources/persistentvolumes/index.js';
import { csiDriverDefinition, csiNodeDefinition, storageClassDefinition, volumeAttachmentDefinition } from '../src/apiserver/resources/storage/index.js';
import { openSqliteStore, type ManagedStore } from '../src/apiserver/storage/index.js';
import { formatTable, isMain, percentile, type Row } from './table.js';

export interface SchedulerBenchOptions {
  readonly quick?: boolean;
  readonly print?: (line: string) => void;
}

const PODS = 1000;
const NODES = 100;
const IN_FLIGHT = 16;

function podBody(i: number): WireObject {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: `pod-${String(i).padStart(4, '0')}`, namespace: 'bench', labels: { app: 'bench' } },
    spec: { containers: [{ name: 'main', image: 'busybox:1.35', command: ['sleep', '3600'], resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
  };
}

function nodeBody(i: number): WireObject {
  const resources = { cpu: '32', memory: '128Gi', pods: '110' };
  return {
    apiVersion: 'v1', kind: 'Node', metadata: { name: `node-${String(i).padStart(3, '0')}`, labels: { zone: `z${i % 3}` } },
    status: { capacity: resources, allocatable: resources, conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

async function inFlight(total: number, concurrency: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let i = next++; i < total; i = next++) await task(i);
  }));
}

/** One round: the raw creates, then the scheduler, on one fresh store. */
async function round(dir: string): Promise<{ raw: number; scheduled: number }> {
  const store: ManagedStore = await openSqliteStore({ dataDir: dir, compactionIntervalMs: 0, historyRevisions: Number.MAX_SAFE_INTEGER });
  try {
    const registry = (def: ResourceDefinition): ResourceRegistry => new ResourceRegistry({ def, store });
    const events = eventDefinitions({ ttlSeconds: 3600 }).find((d) => d.group === 'events.orch.io');
    if (events === undefined) throw new Error('no events.orch.io definition');
    const [pods, nodes, leases, eventRegistry] = [registry(podDefinition), registry(nodeDefinition), registry(leaseDefinition), registry(events)];
    const ctx = { user: CONTROLLERS_USER, now: new Date() };
    // The raw rate: the same pod objects as the registry stores them, straight into the store.
    const stored = await pods.create(ctx, 'bench', podBody(PODS), { dryRun: true });
    const start = performance.now();
    await inFlight(PODS, IN_FLIGHT, (i) => store.create(`/raw/bench/pod-${i}`, { ...stored, metadata: { ...(stored.metadata as object), name: `pod-${i}` } }));
    const raw = PODS / ((performance.now() - start) / 1000);

    for (let i = 0; i < NODES; i++) await nodes.create(ctx, '', nodeBody(i), { dryRun: false });
    for (let i = 0; i < PODS; i++) await pods.create(ctx, 'bench', podBody(i), { dryRun: false });
    const bound = new Set<string>();
    let done: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => { done = resolve; });
    const watch = await watchObjects(pods, 'bench', {
      resourceVersion: await store.currentRevision(),
      onEvent: (event) => {
        if (event.type === 'ERROR' || (event.object.spec as { nodeName?: string }).nodeName === undefined) return;
        bound.add((event.object.metadata as { name: string }).name);
        if (bound.size === PODS) done();
      },
    });
    const client = (r: ResourceRegistry, namespace = ''): ReturnType<typeof registryClient> => registryClient({ registry: r, namespace, clock: realClock });
    const manager = new ControllerManager({
      clients: {
        pods: client(pods), nodes: client(nodes), nodeLeases: client(leases, 'orch-node-lease'), leases: client(leases, 'orch-system'), events: client(eventRegistry),
        namespaces: client(registry(namespaceDefinition)), serviceAccounts: client(registry(serviceAccountDefinition)), configMaps: client(registry(configMapDefinition)),
        persistentVolumes: client(registry(persistentVolumeDefinition)), persistentVolumeClaims: client(registry(persistentVolumeClaimDefinition)),
        storageClasses: client(registry(storageClassDefinition)), csiDrivers: client(registry(csiDriverDefinition)), csiNodes: client(registry(csiNodeDefinition)),
        volumeAttachments: client(registry(volumeAttachmentDefinition)),
      },
      binder: { bind: async (namespace, name, uid, node) => { await bindPod(pods, { user: CONTROLLERS_USER, now: new Date() }, { namespace, name, uid, node }, false); } },
      controllers: ['scheduler'],
      leaderElection: { enabled: false, namespace: 'orch-system', name: 'bench', identity: 'bench', leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
      nodeMonitorPeriodMs: 5_000, nodeMonitorGracePeriodMs: 40_000, nodeStartupGracePeriodMs: 60_000, terminatedPodGcThreshold: 0,
      rootCaPem: '', features: { inPlacePodVerticalScaling: false }, clock: realClock, log: () => undefined, hostname: 'bench',
    });
    const scheduling = performance.now();
    manager.start();
    const timeout = setTimeout(() => { done(); }, 300_000);
    await finished;
    clearTimeout(timeout);
    const elapsed = performance.now() - scheduling;
    await manager.close();
    await watch.close();
    if (bound.size !== PODS) throw new Error(`only ${bound.size} of ${PODS} pods were bound within 5 minutes`);
    return { raw, scheduled: PODS / (elapsed / 1000) };
  } finally {
    await store.close();
  }
}

export async function runSchedulerBench(o: SchedulerBenchOptions = {}): Promise<Row[]> {
  const rounds = o.quick === true ? 1 : 3;
  const say = o.print ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const dir = mkdtempSync(join(tmpdir(), 'orch-bench-scheduler-'));
  try {
    const raw: number[] = [];
    const scheduled: number[] = [];
    for (let r = 0; r < rounds; r++) {
      say(`scheduler: round ${r + 1} of ${rounds}: ${PODS} raw creates, then ${PODS} pods onto ${NODES} nodes`);
      const result = await round(join(dir, `round-${r}`));
      raw.push(result.raw);
      scheduled.push(result.scheduled);
      say(`scheduler: raw ${Math.round(result.raw)}/s, scheduled ${Math.round(result.scheduled)}/s`);
    }
    return [{
      measure: `Scheduler: ${PODS} pending pods onto ${NODES} nodes (in process, SQLite; each a binding and a Scheduled event)${rounds === 1 ? ', one round' : `, median of ${rounds} rounds`}`,
      baseline: `raw store creates ${Math.round(percentile(raw, 50))}/s (${IN_FLIGHT} in flight)`,
      ours: `${Math.round(percentile(scheduled, 50))} pods bound/s`,
      target: '',
    }];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
  runSchedulerBench({ quick: values.quick }).then((rows) => {
    process.stdout.write(`${formatTable(rows).join('\n')}\n`);
  }, (err: unknown) => {
    process.stderr.write(`bench scheduler: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
