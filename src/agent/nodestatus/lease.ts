/**
 * The node lease (upstream: component-helpers' lease controller as the kubelet runs it): a
 * coordination.orch.io/v1 Lease named after the node in orch-node-lease, held by the node, with
 * leaseDurationSeconds, a micro-time renewTime and an owner reference to the Node once its uid
 * is known. Renewed every 0.25 × the lease duration (with 4 % jitter) by PUT on the last
 * resourceVersion, up to 5 tries; a conflict or repeated failure falls back to GET (or create
 * when missing) with a back-off of 200 ms doubling to 7 s. Never throws.
 */
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import type { Clock } from '../../api/clock.js';
import { OrchError, isConflict, isNotFound, messageOf } from '../../api/errors.js';
import { formatMicroTime } from '../../api/time.js';
import type { RestClient } from '../orchclient/index.js';
import { Backoff, silentLogger } from './backoff.js';
import { nodePath } from './registration.js';
import type { NodeStatusLogger, WireLease, WireNode } from './types.js';

/** The lease could not be renewed in 5 tries (logged; the next interval tries again). */
export const NODE_LEASE_UPDATE_FAILED = 'NODE_LEASE_UPDATE_FAILED';

export const LEASE_NAMESPACE = 'orch-node-lease';
export const LEASE_API_VERSION = 'coordination.orch.io/v1';
export const RENEW_INTERVAL_FRACTION = 0.25;
export const LEASE_MAX_UPDATE_RETRIES = 5;
export const LEASE_BACKOFF_INITIAL_MS = 200;
export const LEASE_BACKOFF_MAX_MS = 7_000;
const JITTER = 0.04;

export const leasesPath = (namespace = LEASE_NAMESPACE): string => `/apis/coordination.orch.io/v1/namespaces/${namespace}/leases`;
export const leasePath = (name: string, namespace = LEASE_NAMESPACE): string => `${leasesPath(namespace)}/${encodeURIComponent(name)}`;

export interface LeaseControllerOptions {
  readonly client: RestClient;
  readonly nodeName: string;
  /** nodeLeaseDurationSeconds. */
  readonly leaseDurationSeconds: number;
  /** Default 0.25 × the lease duration. */
  readonly renewIntervalMs?: number;
  /**
   * The Node the lease belongs to (e.g. the status controller's node()); when absent, the
   * controller GETs the Node itself. The owner reference is added once the uid is known.
   */
  readonly node?: () => WireNode | undefined;
  /** Called when renewing failed more than once in a row (upstream closes idle connections). */
  readonly onRepeatedFailure?: () => void;
  /** Renewal times and the waits between renewals. */
  readonly clock: Clock;
  readonly logger?: NodeStatusLogger;
  /** In [0, 1); default Math.random (jitter of the renew interval). */
  readonly random?: () => number;
}

export interface LeaseController {
  /** Starts renewing in the background. */
  start(): void;
  /** Stops and waits for a renewal in flight. */
  stop(): Promise<void>;
  /** The Lease as the server last returned it. */
  lease(): WireLease | undefined;
}

export function createLeaseController(options: LeaseControllerOptions): LeaseController {
  const { clock } = options;
  const logger = options.logger ?? silentLogger;
  const random = options.random ?? Math.random;
  const { client, nodeName } = options;
  const interval = options.renewIntervalMs ?? options.leaseDurationSeconds * 1000 * RENEW_INTERVAL_FRACTION;
  const path = leasePath(nodeName);
  const stopper = new AbortController();
  const signal = stopper.signal;
  /** Read through a call: the compiler would narrow `signal.aborted` across awaits. */
  const stopped = (): boolean => signal.aborted;
  let latest: WireLease | undefined;
  let loop: Promise<void> | undefined;

  const owner = async (): Promise<OwnerReference | undefined> => {
    let node: WireNode | undefined;
    if (options.node !== undefined) {
      node = options.node();
    } else {
      try {
        node = await client.get<WireNode>(nodePath(nodeName), { exempt: true, signal });
      } catch (err) {
        logger.warn('failed to get the node for the lease owner reference', { node: nodeName, err: messageOf(err) });
      }
    }
    const uid = node?.metadata?.uid;
    if (uid === undefined || uid === '') return undefined;
    return { apiVersion: 'v1', kind: 'Node', name: nodeName, uid };
  };

  const newLease = async (base: WireLease | undefined): Promise<WireLease> => {
    const metadata = { ...(base?.metadata ?? {}), name: nodeName, namespace: LEASE_NAMESPACE };
    if ((metadata.ownerReferences ?? []).length === 0) {
      const ref = await owner();
      if (ref !== undefined) metadata.ownerReferences = [ref];
    }
    return {
      ...(base ?? {}),
      apiVersion: LEASE_API_VERSION,
      kind: 'Lease',
      metadata,
      spec: {
        ...(base?.spec ?? {}),
        holderIdentity: nodeName,
        leaseDurationSeconds: options.leaseDurationSeconds,
        renewTime: formatMicroTime(clock.now()),
      },
    };
  };

  /** PUTs a renewed copy of `base`; throws on a conflict at once, else after 5 failures. */
  const retryUpdate = async (base: WireLease): Promise<void> => {
    for (let i = 0; i < LEASE_MAX_UPDATE_RETRIES; i++) {
      if (signal.aborted) return;
      try {
        latest = await client.update<WireLease>(path, await newLease(base), { exempt: true, signal });
        return;
      } catch (err) {
        logger.warn('failed to update lease', { lease: `${LEASE_NAMESPACE}/${nodeName}`, err: messageOf(err) });
        if (isConflict(err)) throw err;
        if (i > 0) options.onRepeatedFailure?.();
      }
    }
    throw new OrchError(NODE_LEASE_UPDATE_FAILED, 'unavailable', `failed ${LEASE_MAX_UPDATE_RETRIES} attempts to update lease ${LEASE_NAMESPACE}/${nodeName}`, {
      subject: `lease ${LEASE_NAMESPACE}/${nodeName}`,
    });
  };

  /** GET the lease, creating it when missing. */
  const ensure = async (): Promise<{ lease: WireLease; created: boolean }> => {
    try {
      return { lease: await client.get<WireLease>(path, { exempt: true, signal }), created: false };
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const lease = await client.create<WireLease>(leasesPath(), await newLease(undefined), { exempt: true, signal });
    latest = lease;
    return { lease, created: true };
  };

  const backoffEnsure = async (): Promise<{ lease: WireLease; created: boolean } | undefined> => {
    const backoff = new Backoff(LEASE_BACKOFF_INITIAL_MS, LEASE_BACKOFF_MAX_MS);
    while (!signal.aborted) {
      try {
        return await ensure();
      } catch (err) {
        if (stopped()) return undefined;
        logger.error('failed to ensure that the node lease exists, will retry', { lease: `${LEASE_NAMESPACE}/${nodeName}`, err: messageOf(err) });
      }
      await clock.sleep(backoff.next(), signal);
    }
    return undefined;
  };

  const sync = async (): Promise<void> => {
    if (latest !== undefined) {
      try {
        await retryUpdate(latest);
        return;
      } catch (err) {
        logger.info('failed to update lease using latest lease, fallback to ensure lease', { err: messageOf(err) });
      }
    }
    const ensured = await backoffEnsure();
    if (ensured === undefined || ensured.created) return;
    try {
      await retryUpdate(ensured.lease);
    } catch (err) {
      logger.error('failed to renew the node lease', { lease: `${LEASE_NAMESPACE}/${nodeName}`, err: messageOf(err) });
    }
  };

  const run = async (): Promise<void> => {
    while (!signal.aborted) {
      await sync();
      await clock.sleep(interval * (1 + JITTER * random()), signal);
    }
  };

  return {
    start() {
      loop ??= run();
    },
    async stop() {
      stopper.abort();
      await loop;
    },
    lease: () => latest,
  };
}
