/**
 * The controller manager inside orch-apiserver: the enabled loops run while this replica leads
 * (leader election on a Lease; without it, at once). Each leader term builds its informers
 * (pods, nodes, node leases, as the loops need them), lets the loops register, lists, then starts
 * the loops; a lost term closes them all. Terms never overlap: a new one starts after the last
 * one closed.
 */
import type { Clock, Timer } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import { ClientEventRecorder, Informer, type Log, type ResourceClient } from './client/index.js';
import { LeaderElector } from './leaderelection/index.js';
import { NodeLifecycleController, TaintEvictionController } from './nodelifecycle/index.js';
import { PodGarbageCollector } from './podgc/index.js';
import { Scheduler, type Binder } from './scheduler/index.js';
import { RootCaPublisher, ServiceAccountsController } from './serviceaccounts/index.js';
import { CONTROLLER_NAMES, controllerEnabled, type ControllerName } from './selection.js';

/** The informers the enabled loops read (each listed and watched once per term). */
function informersOf(names: readonly ControllerName[], all: Record<'nodes' | 'pods' | 'nodeLeases' | 'namespaces' | 'serviceAccounts' | 'configMaps', Informer>): Informer[] {
  const wanted = new Set<Informer>();
  for (const name of names) {
    if (name === 'scheduler' || name === 'taint-eviction-controller' || name === 'pod-garbage-collector-controller') wanted.add(all.nodes).add(all.pods);
    if (name === 'node-lifecycle-controller') wanted.add(all.nodes).add(all.pods).add(all.nodeLeases);
    if (name === 'serviceaccount-controller') wanted.add(all.namespaces).add(all.serviceAccounts);
    if (name === 'root-ca-certificate-publisher-controller') wanted.add(all.namespaces).add(all.configMaps);
  }
  return [...wanted];
}

export interface ControllerClients {
  readonly pods: ResourceClient;
  readonly nodes: ResourceClient;
  /** Leases of orch-node-lease (the node agents' heartbeats). */
  readonly nodeLeases: ResourceClient;
  /** Leases of the leader election's namespace. */
  readonly leases: ResourceClient;
  /** events.orch.io/v1 events. */
  readonly events: ResourceClient;
  readonly namespaces: ResourceClient;
  readonly serviceAccounts: ResourceClient;
  readonly configMaps: ResourceClient;
}

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
  readonly clock: Clock;
  readonly log: Log;
  /** The reportingInstance of events is `<controller>-<hostname>`. */
  readonly hostname: string;
}

interface Loop {
  start(): void;
  close(): Promise<void>;
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
    const informer = (client: ResourceClient, what: string): Informer => new Informer({ client, clock: o.clock, log: o.log, what });
    const pods = informer(o.clients.pods, 'pods');
    const nodes = informer(o.clients.nodes, 'nodes');
    const nodeLeases = informer(o.clients.nodeLeases, 'node leases');
    const namespaces = informer(o.clients.namespaces, 'namespaces');
    const serviceAccounts = informer(o.clients.serviceAccounts, 'service accounts');
    const configMaps = informer(o.clients.configMaps, 'configmaps');
    const recorder = (controller: string): ClientEventRecorder =>
      new ClientEventRecorder({ events: o.clients.events, clock: o.clock, log: o.log, controller, instance: `${controller}-${o.hostname}` });
    const common = { clock: o.clock, log: o.log };
    const loops: Loop[] = names.map((name): Loop => {
      switch (name) {
        case 'scheduler':
          return new Scheduler({ ...common, pods, nodes, podsClient: o.clients.pods, binder: o.binder, recorder: recorder('default-scheduler') });
        case 'node-lifecycle-controller':
          return new NodeLifecycleController({
            ...common, nodes, leases: nodeLeases, pods, nodesClient: o.clients.nodes, podsClient: o.clients.pods, recorder: recorder('node-controller'),
            monitorPeriodMs: o.nodeMonitorPeriodMs, gracePeriodMs: o.nodeMonitorGracePeriodMs, startupGracePeriodMs: o.nodeStartupGracePeriodMs,
          });
        case 'taint-eviction-controller':
          return new TaintEvictionController({ ...common, nodes, pods, podsClient: o.clients.pods, recorder: recorder('taint-eviction-controller') });
        case 'pod-garbage-collector-controller':
          return new PodGarbageCollector({ ...common, pods, nodes, podsClient: o.clients.pods, nodesClient: o.clients.nodes, terminatedThreshold: o.terminatedPodGcThreshold });
        case 'serviceaccount-controller':
          return new ServiceAccountsController({ ...common, namespaces, serviceAccounts, serviceAccountsClient: o.clients.serviceAccounts });
        case 'root-ca-certificate-publisher-controller':
          return new RootCaPublisher({ ...common, namespaces, configMaps, configMapsClient: o.clients.configMaps, caPem: o.rootCaPem });
      }
    });
    const informers = informersOf(names, { nodes, pods, nodeLeases, namespaces, serviceAccounts, configMaps });
    const close = async (): Promise<void> => {
      for (const loop of loops) await loop.close();
      for (const i of informers) await i.close();
    };
    this.term = close;
    try {
      for (const i of informers) await i.start();
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
