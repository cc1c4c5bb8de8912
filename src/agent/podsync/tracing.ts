/**
 * The pod syncer in spans, as upstream's kubelet traces it: `syncPod` (with the update type),
 * `syncTerminatingPod` and `syncTerminatedPod`, each with the pod. A sync continues the trace
 * the pod's source began for the update that asked for it (left in `parents` under the pod's
 * UID); a sync nothing asked for (a resync) begins a trace of its own. The runtime manager's
 * steps and the CRI calls made during a sync are its children.
 */
import type { NodePod } from '../../api/pod/index.js';
import type { SpanAttributes, TraceParent, TraceParents, Tracer } from '../../api/tracing/index.js';
import type { PodSyncer } from '../podworkers/index.js';

export interface TracedPodSyncerOptions {
  readonly syncer: PodSyncer;
  readonly tracer: Tracer;
  readonly parents: TraceParents;
}

function podAttributes(pod: NodePod, extra: SpanAttributes = {}): SpanAttributes {
  const { uid, name, namespace } = pod.metadata;
  return { 'k8s.pod.uid': uid, 'k8s.pod.name': name, 'k8s.namespace.name': namespace, ...extra };
}

export function tracedPodSyncer({ syncer, tracer, parents }: TracedPodSyncerOptions): PodSyncer {
  const parentOf = (pod: NodePod): { parent: TraceParent | 'root' } => ({ parent: parents.take(pod.metadata.uid) ?? 'root' });
  return {
    syncPod(pod, kind) {
      return tracer.inSpan('syncPod', { ...parentOf(pod), attributes: podAttributes(pod, { 'k8s.pod.update_type': kind }) }, () => syncer.syncPod(pod, kind));
    },
    syncTerminatingPod(pod, gracePeriodSeconds, failure) {
      const attributes = podAttributes(pod, { 'k8s.pod.termination_grace_period_seconds': gracePeriodSeconds, 'k8s.pod.failure_reason': failure?.reason });
      return tracer.inSpan('syncTerminatingPod', { ...parentOf(pod), attributes }, () => syncer.syncTerminatingPod(pod, gracePeriodSeconds, failure));
    },
    syncTerminatedPod(pod) {
      parents.delete(pod.metadata.uid); // an update that came after the kill: no sync of the pod is left to continue it
      return tracer.inSpan('syncTerminatedPod', { parent: 'root', attributes: podAttributes(pod) }, () => syncer.syncTerminatedPod(pod));
    },
  };
}
