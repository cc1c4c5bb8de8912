/**
 * A pod's identity on the node (UID, namespace, name) and the pod type that carries it. A
 * pod gets it once, where it enters the agent from a source (a manifest file or URL after
 * the static pod treatment, or the API server's watch); from there on the agent reads
 * `pod.metadata.uid` and friends as plain strings, and every module agrees on the namespace
 * of a pod that named none (`default`, as the API server and upstream's file sources give).
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';

/** What names a pod on the node: the key of the agent's maps and of the runtime's labels. */
export interface PodIdentity {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
}

/** A pod the agent took in from one of its sources: its metadata carries its identity, never empty. */
export type NodePod = Pod & { readonly metadata: ObjectMeta & PodIdentity };

/** The namespace of a pod that names none. */
export const DEFAULT_NAMESPACE = 'default';

export type NodePodResult = { readonly ok: true; readonly pod: NodePod } | { readonly ok: false; readonly problem: string };

/**
 * The pod as a NodePod: refused (with the reason) when it has no UID or no name; an empty
 * namespace becomes `default`. The pod is returned as it is when it needs no change, else a
 * copy; it is never changed.
 */
export function toNodePod(pod: Pod): NodePodResult {
  if (hasIdentity(pod)) return { ok: true, pod };
  const meta = pod.metadata ?? {};
  const { uid, name } = meta;
  if (uid === undefined || uid === '') return { ok: false, problem: 'metadata.uid: is required' };
  if (name === undefined || name === '') return { ok: false, problem: 'metadata.name: is required' };
  return { ok: true, pod: { ...pod, metadata: { ...meta, uid, name, namespace: DEFAULT_NAMESPACE } } };
}

/** True when the pod's UID, name and namespace are all set (not empty). */
function hasIdentity(pod: Pod): pod is NodePod {
  const meta = pod.metadata;
  return meta !== undefined && nonEmpty(meta.uid) && nonEmpty(meta.name) && nonEmpty(meta.namespace);
}

function nonEmpty(value: string | undefined): boolean {
  return value !== undefined && value !== '';
}
