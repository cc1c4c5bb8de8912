/**
 * Part of nodeagent's composition root: what keeps the node clean while the agent runs, the
 * garbage collectors (src/agent/gc: dead containers, sandboxes, pod log directories, unused
 * images) and the container log manager (src/agent/containerlogs: rotation), built from the
 * configuration and started, and the garbage collectors' reclaim the eviction manager runs
 * under disk pressure. Not part of --runonce (upstream's runonce starts neither).
 *
 * The GC periods are upstream's constants (1 minute for containers, 5 for images); the
 * environment variables NODEAGENT_CONTAINER_GC_PERIOD and NODEAGENT_IMAGE_GC_PERIOD (Go
 * durations) shorten them for tests and experiments.
 */
import type { Clock } from '../api/clock.js';
import { durationToMs, parseDurationField } from '../api/duration.js';
import { OrchError } from '../api/errors.js';
import { parseByteSize } from '../api/quantity.js';
import type { ResolvedConfiguration } from '../agent/config/index.js';
import { createContainerLogManager } from '../agent/containerlogs/index.js';
import {
  CONTAINER_GC_PERIOD_MS, IMAGE_GC_PERIOD_MS, createContainerGC, createGarbageCollector, createGcMetrics, createImageGC, imageFsSource,
  readRuntimeConfig, type GcEvent,
} from '../agent/gc/index.js';
import type { LogRoot } from '../agent/logging/index.js';
import type { CriClient } from '../agent/runtime/cri/index.js';
import type { Registry } from 'prom-client';

/** A GC period from the environment is not a positive Go duration. */
export const GC_INVALID_PERIOD = 'GC_INVALID_PERIOD';

export const CONTAINER_GC_PERIOD_ENV = 'NODEAGENT_CONTAINER_GC_PERIOD';
export const IMAGE_GC_PERIOD_ENV = 'NODEAGENT_IMAGE_GC_PERIOD';

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

/** A period from `env[name]` in ms, or `fallback` when unset. Throws GC_INVALID_PERIOD. */
export function periodFromEnv(env: Readonly<Record<string, string | undefined>>, name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const ms = durationToMs(parseDurationField(text, name));
  if (!(ms > 0)) throw new OrchError(GC_INVALID_PERIOD, 'invalid', `${name}=${text}: the period must be a positive duration such as 30s`, { subject: name });
  return ms;
}

/** What runs: the teardown, and the garbage collectors' reclaim for the eviction manager. */
export interface NodeCleanup {
  stop(): Promise<void>;
  deleteAllUnusedContainers(): Promise<void>;
  deleteUnusedImages(): Promise<void>;
}

/** Builds and starts the garbage collectors and the log manager. */
export function startNodeCleanup(d: NodeCleanupDeps): NodeCleanup {
  const c = d.resolved.config;
  const o = d.resolved.options;
  const { cri, clock } = d;
  const containerPeriodMs = periodFromEnv(d.env, CONTAINER_GC_PERIOD_ENV, CONTAINER_GC_PERIOD_MS);
  const imagePeriodMs = periodFromEnv(d.env, IMAGE_GC_PERIOD_ENV, IMAGE_GC_PERIOD_MS);
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
  collector.start();
  rotation.start();
  return {
    async stop() {
      await rotation.stop();
      await collector.stop();
    },
    deleteAllUnusedContainers: () => collector.deleteAllUnusedContainers(),
    deleteUnusedImages: () => collector.deleteUnusedImages(),
  };
}
