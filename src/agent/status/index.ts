/**
 * The status manager: the pod statuses the agent computed, by pod UID, for the other modules
 * (the servers' /pods, runonce, the API-server status writer of apipods).
 *
 * Owns: the latest computed status of each pod the agent runs, and computing it (compute.ts).
 * Must not: read the runtime itself (callers pass what the runtime holds) or keep statuses of
 * pods that finished (remove them).
 */
import type { PodStatus } from 'kubernetes-types/core/v1.js';

import { jsonEqual } from '../../api/json-equal.js';

export { computePodStatus, podPhase, rejectedPodStatus, type StatusInput } from './compute.js';

export interface StatusManager {
  /** Records the newest status of a pod; listeners hear of a change. */
  setPodStatus(uid: string, status: PodStatus): void;
  getPodStatus(uid: string): PodStatus | undefined;
  /** Forgets a pod that finished. Idempotent. */
  removePod(uid: string): void;
  /** Called with the UID whenever a status changed (not when it was set to an equal one). */
  onChange(listener: (uid: string, status: PodStatus) => void): () => void;
}

export function createStatusManager(): StatusManager {
  const statuses = new Map<string, PodStatus>();
  const listeners = new Set<(uid: string, status: PodStatus) => void>();
  return {
    setPodStatus(uid, status) {
      const previous = statuses.get(uid);
      if (previous !== undefined && jsonEqual(previous, status)) return;
      statuses.set(uid, status);
      for (const l of listeners) l(uid, status);
    },
    getPodStatus: (uid) => statuses.get(uid),
    removePod(uid) {
      statuses.delete(uid);
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
