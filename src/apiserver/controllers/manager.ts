/**
 * The controller manager inside orch-apiserver: the enabled loops run while this replica leads
 * (leader election on a Lease; without it, at once). Each leader term builds its informers
 * (those the enabled loops read, loops.ts), lets the loops register, lists, then starts
 * the loops; a lost term closes them all. Terms never overlap: a new one starts after the last
 * one closed.
 */
import type { Clock, Timer } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import { ClientEventRecorder, Informer, type Log } from './client/index.js';
import { LeaderElector } from './leaderelection/index.js';
import { buildLoop, INFORMED, INFORMERS_OF, type ControllerClients, type ControllerFeatures, type Informers, type Loop } from './loops.js';
import type { Binder } from './scheduler/index.js';
import { CONTROLLER_NAMES, controllerEnabled, type ControllerName } from './selection.js';

export type { ControllerClients, ControllerFeatures } from './loops.js';

export interface LeaderElectionOptions {
  /** --leader-elect: false runs the loops at once. */
  readonly enabled: boolean;
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

export interface ControllerManagerOptions {
  readonly clients: ControllerClients;
  readonly binder: Binder;
  /** --controllers. */
  readonly controllers: readonly string[];
  readonly leaderElection: LeaderElectionOptions;
  readonly nodeMonitorPeriodMs: number;
  readonly nodeMonitorGracePeriodMs: number;
  readonly nodeStartupGracePeriodMs: number;
  readonly terminatedPodGcThreshold: number;
  /** The CA bundle the root CA publisher puts in every namespace. */
  readonly rootCaPem: string;
  /** The feature gates the loops act on. */
  readonly features: ControllerFeatures;
  readonly clock: Clock;
  readonly log: Log;
  /** The reportingInstance of events is `<controller>-<hostname>`. */
  readonly hostname: string;
}

export class ControllerManager {
  private readonly options: ControllerManagerOptions;
  private readonly elector: LeaderElector | undefined;
  /** The current term's teardown (undefined when not leading). */
  private term: (() => Promise<void>) | undefined;
  private chain: Promise<void> = Promise.resolve();
  /** Whether a term should run (leading, or no election); a term that failed to start is retried while it is. */
  private wanted = false;
  private retry: Timer | undefined;

  constructor(options: ControllerManagerOptions) {
    this.options = options;
    const le = options.leaderElection;
    this.elector = !le.enabled ? undefined : new LeaderElector({
      leases: options.clients.leases,
      clock: options.clock,
      log: options.log,
      config: le,
      callbacks: {
        onStartedLeading: () => { this.want(true); },
        onStoppedLeading: () => { this.want(false); },
        onNewLeader: (identity) => {
          if (identity !== le.identity) options.log(`leader election: ${identity} leads; the control loops run there`);
        },
      },
    });
  }

  /** Whether the loops of this replica run (a term is started). */
  get running(): boolean {
    return this.term !== undefined;
  }

  enabled(name: ControllerName): boolean {
    return controllerEnabled(this.options.controllers, name);
  }

  /** Starts the election, or the loops at once without it; with no loop enabled, nothing (no Lease is written). */
  start(): void {
    if (!CONTROLLER_NAMES.some((n) => this.enabled(n))) {
      this.options.log('controllers: none enabled (--controllers); no leader election');
      return;
    }
    if (this.elector === undefined) this.want(true);
    else this.elector.start();
  }

  /** Stops the loops (and gives up the lead). */
  async close(): Promise<void> {
    await this.elector?.close();
    this.want(false);
    await this.chain;
  }

  private want(run: boolean): void {
    this.wanted = run;
    this.retry?.cancel();
    this.enqueue(() => (run ? this.startTerm() : this.stopTerm()));
  }

  private enqueue(step: () => Promise<void>): void {
    this.chain = this.chain.then(step).catch((err: unknown) => {
      this.options.log(`controllers: ${messageOf(err)}`);
    });
  }

  private async stopTerm(): Promise<void> {
    const stop = this.term;
    this.term = undefined;
    await stop?.();
  }

  private async startTerm(): Promise<void> {
    if (this.term !== undefined || !this.wanted) return;
    const o = this.options;
    const names = CONTROLLER_NAMES.filter((n) => this.enabled(n));
    if (names.length === 0) return;
    const informers = Object.fromEntries(INFORMED.map((r) => [r, new Informer({ client: o.clients[r], clock: o.clock, log: o.log, what: r })])) as Informers;
    const recorder = (controller: string): ClientEventRecorder =>
      new ClientEventRecorder({ events: o.clients.events, clock: o.clock, log: o.log, controller, instance: `${controller}-${o.hostname}` });
    const loops: Loop[] = names.map((name) => buildLoop(name, {
      informers, clients: o.clients, binder: o.binder, recorder, clock: o.clock, log: o.log,
      nodeMonitorPeriodMs: o.nodeMonitorPeriodMs, nodeMonitorGracePeriodMs: o.nodeMonitorGracePeriodMs, nodeStartupGracePeriodMs: o.nodeStartupGracePeriodMs,
      terminatedPodGcThreshold: o.terminatedPodGcThreshold, rootCaPem: o.rootCaPem, features: o.features,
    }));
    // Each informer the enabled loops read, listed and watched once.
    const used = [...new Set(names.flatMap((n) => INFORMERS_OF[n]))].map((r) => informers[r]);
    const close = async (): Promise<void> => {
      for (const loop of loops) await loop.close();
      for (const i of used) await i.close();
    };
    this.term = close;
    try {
      for (const i of used) await i.start();
    } catch (err) {
      this.term = undefined;
      await close();
      o.log(`controllers: the control loops cannot start (trying again in 1 s): ${messageOf(err)}`);
      this.retry = o.clock.setTimer(1_000, () => {
        if (this.wanted) this.enqueue(() => this.startTerm());
      });
      return;
    }
    for (const loop of loops) loop.start();
    o.log(`controllers: running ${names.join(', ')}`);
  }
}
