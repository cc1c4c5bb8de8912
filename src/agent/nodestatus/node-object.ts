/**
 * The Node object the agent registers (upstream: Kubelet.initialNode) and the agent-owned parts
 * of an existing one it reconciles (updateDefaultLabels, reconcileCMADAnnotationWithExistingNode):
 * the default labels and the controller-managed attach/detach annotation. --node-labels and
 * --register-with-taints apply at first registration only, as upstream.
 */
import type { NodeAddress, Taint } from 'kubernetes-types/core/v1.js';
import type { NodeImage, WireNode } from './types.js';

export const LABEL_HOSTNAME = 'orch.io/hostname';
export const LABEL_OS = 'orch.io/os';
export const LABEL_ARCH = 'orch.io/arch';
export const LABEL_OS_BETA = 'beta.orch.io/os';
export const LABEL_ARCH_BETA = 'beta.orch.io/arch';
/** Labels the agent sets on every start (when it has a value for them). */
export const DEFAULT_LABELS = [
  LABEL_HOSTNAME, 'topology.orch.io/zone', 'topology.orch.io/region', 'failure-domain.beta.orch.io/zone',
  'failure-domain.beta.orch.io/region', 'node.orch.io/instance-type', 'beta.orch.io/instance-type',
  LABEL_OS, LABEL_ARCH, LABEL_OS_BETA, LABEL_ARCH_BETA,
] as const;
export const ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH = 'volumes.orch.io/controller-managed-attach-detach';
export const TAINT_UNSCHEDULABLE = 'node.orch.io/unschedulable';
/** Upstream's MaxNamesPerImageInNodeStatus. */
export const MAX_NAMES_PER_IMAGE = 5;

export interface NodeIdentity {
  readonly nodeName: string;
  /** The Hostname address and the orch.io/hostname label (the hostname or --hostname-override). */
  readonly hostname: string;
  /** --node-labels (already validated by the configuration). */
  readonly nodeLabels: Readonly<Record<string, string>>;
  readonly registerWithTaints: readonly { readonly key: string; readonly value: string; readonly effect: string }[];
  readonly registerSchedulable: boolean;
  readonly providerID: string;
  readonly enableControllerAttachDetach: boolean;
  /** GOOS and GOARCH names: linux, amd64. */
  readonly operatingSystem: string;
  readonly architecture: string;
}

/** The Node to POST at registration (metadata and spec; status comes from the status loop). */
export function initialNode(id: NodeIdentity): WireNode {
  const labels: Record<string, string> = {
    [LABEL_HOSTNAME]: id.hostname,
    [LABEL_OS]: id.operatingSystem,
    [LABEL_ARCH]: id.architecture,
    [LABEL_OS_BETA]: id.operatingSystem,
    [LABEL_ARCH_BETA]: id.architecture,
    ...id.nodeLabels,
  };
  const taints: Taint[] = id.registerWithTaints.map((t) => ({ key: t.key, effect: t.effect, ...(t.value === '' ? {} : { value: t.value }) }));
  if (!id.registerSchedulable && !taints.some((t) => t.key === TAINT_UNSCHEDULABLE && t.effect === 'NoSchedule')) {
    taints.push({ key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' });
  }
  const annotations: Record<string, string> = id.enableControllerAttachDetach ? { [ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH]: 'true' } : {};
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: id.nodeName, labels, ...(Object.keys(annotations).length > 0 ? { annotations } : {}) },
    spec: {
      ...(taints.length > 0 ? { taints } : {}),
      ...(id.registerSchedulable ? {} : { unschedulable: true }),
      ...(id.providerID === '' ? {} : { providerID: id.providerID }),
    },
  };
}

/**
 * The merge patch of metadata that brings an existing Node in line with the initial one: the
 * default labels the initial node has (an empty value removes the label), and the attach/detach
 * annotation. Other labels, annotations, taints and the spec are left alone. Undefined when
 * nothing differs.
 */
export function reconcilePatch(initial: WireNode, existing: WireNode): { metadata: { labels?: Record<string, string | null>; annotations?: Record<string, string | null> } } | undefined {
  const want = initial.metadata?.labels ?? {};
  const have = existing.metadata?.labels ?? {};
  const labels: Record<string, string | null> = {};
  for (const key of DEFAULT_LABELS) {
    if (!Object.hasOwn(want, key)) continue;
    const value = want[key] ?? '';
    if (value === '') {
      if (Object.hasOwn(have, key)) labels[key] = null;
    } else if (have[key] !== value) {
      labels[key] = value;
    }
  }
  const annotations: Record<string, string | null> = {};
  const wantCMAD = initial.metadata?.annotations?.[ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH];
  const haveCMAD = existing.metadata?.annotations?.[ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH];
  if (wantCMAD !== haveCMAD) annotations[ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH] = wantCMAD ?? null;
  const hasLabels = Object.keys(labels).length > 0;
  const hasAnnotations = Object.keys(annotations).length > 0;
  if (!hasLabels && !hasAnnotations) return undefined;
  return { metadata: { ...(hasLabels ? { labels } : {}), ...(hasAnnotations ? { annotations } : {}) } };
}

/** InternalIP for each node IP (primary first), then Hostname. */
export function nodeAddresses(nodeIPs: readonly string[], hostname: string): NodeAddress[] {
  return [...nodeIPs.map((address) => ({ type: 'InternalIP', address })), { type: 'Hostname', address: hostname }];
}

/** `containerd://1.7.2` from CRI Version's runtime name and version (a leading v is dropped). */
export function containerRuntimeVersion(name: string, version: string): string {
  return `${name}://${version.replace(/^v(?=\d)/, '')}`;
}

/** The largest images first, at most `max` of them (-1: all), at most 5 names each. */
export function nodeImages(images: readonly NodeImage[], max: number): { names: string[]; sizeBytes: number }[] {
  const sorted = [...images].sort((a, b) => b.sizeBytes - a.sizeBytes);
  const kept = max < 0 ? sorted : sorted.slice(0, max);
  return kept.map((i) => ({ names: i.names.slice(0, MAX_NAMES_PER_IMAGE), sizeBytes: i.sizeBytes }));
}
