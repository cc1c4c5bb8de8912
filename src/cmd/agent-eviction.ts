/**
 * Part of nodeagent's composition root: the eviction manager (src/agent/eviction) built from
 * the configuration (evictionHard, evictionSoft, evictionSoftGracePeriod,
 * evictionMinimumReclaim, evictionPressureTransitionPeriod, evictionMaxPodGracePeriod,
 * enforceNodeAllocatable, localStorageCapacityIsolation) and wired to what it reads (the node's
 * signal sources, the stats provider's pod stats, the desired pods and their workers) and what
 * it drives (the pod workers' kill path with the Evicted failure, the garbage collectors'
 * reclaim, events and metrics). Built before the sync loop (its admission check comes first,
 * as upstream's), started once the garbage collectors run. Not part of --runonce.
 */
import type { Registry } from 'prom-client';
import type { Clock } from '../api/clock.js';
import type { NodePod } from '../api/pod/index.js';
import { cgroupConfigOf } from '../agent/cm/index.js';
import type { ResolvedConfiguration } from '../agent/config/index.js';
import {
  createEvictionManager, createEvictionMetrics, createPodTerminator, createSignalReader, evictionSettings, memoryCgroupDirs,
  type EvictionEvent, type EvictionManager, type NodeReclaim, type PodStatsView, type PressureCondition,
} from '../agent/eviction/index.js';
import { imageFsMountpoint } from '../agent/gc/index.js';
import type { LogRoot } from '../agent/logging/index.js';
import type { NodePressure } from '../agent/nodestatus/index.js';
import type { PodWorkers } from '../agent/podworkers/index.js';
import type { CriClient } from '../agent/runtime/cri/index.js';
import type { AdmitHandler, DesiredPods } from '../agent/syncloop/index.js';

export interface EvictionDeps {
  readonly resolved: ResolvedConfiguration;
  readonly logs: LogRoot;
  readonly clock: Clock;
  readonly cri: CriClient;
  readonly pods: DesiredPods;
  readonly workers: PodWorkers;
  /** The stats provider's pods (snapshots at most `maxAgeMs` old). */
  readonly podStats: (maxAgeMs: number) => Promise<readonly PodStatsView[]>;
  readonly registry: Registry;
  readonly onNodeEvent?: ((e: EvictionEvent) => void) | undefined;
  readonly onPodEvent?: ((pod: NodePod, e: EvictionEvent) => void) | undefined;
  /** The pressure conditions changed: the node status reports them now. */
  readonly onPressureChange: () => void;
  /** The garbage collectors' reclaim under disk pressure. */
  readonly reclaim: NodeReclaim;
}

export interface Eviction {
  /** The eviction manager's admission check (the sync loop's first). */
  readonly admit: AdmitHandler;
  /** MemoryPressure, DiskPressure and PIDPressure for the node status. */
  pressure(): NodePressure;
  /** Starts the monitoring loop. */
  start(): void;
  stop(): Promise<void>;
}

export async function createEviction(d: EvictionDeps): Promise<Eviction> {
  const c = d.resolved.config;
  const settings = evictionSettings(c);
  const cgroups = await memoryCgroupDirs(cgroupConfigOf(c));
  const log = d.logs.logger('eviction');
  const imageFs = imageFsMountpoint({ images: d.cri, runtime: d.cri });
  const signals = createSignalReader({
    rootDir: d.resolved.options.rootDir,
    imageFsPath: () => imageFs().catch(() => undefined),
    memoryCgroupDir: cgroups.root,
    podsCgroupDir: cgroups.pods,
    clock: d.clock,
  });
  const manager: EvictionManager = createEvictionManager({
    ...settings,
    signals,
    podStats: { podStats: (maxAgeMs) => d.podStats(maxAgeMs) },
    activePods: () => d.pods.activePods(),
    podCleanedUp: (uid) => d.workers.stateOf(uid) === undefined,
    terminator: createPodTerminator({
      workers: d.workers, clock: d.clock,
      onExceeded: (pod, message) => { d.onPodEvent?.(pod, { type: 'Warning', reason: 'ExceededGracePeriod', message }); },
    }),
    reclaim: d.reclaim,
    clock: d.clock,
    logger: log,
    metrics: createEvictionMetrics(d.registry),
    ...(d.onNodeEvent === undefined ? {} : { onNodeEvent: d.onNodeEvent }),
    ...(d.onPodEvent === undefined ? {} : { onPodEvent: d.onPodEvent }),
    onPressureChange: () => { d.onPressureChange(); },
  });
  const has = (condition: PressureCondition): boolean => manager.conditions().includes(condition);
  return {
    admit: (pod) => manager.admit(pod),
    pressure: () => ({ memory: has('MemoryPressure'), disk: has('DiskPressure'), pid: has('PIDPressure') }),
    start() {
      manager.start();
    },
    stop: () => manager.stop(),
  };
}
