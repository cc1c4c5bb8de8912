/**
 * Part of nodeagent's composition root: what keeps the node clean while the agent runs, the
 * garbage collectors (src/agent/gc: dead containers, sandboxes, pod log directories, unused
 * images) and the container log manager (src/agent/containerlogs: rotation), built from the
 * configuration and started, and the garbage collectors' reclaim the eviction manager runs
 * under disk pressure. Not part of --runonce (upstream's runonce starts neither).
 *
 * The GC periods come from src/agent/gc (upstream's, or shorter from the environment).
 */
import type { Clock } from '../api/clock.js';
import { durationToMs } from '../api/duration.js';
import { parseByteSize } from '../api/quantity.js';
import type { ResolvedConfiguration } from '../agent/config/index.js';
import { createContainerLogManager } from '../agent/containerlogs/index.js';
import {
  createContainerGC, createGarbageCollector, createGcMetrics, createImageGC, gcPeriods, imageFsSource, readRuntimeConfig, type GcEvent,
} from '../agent/gc/index.js';
import type { LogRoot } from '../agent/logging/index.js';
import type { CriClient } from '../agent/runtime/cri/index.js';
import type { Registry } from 'prom-client';

export interface NodeCleanupDeps {
  readonly resolved: ResolvedConfiguration;
  readonly logs: LogRoot;
  readonly clock: Clock;
  readonly cri: CriClient;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Every pod source delivered its first snapshot. */
  sourcesReady(): boolean;
  /** The pod is gone: no source wants it and no worker holds it. */
  isRemovable(uid: string): boolean;
  /** No worker holds the pod (it finished, or never ran), though a source may still want it. */
  isTerminated(uid: string): boolean;
  /** The pod status cache forgets a pod whose objects GC removed. */
  podChanged(uid: string): void;
  /** The agent's /metrics registry. */
  readonly registry: Registry;
  /** API-server mode: records a Warning event on the Node. */
  readonly onEvent?: ((event: GcEvent) => void) | undefined;
}

/** What runs: the start and teardown, and the garbage collectors' reclaim for the eviction manager. */
export interface NodeCleanup {
  start(): void;
  stop(): Promise<void>;
  deleteAllUnusedContainers(): Promise<void>;
  deleteUnusedImages(): Promise<void>;
}

/** Builds the garbage collectors and the log manager; `start` starts them. */
export function createNodeCleanup(d: NodeCleanupDeps): NodeCleanup {
  const c = d.resolved.config;
  const o = d.resolved.options;
  const { cri, clock } = d;
  const { containerPeriodMs, imagePeriodMs } = gcPeriods(d.env);
  const log = d.logs.logger('gc');
  const metrics = createGcMetrics(d.registry);
  const containerGC = createContainerGC({
    runtime: cri,
    pods: { sourcesReady: () => d.sourcesReady(), isRemovable: (uid) => d.isRemovable(uid), isTerminated: (uid) => d.isTerminated(uid) },
    policy: { minAgeMs: durationToMs(o.minimumContainerTTLDuration), maxPerPodContainer: o.maximumDeadContainersPerContainer, maxContainers: o.maximumDeadContainers },
    podLogsDir: c.podLogsDir,
    now: () => clock.now(),
    logger: log,
    onPodChanged: (uid) => { d.podChanged(uid); },
    onRemoved: (object) => { metrics.containerRemoved(object); },
  });
  // The runtime's own sandbox image (containerd 1.6 does not pin it), read once it answers.
  let runtimeSandboxImage: string | undefined;
  const imageGC = createImageGC({
    images: cri,
    containers: cri,
    imageFs: imageFsSource({ images: cri, runtime: cri }),
    sandboxImages: async () => {
      runtimeSandboxImage ??= (await readRuntimeConfig(cri)).sandboxImage;
      return [o.podInfraContainerImage, runtimeSandboxImage].filter((ref) => ref !== '');
    },
    policy: { highThresholdPercent: c.imageGCHighThresholdPercent, lowThresholdPercent: c.imageGCLowThresholdPercent, minAgeMs: durationToMs(c.imageMinimumGCAge) },
    now: () => clock.now(),
    logger: log,
    onRemoved: () => { metrics.imageRemoved(); },
  });
  const collector = createGarbageCollector({
    containerGC, imageGC, clock, logger: log, containerPeriodMs, imagePeriodMs, metrics,
    // imageGCHighThresholdPercent 100 turns the periodic pass off, not the eviction manager's reclaim (as upstream).
    periodicImageGC: c.imageGCHighThresholdPercent < 100,
    ...(d.onEvent === undefined ? {} : { onEvent: d.onEvent }),
  });
  const rotation = createContainerLogManager({
    runtime: cri,
    clock,
    logger: d.logs.logger('containerlogs'),
    maxSizeBytes: parseByteSize(c.containerLogMaxSize, 'containerLogMaxSize'),
    maxFiles: c.containerLogMaxFiles,
    maxWorkers: c.containerLogMaxWorkers,
    monitorPeriodMs: durationToMs(c.containerLogMonitorInterval),
  });
  return {
    start() {
      collector.start();
      rotation.start();
    },
    async stop() {
      await rotation.stop();
      await collector.stop();
    },
    deleteAllUnusedContainers: () => collector.deleteAllUnusedContainers(),
    deleteUnusedImages: () => collector.deleteUnusedImages(),
  };
}
