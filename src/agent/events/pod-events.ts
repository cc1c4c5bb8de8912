/**
 * The agent's modules decide pod events (a probe failed, a container was killed, a pull
 * failed) as a type, a reason, a message, the pod and maybe a container name; this records them
 * as upstream's kubelet does: the reference names the container by its field path in the
 * right list, and the action is what the agent did or tried.
 */
import type { NodePod } from '../../api/pod/index.js';
import { podReference } from './event-object.js';
import type { EventRecorder } from './recorder.js';

/** A pod event as the modules decide it. */
export interface PodEventInput {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
  readonly pod: NodePod;
  readonly container?: string;
}

/** The events API's action for an upstream reason (what the agent did or tried). */
export function eventAction(reason: string): string {
  switch (reason) {
    case 'Pulling': case 'Pulled': case 'Failed': case 'BackOff': case 'ErrImageNeverPull': return 'Pull';
    case 'Created': return 'Create';
    case 'Started': return 'Start';
    case 'Killing': return 'Kill';
    case 'Unhealthy': return 'Probe';
    default: return reason;
  }
}

/** Records the event about the pod, or about its container (init or regular) when named. Never throws. */
export function recordPodEvent(recorder: EventRecorder, e: PodEventInput): void {
  const init = e.container !== undefined && (e.pod.spec?.initContainers ?? []).some((c) => c.name === e.container);
  const container = e.container === undefined ? undefined : { name: e.container, list: init ? 'initContainers' as const : 'containers' as const };
  recorder.event(podReference(e.pod, container), e.type, e.reason, eventAction(e.reason), e.message);
}
