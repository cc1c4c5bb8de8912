/**
 * The node status controller: registers the node (when registerNode), then reports its status
 * every nodeStatusUpdateFrequency (upstream: syncNodeStatus / updateNodeStatus /
 * tryUpdateNodeStatus). Each report GETs the Node, computes the status and PATCHes the status
 * subresource only when something besides heartbeat times changed or nodeStatusReportFrequency
 * has passed since the last write; a failed report is retried up to 5 times, then waits for the
 * next tick. The loop never throws.
 */
import type { Clock } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import type { RestClient } from '../orchclient/index.js';
import { silentLogger } from './backoff.js';
import { readMachineInfo, type MachineInfo, type MachineInfoOptions } from './machine.js';
import { initialNode, type NodeIdentity } from './node-object.js';
import { nodePath, nodeStatusPath, registerWithApiServer } from './registration.js';
import { computeStatus, statusChanged, statusPatch, type StatusConfig } from './status.js';
import type { NodeEvent, NodeEventHook, NodeFacts, NodeStatusLogger, WireNode } from './types.js';

/** Upstream's nodeStatusUpdateRetry. */
export const NODE_STATUS_UPDATE_RETRY = 5;

export interface NodeStatusControllerOptions {
  readonly client: RestClient;
  readonly identity: NodeIdentity;
  readonly status: Omit<StatusConfig, 'nodeName' | 'hostname'>;
  readonly facts: NodeFacts;
  /** registerNode: POST the Node first. When false, only status is reported (to an existing Node). */
  readonly registerNode: boolean;
  /** nodeStatusUpdateFrequency in milliseconds. */
  readonly updateFrequencyMs: number;
  /** nodeStatusReportFrequency in milliseconds. */
  readonly reportFrequencyMs: number;
  /** Machine facts; default readMachineInfo(machineInfo). */
  readonly machine?: () => Promise<MachineInfo>;
  /** For the default machine reader: the root directory (ephemeral storage) and file paths. */
  readonly machineInfo?: MachineInfoOptions;
  /** Heartbeat times and the waits between reports. */
  readonly clock: Clock;
  readonly logger?: NodeStatusLogger;
  readonly onEvent?: NodeEventHook;
  /** Told of the Node each time the loop reads it (its spec.podCIDR goes to the runtime). */
  readonly onNode?: (node: WireNode) => void;
}

export interface NodeStatusController {
  /** Registers (when registerNode), then starts the status loop; resolves once registered, or when stopped first. */
  start(): Promise<void>;
  /** Stops the loop and waits for a report in flight. */
  stop(): Promise<void>;
  /** The Node as the server last returned it. */
  node(): WireNode | undefined;
  /** Reports now instead of at the next tick (e.g. when the runtime became ready). */
  requestUpdate(): void;
}

export function createNodeStatusController(options: NodeStatusControllerOptions): NodeStatusController {
  const { clock } = options;
  const logger = options.logger ?? silentLogger;
  const { client, identity } = options;
  const name = identity.nodeName;
  const config: StatusConfig = { ...options.status, nodeName: name, hostname: identity.hostname };
  const machineOptions = options.machineInfo ?? { rootDir: '/' };
  const machine = options.machine ?? (() => readMachineInfo({ logger, ...machineOptions }));
  const sources = { machine, facts: options.facts, logger };
  const stopper = new AbortController();
  /** Read through a call: the compiler would narrow `aborted` across awaits. */
  const stopped = (): boolean => stopper.signal.aborted;
  let wake = new AbortController();
  let wakeRequested = false;
  let current: WireNode | undefined;
  let lastReport: number | undefined;
  let lastUnschedulable = !identity.registerSchedulable;
  let loop: Promise<void> | undefined;
  let started: Promise<void> | undefined;
  /** The Node existed at registration and the agent lost its device checkpoint: its extended resources are zeroed by the next report. */
  let resetExtended = false;

  const emit = (events: readonly NodeEvent[]): void => {
    for (const event of events) {
      try {
        options.onEvent?.(event);
      } catch (err) {
        logger.error('node event hook failed', { reason: event.reason, err: messageOf(err) });
      }
    }
  };

  const schedulableEvents = (node: WireNode): NodeEvent[] => {
    const unschedulable = node.spec?.unschedulable === true;
    if (unschedulable === lastUnschedulable) return [];
    lastUnschedulable = unschedulable;
    const reason = unschedulable ? 'NodeNotSchedulable' : 'NodeSchedulable';
    return [{ type: 'Normal', reason, message: `Node ${name} status is now: ${reason}` }];
  };

  /**
   * One try: the first of an update reads the Node with resourceVersion=0 (the server's watch
   * cache, possibly stale: upstream's util.FromApiserverCache), a retry reads the current one.
   * The status patch carries no precondition; a try that fails for any reason is retried.
   */
  const tryUpdate = async (attempt: number): Promise<void> => {
    const base = await client.get<WireNode>(nodePath(name), { exempt: true, signal: stopper.signal, ...(attempt === 0 ? { query: { resourceVersion: '0' } } : {}) });
    options.onNode?.(base);
    const now = clock.now();
    const { status, events } = await computeStatus(base, sources, config, now, { resetExtended });
    const events2 = schedulableEvents(base);
    const due = lastReport === undefined || now >= lastReport + options.reportFrequencyMs;
    if (!due && !statusChanged(base.status, status)) {
      current = base;
      resetExtended = false;
      emit(events2);
      return;
    }
    const updated = await client.patch<WireNode>(nodeStatusPath(name), 'strategic', statusPatch(base.status, status), { exempt: true, signal: stopper.signal });
    current = updated;
    options.onNode?.(updated);
    lastReport = now;
    resetExtended = false;
    emit([...events, ...events2]);
  };

  const updateOnce = async (): Promise<void> => {
    for (let attempt = 0; attempt < NODE_STATUS_UPDATE_RETRY; attempt++) {
      if (stopper.signal.aborted) return;
      try {
        await tryUpdate(attempt);
        return;
      } catch (err) {
        if (stopped()) return;
        logger.warn('Error updating node status, will retry', { node: name, attempt: attempt + 1, err: messageOf(err) });
      }
    }
    logger.error('Unable to update node status: update node status exceeds retry count', { node: name });
  };

  const run = async (): Promise<void> => {
    while (!stopper.signal.aborted) {
      await updateOnce();
      if (stopped()) return;
      if (!wakeRequested) await clock.sleep(options.updateFrequencyMs, wake.signal);
      wakeRequested = false;
      if (wake.signal.aborted) wake = new AbortController();
    }
  };

  const register = async (): Promise<void> => {
    if (options.registerNode) {
      let pending: NodeEvent[] = [];
      const registered = await registerWithApiServer({
        client, clock, logger, signal: stopper.signal,
        build: async () => {
          const node = initialNode(identity);
          const { status, events } = await computeStatus(undefined, sources, config, clock.now());
          pending = events;
          return { ...node, status };
        },
      });
      if (registered === undefined) return;
      current = registered.node;
      if (!registered.created && options.facts.resetExtendedResources?.() === true) {
        logger.info('Zeroing the extended resources of the existing Node: the agent has no device checkpoint (the node was recreated)', { node: name });
        resetExtended = true;
      }
      // The creation's condition events, unless the server dropped the status (the loop reports then).
      if (registered.created && (registered.node.status?.conditions?.length ?? 0) > 0) {
        lastReport = clock.now();
        emit(pending);
      }
    }
    if (stopper.signal.aborted) return;
    loop = run();
  };

  return {
    start() {
      started ??= register();
      return started;
    },
    async stop() {
      stopper.abort();
      wake.abort();
      await started;
      await loop;
    },
    node: () => current,
    requestUpdate() {
      wakeRequested = true;
      wake.abort();
    },
  };
}
