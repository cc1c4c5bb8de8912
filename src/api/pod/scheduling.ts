/**
 * The rules that say whether a pod may run on a node, shared by the node agent's admission
 * (upstream: the kubelet's GeneralPredicates) and the API server's scheduler (upstream: the
 * default profile's filter plugins): a pod's effective resource requests, its host ports and
 * their conflicts, nodeSelector and required node affinity against a node's labels, and
 * tolerations against taints. Pure functions of kubernetes-types shapes; the messages each
 * caller gives a failure are its own.
 */
import type { Container, Node, Pod, PodStatus, Taint, Toleration } from 'kubernetes-types/core/v1.js';
import { nodeSelectorMatches } from '../node-selector.js';
import { parseQuantity, quantityMilliValue, quantityValue } from '../quantity.js';

/** A resource amount: millicores for cpu, whole units (bytes, counts) for the rest. */
export function resourceAmount(text: string | number | undefined, resource: string): number {
  if (text === undefined) return 0;
  try {
    const q = parseQuantity(String(text));
    return resource === 'cpu' ? quantityMilliValue(q) : quantityValue(q);
  } catch {
    // The API server validated the quantity; a malformed one counts as nothing rather than failing the pod.
    return 0;
  }
}

function containerRequest(c: Container, resource: string): number {
  return resourceAmount(c.resources?.requests?.[resource], resource);
}

export interface PodRequestOptions {
  /**
   * InPlacePodVerticalScaling (upstream's PodResourcesOptions): a container counts the larger of
   * its spec's request and its status's allocatedResources (a resize not applied yet holds both),
   * and only the allocated one while the pod's resize is Infeasible.
   */
  readonly inPlacePodVerticalScaling?: boolean;
  /** The pod's status to read allocatedResources and resize from (the node agent's own, newer than the pod's); default: the pod's. */
  readonly statusOf?: (pod: Pod) => PodStatus | undefined;
}

/**
 * A regular container's effective requests, by resource (a resource it does not request is
 * absent; upstream PodRequests per container). With in-place resize and a status for the
 * container: the larger of the spec's and the allocatedResources' amount of each resource either
 * names, or the allocated ones alone while the pod's resize is Infeasible.
 */
export function containerRequests(pod: Pod, c: Container, options: PodRequestOptions = {}): Map<string, number> {
  const amounts = (list: Record<string, unknown> | undefined): Map<string, number> =>
    new Map(Object.entries(list ?? {}).map(([r, v]) => [r, resourceAmount(v as string | number, r)]));
  const spec = amounts(c.resources?.requests);
  if (options.inPlacePodVerticalScaling !== true) return spec;
  const status = options.statusOf?.(pod) ?? pod.status;
  const own = status?.containerStatuses?.find((s) => s.name === c.name);
  if (own === undefined) return spec;
  const allocated = amounts(own.allocatedResources);
  if (status?.resize === 'Infeasible') return allocated;
  for (const [r, v] of allocated) spec.set(r, Math.max(spec.get(r) ?? 0, v));
  return spec;
}

/** The pod's effective request of one resource (upstream PodRequests: sidecars, the init maximum, overhead). */
export function podRequest(pod: Pod, resource: string, options: PodRequestOptions = {}): number {
  let sum = 0;
  for (const c of pod.spec?.containers ?? []) sum += containerRequests(pod, c, options).get(resource) ?? 0;
  let sidecars = 0;
  let initMax = 0;
  for (const c of pod.spec?.initContainers ?? []) {
    if (c.restartPolicy === 'Always') {
      sidecars += containerRequest(c, resource);
      continue;
    }
    initMax = Math.max(initMax, sidecars + containerRequest(c, resource));
  }
  return Math.max(sum + sidecars, initMax) + resourceAmount(pod.spec?.overhead?.[resource], resource);
}

/** The names of the resources any container (or the overhead) of the pod requests, with in-place resize those its containers hold too. */
export function requestedResources(pod: Pod, options: PodRequestOptions = {}): Set<string> {
  const names = new Set<string>();
  for (const c of pod.spec?.containers ?? []) for (const r of containerRequests(pod, c, options).keys()) names.add(r);
  for (const c of pod.spec?.initContainers ?? []) {
    for (const r of Object.keys(c.resources?.requests ?? {})) names.add(r);
  }
  for (const r of Object.keys(pod.spec?.overhead ?? {})) names.add(r);
  return names;
}

export interface HostPort {
  readonly ip: string;
  readonly protocol: string;
  readonly port: number;
}

/** The host ports the pod's containers ask for (hostIP defaults to 0.0.0.0, protocol to TCP). */
export function hostPortsOf(pod: Pod): HostPort[] {
  const ports: HostPort[] = [];
  for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
    for (const p of c.ports ?? []) {
      if (p.hostPort === undefined || p.hostPort <= 0) continue;
      ports.push({ ip: p.hostIP === undefined || p.hostIP === '' ? '0.0.0.0' : p.hostIP, protocol: p.protocol ?? 'TCP', port: p.hostPort });
    }
  }
  return ports;
}

/** Two host ports clash on the same port and protocol when their IPs are equal or either is 0.0.0.0. */
export function hostPortsConflict(a: HostPort, b: HostPort): boolean {
  if (a.port !== b.port || a.protocol !== b.protocol) return false;
  return a.ip === b.ip || a.ip === '0.0.0.0' || b.ip === '0.0.0.0';
}

/** The pod's nodeSelector and requiredDuringSchedulingIgnoredDuringExecution both match the node (upstream NodeAffinity). */
export function nodeMatchesPod(pod: Pod, node: Pick<Node, 'metadata'>): boolean {
  const labels = node.metadata?.labels ?? {};
  const selector = pod.spec?.nodeSelector ?? {};
  if (!Object.entries(selector).every(([k, v]) => labels[k] === v)) return false;
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  return required === undefined || nodeSelectorMatches(required, node);
}

/** The toleration tolerates the taint (upstream Toleration.ToleratesTaint). */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect !== undefined && t.effect !== '' && t.effect !== taint.effect) return false;
  if ((t.key ?? '') === '') return t.operator === 'Exists';
  if (t.key !== taint.key) return false;
  return t.operator === 'Exists' || (t.value ?? '') === (taint.value ?? '');
}

/** The first taint (among those `considered`) no toleration tolerates (upstream FindMatchingUntoleratedTaint). */
export function untoleratedTaint(taints: readonly Taint[], tolerations: readonly Toleration[], considered: (t: Taint) => boolean): Taint | undefined {
  return taints.find((taint) => considered(taint) && !tolerations.some((t) => toleratesTaint(t, taint)));
}
