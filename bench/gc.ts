/**
 * The cost of keeping a node clean: the agent's CPU time per container GC pass (1,000 dead
 * containers of the agent's, 110 running ones), per image GC pass (200 images, below the high
 * threshold: detection only) and per log rotation check (110 running containers, none due),
 * each next to the CRI list calls the pass needs, measured in the same process in turn (pass,
 * list calls, pass, ...) against one private containerd. The GC and the log manager are the
 * agent's modules run in this process (the CPU is this process's, grpc-js included); the
 * objects carry the agent's labels and none is due for removal, so every pass does the same
 * work. `--quick`: 200 dead containers, 50 images, fewer passes.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createContainerLogManager } from '../src/agent/containerlogs/index.js';
import { createContainerGC, createImageGC, imageFsSource } from '../src/agent/gc/index.js';
import { CONTAINER_NAME_LABEL, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL, podLogsDirectory } from '../src/agent/kuberuntime/index.js';
import { LogRoot } from '../src/agent/logging/index.js';
import { realClock } from '../src/api/clock.js';
import { connectCri, type CriClient, type PodSandboxConfig } from '../src/agent/runtime/cri/index.js';
import { startContainerd, type ContainerdInstance } from '../test/helpers/containerd.js';
import { importTestImages } from '../test/helpers/images.js';
import { withSteal } from './steal.js';
import { exitOnSignals, formatTable, isMain, percentile, type Row } from './table.js';

export interface GcBenchOptions {
  readonly quick?: boolean;
  readonly print?: (line: string) => void;
}

/** Per-pass CPU (ms of this process) of a pass and of its list calls, medians. */
export interface Measured {
  readonly passCpuMs: number;
  readonly listCpuMs: number;
  readonly passWallMs: number;
  readonly passes: number;
  readonly steal: number;
}

export interface GcBenchResult {
  readonly dead: number;
  readonly running: number;
  readonly images: number;
  readonly containerGC: Measured;
  readonly imageGC: Measured;
  readonly rotation: Measured;
}

const RUNNING = 110;
const CONTAINERS_PER_SANDBOX = 20;

/** One sandbox of the agent's (host network), its log directory made. */
async function sandbox(cri: CriClient, ctrd: ContainerdInstance, logRoot: string, n: number): Promise<{ id: string; config: PodSandboxConfig }> {
  const uid = randomUUID();
  const id = { uid, name: `gc-${n}`, namespace: 'bench-gc' };
  const logDirectory = podLogsDirectory(logRoot, id);
  await mkdir(logDirectory, { recursive: true });
  const config: PodSandboxConfig = {
    metadata: { ...id, attempt: 0 },
    hostname: '',
    logDirectory,
    labels: { [POD_UID_LABEL]: uid, [POD_NAME_LABEL]: id.name, [POD_NAMESPACE_LABEL]: id.namespace },
    linux: { cgroupParent: `${ctrd.cgroupRoot}/bench-gc/pod${uid}`, securityContext: { namespaceOptions: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } } },
  };
  return { id: await cri.runPodSandbox({ config }), config };
}

/** `count` containers running `command`, `perSandbox` to a sandbox, 4 sandboxes at a time (sandboxes named gc-<n>, namespace bench-gc, from `first`). */
export async function containers(cri: CriClient, ctrd: ContainerdInstance, logRoot: string, count: number, perSandbox: number, command: readonly string[], first: number): Promise<void> {
  let next = 0;
  const sandboxes = Math.ceil(count / perSandbox);
  const worker = async (): Promise<void> => {
    while (next < sandboxes) {
      const n = next++;
      const sb = await sandbox(cri, ctrd, logRoot, first + n);
      for (let i = 0; i < perSandbox && n * perSandbox + i < count; i++) {
        const name = `c${i}`;
        await mkdir(path.join(sb.config.logDirectory ?? '', name), { recursive: true });
        const id = await cri.createContainer({
          podSandboxId: sb.id, sandboxConfig: sb.config,
          config: {
            metadata: { name, attempt: 0 }, image: { image: ctrd.images.busybox }, command: [...command], logPath: `${name}/0.log`,
            labels: { ...sb.config.labels, [CONTAINER_NAME_LABEL]: name },
            linux: { securityContext: { namespaceOptions: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } } },
          },
        });
        await cri.startContainer(id);
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
}

/** Runs pass and lists in turn `passes` times; medians of the CPU each took. */
export async function measure(passes: number, pass: () => Promise<unknown>, lists: () => Promise<unknown>): Promise<Measured> {
  await pass(); // warm: caches, JIT, connections
  await lists();
  const passCpu: number[] = [];
  const listCpu: number[] = [];
  const passWall: number[] = [];
  const { steal } = await withSteal(async () => {
    for (let i = 0; i < passes; i++) {
      let cpu = process.cpuUsage();
      const t = performance.now();
      await pass();
      passWall.push(performance.now() - t);
      let d = process.cpuUsage(cpu);
      passCpu.push((d.user + d.system) / 1000);
      cpu = process.cpuUsage();
      await lists();
      d = process.cpuUsage(cpu);
      listCpu.push((d.user + d.system) / 1000);
    }
  });
  return { passCpuMs: percentile(passCpu, 50), listCpuMs: percentile(listCpu, 50), passWallMs: percentile(passWall, 50), passes, steal };
}

export async function runGcBench(o: GcBenchOptions = {}): Promise<GcBenchResult> {
  const print = o.print ?? ((l: string) => void process.stderr.write(`${l}\n`));
  const dead = o.quick === true ? 200 : 1000;
  const images = o.quick === true ? 50 : 200;
  const passes = o.quick === true ? 5 : 20;
  const ctrd = await startContainerd();
  const logRoot = await mkdtemp(path.join(os.tmpdir(), 'na-bench-gc-logs-'));
  const cri = connectCri({ runtimeEndpoint: ctrd.endpoint, requestTimeoutMs: 120_000 });
  // Warnings and errors of the modules measured go to stderr; their info lines nowhere.
  const sink = { write: (stream: 'out' | 'err', line: string) => { if (stream === 'err') process.stderr.write(line); } };
  const logger = new LogRoot({ format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink, clock: realClock }).logger('bench');
  try {
    print(`gc bench: containerd ${ctrd.endpoint}; ${RUNNING} running containers, ${images} images, ${dead} dead containers`);
    await containers(cri, ctrd, logRoot, RUNNING, 5, ['sleep', '3600'], 0);
    await importTestImages(ctrd.socketPath, Array.from({ length: images - 2 }, (_, i) => ({ name: `bench-image-${i}`, randomMiB: 0 })));
    const rotation = createContainerLogManager({ runtime: cri, clock: realClock, logger, maxSizeBytes: 10 << 20, maxFiles: 5 });
    const rotationMeasured = await measure(passes, () => rotation.check(), () => cri.listContainers({ state: { state: 'CONTAINER_RUNNING' } }));
    print(`rotation check: ${rotationMeasured.passCpuMs} ms CPU (list ${rotationMeasured.listCpuMs} ms), steal ${rotationMeasured.steal.toFixed(1)} %`);

    const started = performance.now();
    await containers(cri, ctrd, logRoot, dead, CONTAINERS_PER_SANDBOX, ['true'], RUNNING);
    const exited = async (): Promise<boolean> => (await cri.listContainers({ state: { state: 'CONTAINER_EXITED' } })).length >= dead;
    while (!(await exited())) await new Promise((r) => setTimeout(r, 500));
    print(`${dead} dead containers made in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    const containerGC = createContainerGC({
      runtime: cri, pods: { sourcesReady: () => true, isRemovable: () => false }, podLogsDir: logRoot, now: Date.now, logger,
      policy: { minAgeMs: 0, maxPerPodContainer: -1, maxContainers: -1 },
    });
    const containerMeasured = await measure(passes, () => containerGC.collect(), () => Promise.all([cri.listContainers(), cri.listPodSandbox()]));
    print(`container GC pass: ${containerMeasured.passCpuMs} ms CPU (lists ${containerMeasured.listCpuMs} ms), steal ${containerMeasured.steal.toFixed(1)} %`);
    const imageGC = createImageGC({
      images: cri, containers: cri, imageFs: imageFsSource({ images: cri, runtime: cri }), sandboxImages: () => Promise.resolve([ctrd.images.pause]),
      policy: { highThresholdPercent: 99, lowThresholdPercent: 98, minAgeMs: 0 }, now: Date.now, logger,
    });
    const imageMeasured = await measure(passes, async () => {
      const r = await imageGC.collect();
      if (r.removed.length > 0) throw new Error(`the image GC bench removed images: the file system is ${r.usagePercent}% full`);
    }, () => Promise.all([cri.listImages(), cri.listContainers()]));
    print(`image GC pass: ${imageMeasured.passCpuMs} ms CPU (lists ${imageMeasured.listCpuMs} ms), steal ${imageMeasured.steal.toFixed(1)} %`);
    return { dead, running: RUNNING, images, containerGC: containerMeasured, imageGC: imageMeasured, rotation: rotationMeasured };
  } finally {
    cri.close();
    await ctrd.stop();
    await rm(logRoot, { recursive: true, force: true });
  }
}

const cpu = (m: Measured): string => `${m.passCpuMs.toFixed(1)} ms CPU (${m.passWallMs.toFixed(0)} ms wall)`;

/** The rows of the figures table (bench/README.md). */
export function gcRows(r: GcBenchResult): Row[] {
  return [
    {
      measure: `container GC pass, ${r.dead.toLocaleString('en-US')} dead + ${r.running} running containers: agent CPU per pass`,
      baseline: `ListContainers + ListPodSandbox ${r.containerGC.listCpuMs.toFixed(1)} ms CPU`, ours: cpu(r.containerGC), target: '',
    },
    {
      measure: `image GC pass, ${r.images} images (below the threshold): agent CPU per pass`,
      baseline: `ListImages + ListContainers ${r.imageGC.listCpuMs.toFixed(1)} ms CPU`, ours: cpu(r.imageGC), target: '',
    },
    {
      measure: `log rotation check, ${r.running} running containers: agent CPU per check`,
      baseline: `ListContainers (running) ${r.rotation.listCpuMs.toFixed(1)} ms CPU`, ours: cpu(r.rotation), target: '',
    },
  ];
}

async function main(): Promise<void> {
  exitOnSignals();
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
  process.stdout.write(`${formatTable(gcRows(await runGcBench({ quick: values.quick }))).join('\n')}\n`);
}

if (isMain(import.meta.url)) void main();
