/**
 * The names and annotations by which the agent tells where a pod came from, as the kubelet
 * does (its `kubernetes.io/config.*` keys, here under `orch.io`), and the two names of a pod: its
 * full name `name_namespace` and its namespaced name `namespace/name`.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';

/** The source a pod was read from: `file`, `http` or `api` (set by the pod config merger). */
export const CONFIG_SOURCE_ANNOTATION = 'orch.io/config.source';
/** The hash of a static pod's manifest (its UID); the mirror pod carries it too. */
export const CONFIG_HASH_ANNOTATION = 'orch.io/config.hash';
/** When the agent first saw the pod, RFC 3339. */
export const CONFIG_SEEN_ANNOTATION = 'orch.io/config.seen';
/** Marks a mirror pod: the API server's copy of a static pod; its value is the static pod's hash. */
export const CONFIG_MIRROR_ANNOTATION = 'orch.io/config.mirror';

/** The pod source names, as upstream spells them. */
export const FILE_SOURCE = 'file';
export const HTTP_SOURCE = 'http';
export const API_SOURCE = 'api';

/**
 * Annotations the agent sets itself: they never make two versions of a pod differ (a pod
 * whose only change is one of these is not an update).
 */
export const LOCAL_ANNOTATIONS: ReadonlySet<string> = new Set([
  CONFIG_SOURCE_ANNOTATION,
  CONFIG_SEEN_ANNOTATION,
  CONFIG_MIRROR_ANNOTATION,
]);

/** `name_namespace`, the key upstream uses for a pod within the agent (e.g. in duplicate checks; upstream: GetPodFullName). */
export function podFullName(pod: Pick<Pod, 'metadata'>): string {
  return `${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? ''}`;
}

/** `namespace/name`, how logs, messages and keys by name refer to a pod (upstream: klog.KObj). */
export function podNamespacedName(pod: Pick<Pod, 'metadata'>): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

/** The pod's source annotation, or undefined when it has none. */
export function podSource(pod: Pod): string | undefined {
  return pod.metadata?.annotations?.[CONFIG_SOURCE_ANNOTATION];
}

/** True for a pod the agent read from a file or a URL (a source other than the API server). */
export function isStaticPod(pod: Pod): boolean {
  const source = podSource(pod);
  return source !== undefined && source !== API_SOURCE;
}

/** True for a mirror pod (the API server's read-only copy of a static pod). */
export function isMirrorPod(pod: Pod): boolean {
  return pod.metadata?.annotations?.[CONFIG_MIRROR_ANNOTATION] !== undefined;
}
