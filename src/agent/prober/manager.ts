/**
 * The prober manager (upstream: prober.Manager with its three results managers): one worker
 * per probe of every container (and of restartable init containers with the SidecarContainers
 * gate), results by container ID, and the views its consumers read:
 *
 *   - the runtime manager: `failedProbe(id)` (kill and restart) and `started(id)` (sidecars);
 *   - the status computation: `readiness(uid)` and `started(uid)` by container name;
 *   - listeners of `onResult` hear every change of a stored result (the pod worker should sync
 *     at once); `onEvent` hears every Unhealthy event (logged here too).
 */
import type { Container, Probe } from 'kubernetes-types/core/v1.js';
import type { Clock } from '../../api/clock.js';
import { podNamespacedName, type NodePod } from '../../api/pod/index.js';
import type { Logger } from '../logging/index.js';
import type { ProberMetrics } from './metrics.js';
import { runProbe } from './probe.js';
import type { ExecRunner } from './socket.js';
import type { FailedProbe, PodEvent, ProbedPodState, ProberManager, ProbeResultChange, ProbeType } from './types.js';
import { ProbeWorker, type WorkerDeps } from './worker.js';

export interface ProberManagerOptions {
  /** The CRI exec of exec probes (the CRI client). */
  readonly exec: ExecRunner;
  readonly logger: Logger;
  /** Where results are counted (createProberMetrics); none when absent. */
  readonly metrics?: ProberMetrics;
  /** Every event (Unhealthy), after it was logged. */
  readonly onEvent?: (event: PodEvent) => void;
  /** Probe restartable init containers too (the SidecarContainers feature gate). */
  readonly sidecarContainers?: boolean;
  /** The probe periods and initial delays. */
  readonly clock: Clock;
  /** Runs one probe (default: the real handlers); tests inject outcomes. */
  readonly runProbe?: WorkerDeps['run'];
}

interface Results {
  readonly podUID: string;
  readonly name: string;
  readonly hasStartup: boolean;
  readonly byType: Map<ProbeType, 'success' | 'failure'>;
}

interface PodEntry {
  pod: NodePod;
  /** key: `${init ? 'init' : 'main'}/${container}/${type}` */
  readonly workers: Map<string, ProbeWorker>;
  /** The newest instance ID by container key (`init/name` or `main/name`). */
  current: Map<string, string>;
}

const TYPES: readonly [ProbeType, 'livenessProbe' | 'readinessProbe' | 'startupProbe'][] = [
  ['Liveness', 'livenessProbe'],
  ['Readiness', 'readinessProbe'],
  ['Startup', 'startupProbe'],
];

interface WantedProbe {
  readonly key: string;
  readonly container: Container;
  readonly init: boolean;
  readonly type: ProbeType;
  readonly probe: Probe;
}

class Manager implements ProberManager {
  private readonly pods = new Map<string, PodEntry>();
  private readonly results = new Map<string, Results>();
  /** Pods whose liveness and startup probes stopped for good (terminating). */
  private readonly terminating = new Set<string>();
  private readonly resultListeners = new Set<(change: ProbeResultChange) => void>();
  private readonly deps: WorkerDeps;

  constructor(private readonly options: ProberManagerOptions) {
    this.deps = {
      exec: options.exec,
      clock: options.clock,
      logger: options.logger,
      metrics: options.metrics,
      onEvent: (e) => {
        this.emit(e);
      },
      run: options.runProbe ?? runProbe,
      results: {
        set: (id, type, result, notify) => {
          this.set(id, type, result, notify);
        },
        remove: (id, type) => this.results.get(id)?.byType.delete(type),
        started: (id) => this.started(id),
      },
    };
  }

  private emit(e: PodEvent): void {
    this.options.logger.info('Event', { type: e.type, reason: e.reason, pod: podNamespacedName(e.pod), container: e.container, message: e.message });
    this.options.onEvent?.(e);
  }

  private set(id: string, type: ProbeType, result: 'success' | 'failure', notify: boolean): void {
    const entry = this.results.get(id);
    if (entry === undefined) return; // an instance no longer current
    const before = entry.byType.get(type);
    entry.byType.set(type, result);
    if (before === result) return;
    if (type === 'Startup' && result === 'success') {
      for (const w of this.pods.get(entry.podUID)?.workers.values() ?? []) if (w.container.name === entry.name && w.type !== 'Startup') w.trigger();
    }
    if (!notify) return;
    const change: ProbeResultChange = { podUID: entry.podUID, container: entry.name, containerId: id, probeType: type, result };
    for (const listener of this.resultListeners) listener(change);
  }

  onResult(listener: (change: ProbeResultChange) => void): () => void {
    this.resultListeners.add(listener);
    return () => this.resultListeners.delete(listener);
  }

  private wanted(pod: NodePod): WantedProbe[] {
    const out: WantedProbe[] = [];
    const readinessOnly = this.terminating.has(pod.metadata.uid);
    const add = (c: Container, init: boolean): void => {
      for (const [type, field] of TYPES) {
        if (readinessOnly && type !== 'Readiness') continue;
        const probe = c[field];
        if (probe !== undefined) out.push({ key: `${init ? 'init' : 'main'}/${c.name}/${type}`, container: c, init, type, probe });
      }
    };
    if (this.options.sidecarContainers === true) for (const c of pod.spec?.initContainers ?? []) if (c.restartPolicy === 'Always') add(c, true);
    for (const c of pod.spec?.containers ?? []) add(c, false);
    return out;
  }

  updatePod(pod: NodePod, state: ProbedPodState): void {
    const { uid } = pod.metadata;
    const wanted = this.wanted(pod);
    let entry = this.pods.get(uid);
    if (entry === undefined) {
      if (wanted.length === 0) return;
      entry = { pod, workers: new Map(), current: new Map() };
      this.pods.set(uid, entry);
    }
    entry.pod = pod;
    const byKey = new Map(wanted.map((w) => [w.key, w]));
    for (const [key, worker] of entry.workers) {
      const want = byKey.get(key);
      if (want === undefined || JSON.stringify(want.probe) !== JSON.stringify(worker.probe)) this.stopWorker(uid, entry, key, worker);
    }
    const current = new Map<string, string>();
    for (const w of wanted) {
      const instance = state.containers.find((c) => c.name === w.container.name && c.init === w.init);
      const containerKey = `${w.init ? 'init' : 'main'}/${w.container.name}`;
      if (instance !== undefined && !current.has(containerKey)) {
        current.set(containerKey, instance.id);
        if (!this.results.has(instance.id)) {
          this.results.set(instance.id, { podUID: uid, name: w.container.name, hasStartup: w.container.startupProbe !== undefined, byType: new Map() });
        }
      }
      let worker = entry.workers.get(w.key);
      if (worker === undefined) {
        worker = new ProbeWorker(this.deps, pod, w.container, w.type, w.probe);
        entry.workers.set(w.key, worker);
      }
      worker.observe(pod, instance, state.podIPs[0] ?? '');
    }
    const live = new Set(current.values());
    for (const [id, r] of this.results) if (r.podUID === uid && !live.has(id)) this.results.delete(id);
    entry.current = current;
  }

  /** Stops a worker and drops its metrics; its results too, unless the container keeps its verdicts (terminating). */
  private stopWorker(uid: string, entry: PodEntry, key: string, worker: ProbeWorker, keepResults = false): void {
    void worker.stop();
    entry.workers.delete(key);
    this.options.metrics?.forget({ probe_type: worker.type, container: worker.container.name, pod: entry.pod.metadata.name, namespace: entry.pod.metadata.namespace });
    if (keepResults) return;
    for (const r of this.results.values()) if (r.podUID === uid && r.name === worker.container.name) r.byType.delete(worker.type);
  }

  stopLivenessAndStartup(podUID: string): void {
    this.terminating.add(podUID);
    const entry = this.pods.get(podUID);
    if (entry === undefined) return;
    for (const [key, worker] of entry.workers) if (worker.type !== 'Readiness') this.stopWorker(podUID, entry, key, worker, true);
  }

  removePod(podUID: string): void {
    const entry = this.pods.get(podUID);
    if (entry !== undefined) for (const [key, worker] of entry.workers) this.stopWorker(podUID, entry, key, worker);
    this.pods.delete(podUID);
    this.terminating.delete(podUID);
    for (const [id, r] of this.results) if (r.podUID === podUID) this.results.delete(id);
  }

  async stop(): Promise<void> {
    const stopping: Promise<void>[] = [];
    for (const entry of this.pods.values()) for (const w of entry.workers.values()) stopping.push(w.stop());
    await Promise.allSettled(stopping);
  }

  failedProbe(containerId: string): FailedProbe | undefined {
    const r = this.results.get(containerId);
    if (r?.byType.get('Liveness') === 'failure') return { probe: 'liveness' };
    if (r?.byType.get('Startup') === 'failure') return { probe: 'startup' };
    return undefined;
  }

  started(containerId: string): boolean {
    const r = this.results.get(containerId);
    return r === undefined || !r.hasStartup || r.byType.get('Startup') === 'success';
  }

  readiness(podUID: string): ReadonlyMap<string, boolean> {
    const out = new Map<string, boolean>();
    const entry = this.pods.get(podUID);
    if (entry === undefined) return out;
    for (const [containerKey, id] of entry.current) {
      const r = this.results.get(id);
      if (r === undefined) continue;
      const hasReadiness = entry.workers.has(`${containerKey}/Readiness`);
      if (!hasReadiness && !r.hasStartup) continue;
      out.set(r.name, this.started(id) && (!hasReadiness || r.byType.get('Readiness') === 'success'));
    }
    return out;
  }

  startedContainers(podUID: string): ReadonlyMap<string, boolean> {
    const out = new Map<string, boolean>();
    const entry = this.pods.get(podUID);
    for (const id of entry?.current.values() ?? []) {
      const r = this.results.get(id);
      if (r?.hasStartup === true) out.set(r.name, this.started(id));
    }
    return out;
  }
}

/** The prober manager. Starts nothing until updatePod is called. */
export function createProberManager(options: ProberManagerOptions): ProberManager {
  return new Manager(options);
}
