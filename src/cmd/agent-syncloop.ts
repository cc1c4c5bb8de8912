/**
 * Part of nodeagent's composition root: the sync loop and what wakes it, wired the same way for
 * the agent (agent.ts) and each simulated node (simulate-node.ts): the loop over the pod config,
 * the workers and the pod manager; a changed probe result or a PLEG event makes it sync the pod;
 * with the EventedPLEG gate, containerd's task events drive the PLEG; a refusal at admission is recorded as a Warning event (API-server mode); a finished pod is
 * told to API-server mode (its status written, its mirror checked); the PLEG's health and the
 * loop's are the `syncloop` health check. Only wiring: every rule lives in src/agent/syncloop
 * and src/agent/pleg. The caller starts the loop, the PLEG and the pod config in that order.
 */
import type { Clock } from '../api/clock.js';
import type { NodePod } from '../api/pod/index.js';
import type { HealthChecks } from '../agent/health/index.js';
import type { LogRoot } from '../agent/logging/index.js';
import { POD_UID_LABEL } from '../agent/kuberuntime/index.js';
import { createPleg, type Pleg, type PlegEvents, type RelistSource, type PlegOptions } from '../agent/pleg/index.js';
import type { RuntimeService } from '../agent/runtime/cri/index.js';
import { connectContainerdEvents } from '../agent/runtime/events/index.js';
import type { PodEvent, ProberManager } from '../agent/prober/index.js';
import { createSyncLoop, type SyncLoop, type SyncLoopOptions } from '../agent/syncloop/index.js';

export interface SyncLoopWiring {
  readonly clock: Clock;
  readonly logs: LogRoot;
  /** What the loop drives and reads (see SyncLoopOptions); admission checks in upstream's order. */
  readonly loop: Omit<SyncLoopOptions, 'clock' | 'logger' | 'onReject'>;
  /** What the PLEG relists and the pod status cache it keeps vouched for. */
  readonly runtime: RelistSource;
  readonly podCache: PlegOptions['cache'];
  readonly prober: Pick<ProberManager, 'onResult'>;
  readonly health: HealthChecks;
  /** API-server mode: records pod events. */
  readonly podEvent?: ((event: PodEvent) => void) | undefined;
  /** API-server mode: a pod has nothing left running on the node. */
  readonly podFinished?: ((pod: NodePod) => void) | undefined;
  /** EventedPLEG: the runtime's events drive the PLEG (containerdPlegEvents). */
  readonly events?: PlegEvents | undefined;
}

/**
 * The EventedPLEG's inputs on containerd: its task events over the runtime's socket, and one
 * pod's sandboxes and containers listed by its UID label. `close` ends the event channel.
 */
export function containerdPlegEvents(endpoint: string, cri: Pick<RuntimeService, 'listPodSandbox' | 'listContainers'>, clock: Clock): PlegEvents & { close(): void } {
  const source = connectContainerdEvents({ endpoint, clock });
  return {
    source,
    listPod: async (uid) => {
      const labelSelector = { [POD_UID_LABEL]: uid };
      const [sandboxes, containers] = await Promise.all([cri.listPodSandbox({ labelSelector }), cri.listContainers({ labelSelector })]);
      return [...sandboxes, ...containers];
    },
    close: () => { source.close(); },
  };
}

export interface WiredSyncLoop {
  readonly syncLoop: SyncLoop;
  readonly pleg: Pleg;
}

/** Builds the sync loop and the PLEG and wires them together; starts nothing. */
export function wireSyncLoop(w: SyncLoopWiring): WiredSyncLoop {
  const { clock, logs, podEvent, podFinished } = w;
  const syncLoop = createSyncLoop({
    ...w.loop,
    clock,
    logger: logs.logger('syncloop'),
    ...(podEvent === undefined ? {} : { onReject: (pod: NodePod, reason: string, message: string) => { podEvent({ type: 'Warning', reason, message, pod }); } }),
  });
  if (podFinished !== undefined) syncLoop.onPodFinished(podFinished);
  w.prober.onResult((change) => { syncLoop.podChanged(change.podUID); });
  const pleg = createPleg({
    runtime: w.runtime,
    cache: w.podCache,
    clock,
    logger: logs.logger('pleg'),
    onPodChanged: (uid, stillNeeded) => { syncLoop.podChanged(uid, stillNeeded); },
    ...(w.events === undefined ? {} : { events: w.events }),
  });
  w.health.add({ name: 'syncloop', check: () => { const p = pleg.health(); return p.healthy ? syncLoop.health() : p.message; } });
  return { syncLoop, pleg };
}
