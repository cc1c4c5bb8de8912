/**
 * The cost of the eviction manager's monitoring pass with 110 pods: the agent's CPU per pass
 * (the node's signals, a fresh stats snapshot of every pod, the local storage limits of every
 * pod, the ranking of all 110 and the eviction message), next to the CPU of the reads the pass
 * needs (the stats provider's CRI calls: ListPodSandbox, ListContainers, ListPodSandboxStats,
 * ListContainerStats, ImageFsInfo; and the signals' /proc, memory cgroup and statfs reads),
 * measured in the same process in turn (pass, reads, pass, ...) against one private containerd.
 *
 * The eviction manager, the signal reader, the stats provider and the volume stats cache are the
 * agent's modules run in this process. The 110 pods (one busybox `sleep` each, host network,
 * the agent's labels) have an ephemeral-storage request and limit and an emptyDir with a
 * sizeLimit, so the local storage check reads every pod's stats; a memory.available hard
 * threshold of 1000Gi is always met, so every pass ranks the pods and "evicts" the first through
 * a terminator that only counts (nothing is killed, every pass does the same work). The volumes
 * are measured once (every volumeStatsAggPeriod in the agent, not at each pass); that
 * measurement's CPU is printed beside. `--quick`: 5 passes.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFile, statfs } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createEvictionManager, createSignalReader, memoryCgroupDirs, parseThresholds } from '../src/agent/eviction/index.js';
import { imageFsMountpoint } from '../src/agent/gc/index.js';
import { POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL } from '../src/agent/kuberuntime/index.js';
import { LogRoot } from '../src/agent/logging/index.js';
import { connectCri } from '../src/agent/runtime/cri/index.js';
import { createStatsProvider, createVolumeStatsCache } from '../src/agent/server/index.js';
import { emptyDirPath } from '../src/agent/volumes/index.js';
import { realClock } from '../src/api/clock.js';
import type { NodePod } from '../src/api/pod/index.js';
import { startContainerd } from '../test/helpers/containerd.js';
import { containers, measure, type Measured } from './gc.js';
import { exitOnSignals, formatTable, isMain, type Row } from './table.js';

export interface EvictionBenchOptions {
  readonly quick?: boolean;
  readonly print?: (line: string) => void;
}

export interface EvictionBenchResult {
  readonly pods: number;
  readonly pass: Measured;
  /** Of the pass, the stats snapshot alone (median CPU ms per snapshot). */
  readonly snapshotCpuMs: number;
  /** CPU (ms) of one measurement of the 110 pods' volumes. */
  readonly volumesCpuMs: number;
}

const PODS = 110;

export async function runEvictionBench(o: EvictionBenchOptions = {}): Promise<EvictionBenchResult> {
  const print = o.print ?? ((l: string) => void process.stderr.write(`${l}\n`));
  const passes = o.quick === true ? 5 : 20;
  const ctrd = await startContainerd();
  const work = await mkdtemp(path.join(os.tmpdir(), 'na-bench-eviction-'));
  const logRoot = path.join(work, 'logs');
  const rootDir = path.join(work, 'root');
  const cri = connectCri({ runtimeEndpoint: ctrd.endpoint, requestTimeoutMs: 120_000 });
  // Warnings and errors of the modules measured go to stderr; their info lines (a few per pass) nowhere.
  const sink = { write: (_stream: 'out' | 'err', line: string) => { if (/^[EW]\d/.test(line)) process.stderr.write(line); } };
  const logs = new LogRoot({ format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink, clock: realClock });
  try {
    print(`eviction bench: containerd ${ctrd.endpoint}; ${PODS} pods`);
    await containers(cri, ctrd, logRoot, PODS, 1, ['sleep', '3600'], 0);
    // The desired pods, as the agent would hold them, from the sandboxes' labels.
    const pods: NodePod[] = (await cri.listPodSandbox()).map((s) => ({
      metadata: { uid: s.labels[POD_UID_LABEL] ?? '', name: s.labels[POD_NAME_LABEL] ?? '', namespace: s.labels[POD_NAMESPACE_LABEL] ?? '' },
      spec: {
        containers: [{
          name: 'c0', image: ctrd.images.busybox,
          resources: { requests: { memory: '16Mi', 'ephemeral-storage': '64Mi' }, limits: { 'ephemeral-storage': '1Gi' } },
          volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
        }],
        volumes: [{ name: 'scratch', emptyDir: { sizeLimit: '1Gi' } }],
      },
    }));
    for (const p of pods) {
      const dir = emptyDirPath(rootDir, p.metadata.uid, 'scratch');
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, 'data'), Buffer.alloc(64 * 1024, 1));
    }
    const volumes = createVolumeStatsCache({ rootDir, pods: () => pods, periodMs: 0, clock: realClock, logger: logs.logger('stats') });
    const cpu = process.cpuUsage();
    await volumes.refresh();
    const d = process.cpuUsage(cpu);
    const volumesCpuMs = (d.user + d.system) / 1000;
    print(`volume stats of ${PODS} pods: ${volumesCpuMs.toFixed(1)} ms CPU`);

    const stats = createStatsProvider({ cri, rootDir, podLogsRoot: logRoot, clock: realClock, logger: logs.logger('stats'), volumes });
    const cgroups = await memoryCgroupDirs({ cgroupRoot: ctrd.cgroupRoot, cgroupsPerQOS: false, cgroupDriver: 'cgroupfs' });
    const imageFs = imageFsMountpoint({ images: cri, runtime: cri });
    const signals = createSignalReader({ rootDir, imageFsPath: () => imageFs(), memoryCgroupDir: cgroups.root, clock: realClock });
    let evictions = 0;
    const manager = createEvictionManager({
      thresholds: parseThresholds({ evictionHard: { 'memory.available': '1000Gi' }, evictionSoft: {}, evictionSoftGracePeriod: {}, evictionMinimumReclaim: {}, enforceNodeAllocatable: [] }),
      pressureTransitionPeriodMs: 300_000, maxPodGracePeriodSeconds: 0, localStorageCapacityIsolation: true,
      // 0: every pass takes a fresh stats snapshot, as a pass every 10 s does in the agent.
      monitoringPeriodMs: 0,
      signals, podStats: { podStats: async (maxAgeMs) => (await stats.snapshot(maxAgeMs)).pods },
      activePods: () => pods, podCleanedUp: () => true,
      terminator: { terminate: () => { evictions++; return Promise.resolve(); } },
      reclaim: { deleteAllUnusedContainers: () => Promise.resolve(), deleteUnusedImages: () => Promise.resolve() },
      clock: realClock, logger: logs.logger('eviction'),
    });
    const imageMount = await imageFs();
    const memoryDir = cgroups.root ?? '/sys/fs/cgroup/memory';
    const reads = (): Promise<unknown> => Promise.all([
      cri.listPodSandbox({ state: { state: 'SANDBOX_READY' } }), cri.listContainers({ state: { state: 'CONTAINER_RUNNING' } }),
      cri.listPodSandboxStats(), cri.listContainerStats(), cri.imageFsInfo(),
      readFile('/proc/meminfo', 'utf8'), readFile(path.join(memoryDir, 'memory.usage_in_bytes'), 'utf8'), readFile(path.join(memoryDir, 'memory.stat'), 'utf8'),
      readFile('/proc/loadavg', 'utf8'), readFile('/proc/sys/kernel/pid_max', 'utf8'), readFile('/proc/sys/kernel/threads-max', 'utf8'),
      statfs(rootDir), statfs(imageMount),
    ]);
    const pass = await measure(passes, async () => {
      const evicted = await manager.synchronize();
      if (evicted.length !== 1) throw new Error(`a monitoring pass evicted ${evicted.length} pods, not 1: the pass did not rank`);
    }, reads);
    print(`monitoring pass: ${pass.passCpuMs.toFixed(1)} ms CPU, ${pass.passWallMs.toFixed(0)} ms wall (reads ${pass.listCpuMs.toFixed(1)} ms CPU), steal ${pass.steal.toFixed(1)} %; ${evictions} evictions counted`);
    const snapshot = await measure(passes, () => stats.snapshot(0), () => Promise.resolve());
    print(`of which the stats snapshot: ${snapshot.passCpuMs.toFixed(1)} ms CPU`);
    return { pods: PODS, pass, snapshotCpuMs: snapshot.passCpuMs, volumesCpuMs };
  } finally {
    cri.close();
    await ctrd.stop();
    await rm(work, { recursive: true, force: true });
  }
}

/** The row of the figures table (bench/README.md). */
export function evictionRows(r: EvictionBenchResult): Row[] {
  return [{
    measure: `eviction monitoring pass, ${r.pods} pods (signals, stats snapshot, local storage limits, ranking): agent CPU per pass`,
    baseline: `the CRI stats calls and signal reads ${r.pass.listCpuMs.toFixed(1)} ms CPU`,
    ours: `${r.pass.passCpuMs.toFixed(1)} ms CPU (${r.pass.passWallMs.toFixed(0)} ms wall), of which the stats snapshot ${r.snapshotCpuMs.toFixed(1)} ms; volume stats of ${r.pods} pods (every volumeStatsAggPeriod) ${r.volumesCpuMs.toFixed(1)} ms CPU`,
    target: '',
  }];
}

async function main(): Promise<void> {
  exitOnSignals();
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
  process.stdout.write(`${formatTable(evictionRows(await runEvictionBench({ quick: values.quick }))).join('\n')}\n`);
}

if (isMain(import.meta.url)) void main();
