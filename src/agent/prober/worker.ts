/**
 * One probe worker (upstream: prober/worker.go): probes one container's liveness, readiness or
 * startup every period with a timer (never a loop), from the newest instance it was shown.
 *
 *   | situation (checked at each tick, in order)          | what the worker does                          |
 *   |-----------------------------------------------------|-----------------------------------------------|
 *   | a new container instance was observed               | forget the old result; store the initial one  |
 *   |                                                     | (readiness: failure, liveness: success,       |
 *   |                                                     | startup: none); probe at start+initialDelay   |
 *   | the instance is not running                         | store failure; wait for the next instance     |
 *   | on hold (liveness/startup failed this instance)     | wait for the next instance                    |
 *   | the pod is being deleted (liveness, startup)        | store success; stop probing                   |
 *   | within initialDelaySeconds of the start             | wait until it has passed                      |
 *   | the startup probe has not succeeded (liveness, ...) | wait a period                                 |
 *   | the startup probe succeeded (startup worker)        | stop probing this instance                    |
 *   | otherwise                                           | probe; store the result once it repeated      |
 *   |                                                     | successThreshold / failureThreshold times     |
 *
 * A liveness or startup failure puts the worker on hold: the runtime manager kills the
 * instance, and probing resumes with the next one. A worker is woken early (`trigger`) when its
 * container starts or its startup probe succeeds, so readiness follows at once.
 */
import type { Container, Probe } from 'kubernetes-types/core/v1.js';
import type { Clock } from '../../api/clock.js';
import type { Logger } from '../logging/index.js';
import type { ProberMetrics, ProbeSeries } from './metrics.js';
import { probeTimings, type ProbeTarget, type ProbeTimings } from './probe.js';
import type { ExecRunner } from './socket.js';
import type { PodEvent, ProbeOutcome, ProbedContainer, ProbeType } from './types.js';
import type { NodePod } from '../../api/pod/index.js';

/**
 * Waits of probe workers are rounded up to a multiple of this (ms since the epoch), so that
 * workers due about the same time wake the process once: with hundreds of probes a second,
 * each wake-up of the event loop costs more than the probe's own work. A delay of 0 (a
 * trigger) is never rounded.
 */
export const TIMER_QUANTUM_MS = 100;

/** The wait at `now` for a delay of `delayMs`, ending on a multiple of TIMER_QUANTUM_MS (0 stays 0). */
export function quantizedDelay(now: number, delayMs: number): number {
  return delayMs <= 0 ? 0 : Math.ceil((now + delayMs) / TIMER_QUANTUM_MS) * TIMER_QUANTUM_MS - now;
}

/** Where workers store results (by container ID) and read the startup verdict. */
export interface WorkerResults {
  set(containerId: string, type: ProbeType, result: 'success' | 'failure', notify: boolean): void;
  remove(containerId: string, type: ProbeType): void;
  /** True when the instance's startup probe succeeded or the container has none. */
  started(containerId: string): boolean;
}

export interface WorkerDeps {
  readonly exec: ExecRunner;
  /** The probe timers and the probes' durations. */
  readonly clock: Clock;
  readonly logger: Logger;
  readonly results: WorkerResults;
  readonly metrics: ProberMetrics | undefined;
  readonly onEvent: ((e: PodEvent) => void) | undefined;
  /** Runs one probe (default: runProbe; tests inject outcomes). */
  readonly run: (probe: Probe, target: ProbeTarget) => Promise<ProbeOutcome>;
}

const INITIAL: Readonly<Record<ProbeType, 'success' | 'failure' | undefined>> = { Liveness: 'success', Readiness: 'failure', Startup: undefined };

export class ProbeWorker {
  readonly timings: ProbeTimings;
  private instance: ProbedContainer | undefined;
  private podIP = '';
  private lastResult: 'success' | 'failure' | undefined;
  private resultRun = 0;
  private onHold = false;
  private stopped = false;
  private cancel: (() => void) | undefined;
  private inFlight: Promise<void> | undefined;
  private again = false;
  private series: ProbeSeries | undefined;

  constructor(
    private readonly deps: WorkerDeps,
    private pod: NodePod,
    readonly container: Container,
    readonly type: ProbeType,
    readonly probe: Probe,
  ) {
    this.timings = probeTimings(probe);
  }

  private get id(): string {
    return this.instance?.id ?? '';
  }

  /** The newest instance of the container and the pod's IP, after a sync. Never blocks. */
  observe(pod: NodePod, instance: ProbedContainer | undefined, podIP: string): void {
    if (this.stopped) return;
    this.pod = pod;
    this.podIP = podIP;
    if (instance === undefined) return;
    const previous = this.instance;
    this.instance = instance;
    if (previous?.id !== instance.id) {
      if (previous !== undefined) this.deps.results.remove(previous.id, this.type);
      const initial = INITIAL[this.type];
      if (initial !== undefined) this.deps.results.set(instance.id, this.type, initial, false);
      this.onHold = false;
      this.lastResult = undefined;
      this.resultRun = 0;
      this.trigger();
    } else if (previous.state !== 'running' && instance.state === 'running') {
      this.trigger();
    }
    if (instance.state !== 'running') {
      this.deps.results.set(instance.id, this.type, 'failure', this.type === 'Readiness');
    }
  }

  /** Probes as soon as possible (a tick still honours initialDelaySeconds). */
  trigger(): void {
    if (this.stopped) return;
    if (this.inFlight !== undefined) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  stop(): Promise<void> {
    this.stopped = true;
    this.cancel?.();
    this.cancel = undefined;
    return this.inFlight ?? Promise.resolve();
  }

  private schedule(delayMs: number): void {
    this.cancel?.();
    const { clock } = this.deps;
    const timer = clock.setTimer(quantizedDelay(clock.now(), delayMs), () => {
      this.cancel = undefined;
      this.inFlight = this.tick().finally(() => {
        this.inFlight = undefined;
        if (this.again) {
          this.again = false;
          this.trigger();
        }
      });
    });
    this.cancel = () => {
      timer.cancel();
    };
  }

  /** One tick; schedules the next one when probing should go on. */
  private async tick(): Promise<void> {
    const c = this.instance;
    if (this.stopped || c === undefined || c.state !== 'running' || this.onHold) return;
    const now = this.deps.clock.now();
    const due = c.startedAt + this.timings.initialDelayMs;
    if (now < due) {
      this.schedule(due - now);
      return;
    }
    if (this.type !== 'Readiness' && this.pod.metadata.deletionTimestamp !== undefined) {
      this.deps.results.set(c.id, this.type, 'success', false);
      return;
    }
    const started = this.deps.results.started(c.id);
    if (this.type === 'Startup' && started) return;
    if (this.type !== 'Startup' && !started) {
      this.schedule(this.timings.periodMs);
      return;
    }
    const begin = this.deps.clock.now();
    const outcome = await this.deps.run(this.probe, { container: this.container, containerId: c.id, podIP: this.podIP, exec: this.deps.exec });
    if (!this.probes(c.id)) return; // stopped, or another instance meanwhile
    this.record(outcome, (this.deps.clock.now() - begin) / 1000);
    if (this.probes(c.id)) this.schedule(Math.max(0, begin + this.timings.periodMs - this.deps.clock.now()));
  }

  /** Whether this worker still probes instance `id` (not stopped, not on hold, still the newest). */
  private probes(id: string): boolean {
    return !this.stopped && !this.onHold && this.instance?.id === id;
  }

  private record(outcome: ProbeOutcome, seconds: number): void {
    const labels = { probe_type: this.type, container: this.container.name, pod: this.pod.metadata.name, namespace: this.pod.metadata.namespace };
    const ok = outcome.result === 'success' || outcome.result === 'warning';
    this.series ??= this.deps.metrics?.series(labels);
    this.series?.observe(ok ? 'successful' : outcome.result === 'failure' ? 'failed' : 'unknown', seconds);
    if (outcome.result === 'warning') {
      // As upstream: a probe that passed with a warning (a redirect to another host) says so.
      this.deps.onEvent?.({ type: 'Warning', reason: 'ProbeWarning', message: `${this.type} probe warning: ${outcome.output}`, pod: this.pod, container: labels.container });
    }
    if (!ok) {
      const verb = outcome.result === 'unknown' ? 'errored' : 'failed';
      const message = `${this.type} probe ${verb}: ${outcome.output}`;
      this.deps.logger.v(1, `Probe ${verb}`, { probeType: this.type, pod: `${labels.namespace}/${labels.pod}`, container: labels.container, output: outcome.output });
      this.deps.onEvent?.({ type: 'Warning', reason: 'Unhealthy', message, pod: this.pod, container: labels.container });
    }
    if (outcome.result === 'unknown') return; // a probe error keeps the previous result, as upstream
    const result = ok ? 'success' : 'failure';
    if (this.lastResult === result) this.resultRun++;
    else {
      this.lastResult = result;
      this.resultRun = 1;
    }
    if ((result === 'failure' && this.resultRun < this.timings.failureThreshold) || (result === 'success' && this.resultRun < this.timings.successThreshold)) return;
    this.deps.results.set(this.id, this.type, result, true);
    if (this.type !== 'Readiness' && result === 'failure') {
      this.onHold = true; // the instance is to be killed: probe the next one
      this.resultRun = 0;
    }
  }
}
