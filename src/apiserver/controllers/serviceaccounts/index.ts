/**
 * controllers/serviceaccounts: what every namespace holds for its pods' service accounts, after
 * two upstream loops of kube-controller-manager:
 *
 * - serviceaccount-controller: the ServiceAccount `default` in every active namespace, made
 *   again when it is deleted;
 * - root-ca-certificate-publisher-controller: the ConfigMap `kube-root-ca.crt` with the cluster's
 *   CA bundle (`ca.crt`) in every active namespace, written back when it is deleted or changed.
 *
 * Each reconciles one namespace at a time from a queue fed by its informers; a failed namespace
 * is tried again after a second. Terminating namespaces are left alone.
 *
 * Must not: touch anything but those objects.
 */
import type { Clock, Timer } from '../../../api/clock.js';
import { isAlreadyExists, isNotFound, messageOf } from '../../../api/errors.js';
import { metaOf, namespaceOf, nameOf, str, type WireObject } from '../../registry/index.js';
import { rec } from '../../resources/common/index.js';
import type { Informer, Log, ResourceClient } from '../client/index.js';
import { updateObject } from '../client/index.js';

export const DEFAULT_SERVICE_ACCOUNT_NAME = 'default';
export const ROOT_CA_CONFIG_MAP_NAME = 'kube-root-ca.crt';
/** Upstream's kubernetes.io/description, renamed. */
export const DESCRIPTION_ANNOTATION = 'orch.io/description';
const DESCRIPTION = 'Contains a CA bundle that can be used to verify the orch-apiserver when using internal endpoints such as the internal service IP or orch.default.svc. No other usage is guaranteed across distributions of Orch clusters.';

interface QueueOptions {
  readonly namespaces: Informer;
  readonly clock: Clock;
  readonly log: Log;
  readonly name: string;
  /** Brings one active namespace in line; throws to be tried again. */
  readonly reconcile: (namespace: string) => Promise<void>;
}

/** Namespaces to reconcile, one at a time, each queued at most once. */
class NamespaceQueue {
  private readonly queued = new Set<string>();
  private running: Promise<void> | undefined;
  private readonly timers = new Set<Timer>();
  private started = false;
  private closed = false;

  constructor(private readonly o: QueueOptions) {
    o.namespaces.addHandler({ added: (ns) => { this.add(nameOf(ns)); }, updated: (_old, ns) => { this.add(nameOf(ns)); } });
  }

  start(): void {
    this.started = true;
    for (const ns of this.o.namespaces.list()) this.queued.add(nameOf(ns));
    this.drain();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) t.cancel();
    await this.running;
  }

  add(namespace: string): void {
    if (this.closed || namespace === '') return;
    this.queued.add(namespace);
    if (this.started) this.drain();
  }

  private active(namespace: string): boolean {
    const ns = this.o.namespaces.get('', namespace);
    return ns !== undefined && str(metaOf(ns).deletionTimestamp) === '';
  }

  private drain(): void {
    if (this.running !== undefined || this.closed) return;
    this.running = (async () => {
      while (!this.closed) {
        const next = this.queued.values().next();
        if (next.done === true) break;
        const namespace = next.value;
        this.queued.delete(namespace);
        if (!this.active(namespace)) continue;
        try {
          await this.o.reconcile(namespace);
        } catch (err) {
          this.o.log(`${this.o.name}: namespace ${namespace}: ${messageOf(err)} (trying again in 1 s)`);
          const timer = this.o.clock.setTimer(1_000, () => { this.timers.delete(timer); this.add(namespace); });
          this.timers.add(timer);
        }
      }
    })().finally(() => {
      this.running = undefined;
      // A namespace added after the pass found the queue empty, but before it returned (events
      // of one commit arrive together), found it still running: start the next pass for it.
      if (this.queued.size > 0) this.drain();
    });
  }
}

export interface ServiceAccountsControllerOptions {
  readonly namespaces: Informer;
  readonly serviceAccounts: Informer;
  readonly serviceAccountsClient: ResourceClient;
  readonly clock: Clock;
  readonly log: Log;
}

/** serviceaccount-controller: the `default` service account of every namespace. */
export class ServiceAccountsController {
  private readonly queue: NamespaceQueue;

  constructor(private readonly o: ServiceAccountsControllerOptions) {
    this.queue = new NamespaceQueue({ namespaces: o.namespaces, clock: o.clock, log: o.log, name: 'serviceaccount-controller', reconcile: (ns) => this.reconcile(ns) });
    o.serviceAccounts.addHandler({ deleted: (sa) => { if (nameOf(sa) === DEFAULT_SERVICE_ACCOUNT_NAME) this.queue.add(namespaceOf(sa)); } });
  }

  start(): void {
    this.queue.start();
  }

  close(): Promise<void> {
    return this.queue.close();
  }

  private async reconcile(namespace: string): Promise<void> {
    if (this.o.serviceAccounts.get(namespace, DEFAULT_SERVICE_ACCOUNT_NAME) !== undefined) return;
    try {
      await this.o.serviceAccountsClient.create(namespace, { metadata: { name: DEFAULT_SERVICE_ACCOUNT_NAME, namespace } });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
}

export interface RootCaPublisherOptions {
  readonly namespaces: Informer;
  readonly configMaps: Informer;
  readonly configMapsClient: ResourceClient;
  /** The CA bundle clients verify the API server with (PEM). */
  readonly caPem: string;
  readonly clock: Clock;
  readonly log: Log;
}

/** root-ca-certificate-publisher-controller: `kube-root-ca.crt` in every namespace. */
export class RootCaPublisher {
  private readonly queue: NamespaceQueue;

  constructor(private readonly o: RootCaPublisherOptions) {
    this.queue = new NamespaceQueue({ namespaces: o.namespaces, clock: o.clock, log: o.log, name: 'root-ca-certificate-publisher-controller', reconcile: (ns) => this.reconcile(ns) });
    const mine = (cm: WireObject): void => { if (nameOf(cm) === ROOT_CA_CONFIG_MAP_NAME) this.queue.add(namespaceOf(cm)); };
    o.configMaps.addHandler({ updated: (_old, cm) => { mine(cm); }, deleted: mine });
  }

  start(): void {
    this.queue.start();
  }

  close(): Promise<void> {
    return this.queue.close();
  }

  private async reconcile(namespace: string): Promise<void> {
    const current = this.o.configMaps.get(namespace, ROOT_CA_CONFIG_MAP_NAME);
    const wanted = { 'ca.crt': this.o.caPem };
    if (current === undefined) {
      try {
        await this.o.configMapsClient.create(namespace, { metadata: { name: ROOT_CA_CONFIG_MAP_NAME, namespace, annotations: { [DESCRIPTION_ANNOTATION]: DESCRIPTION } }, data: wanted });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      return;
    }
    const data = rec(current.data);
    const annotations = rec(metaOf(current).annotations);
    if (Object.keys(data).length === 1 && data['ca.crt'] === this.o.caPem && annotations[DESCRIPTION_ANNOTATION] === DESCRIPTION) return;
    try {
      await updateObject(this.o.configMapsClient, namespace, ROOT_CA_CONFIG_MAP_NAME, (cm) => {
        cm.data = wanted;
        metaOf(cm).annotations = { ...rec(metaOf(cm).annotations), [DESCRIPTION_ANNOTATION]: DESCRIPTION };
        return true;
      }, { current });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
