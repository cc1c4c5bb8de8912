/**
 * The node-level admission checks of pods bound to this node (upstream: the kubelet's
 * lifecycle predicate admit handler, GeneralPredicates): resources that do not fit the node's
 * allocatable given the pods already admitted (OutOf<resource>), host ports already taken
 * (NodePorts), a nodeSelector or required node affinity the node's labels do not match
 * (NodeAffinity), a spec.nodeName naming another node (NodeName), and NoExecute taints the pod
 * does not tolerate (TaintToleration). Each is a pure function of the pod, the admitted pods
 * and the node; the sync loop runs them in order and fails the pod with the reason.
 */
import type { Container, Node, NodeSelectorRequirement, NodeStatus, NodeSelectorTerm, Pod, Taint, Toleration } from 'kubernetes-types/core/v1.js';
import { podNamespacedName } from '../../api/pod/index.js';
import { parseQuantity, quantityMilliValue, quantityValue } from '../../api/quantity.js';
import type { AdmitHandler, AdmitResult } from '../syncloop/index.js';

const ADMIT: AdmitResult = { admit: true };

/** A resource amount: millicores for cpu, whole units for the rest. */
function amount(text: string | undefined, resource: string): number {
  if (text === undefined) return 0;
  try {
    const q = parseQuantity(text);
    return resource === 'cpu' ? quantityMilliValue(q) : quantityValue(q);
  } catch {
    // The API server validated the quantity; a bad one counts as nothing rather than failing admission.
    return 0;
  }
}

function containerRequest(c: Container, resource: string): number {
  return amount(c.resources?.requests?.[resource], resource);
}

/** The pod's effective request of one resource (upstream PodRequests: sidecars, init maximum, overhead). */
/** What admission reads of the Node: its name and labels, its taints, its allocatable resources. */
export type AdmissionNode = Pick<Node, 'metadata' | 'spec'> & { readonly status?: Pick<NodeStatus, 'allocatable'> | undefined };

export function podRequest(pod: Pod, resource: string): number {
  let sum = 0;
  for (const c of pod.spec?.containers ?? []) sum += containerRequest(c, resource);
  let sidecars = 0;
  let initMax = 0;
  for (const c of pod.spec?.initContainers ?? []) {
    if (c.restartPolicy === 'Always') {
      sidecars += containerRequest(c, resource);
      continue;
    }
    initMax = Math.max(initMax, sidecars + containerRequest(c, resource));
  }
  return Math.max(sum + sidecars, initMax) + amount(pod.spec?.overhead?.[resource], resource);
}

function requestedResources(pod: Pod): Set<string> {
  const names = new Set<string>();
  for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
    for (const r of Object.keys(c.resources?.requests ?? {})) names.add(r);
  }
  for (const r of Object.keys(pod.spec?.overhead ?? {})) names.add(r);
  return names;
}

/** Resources the pod requests beyond what is left of the node's allocatable (upstream noderesources.Fits). */
export function fitsResources(pod: Pod, admitted: readonly Pod[], node: AdmissionNode): AdmitResult {
  const allocatable = node.status?.allocatable ?? {};
  for (const resource of requestedResources(pod)) {
    const wanted = podRequest(pod, resource);
    if (wanted === 0) continue;
    const capacity = amount(allocatable[resource], resource);
    let used = 0;
    for (const p of admitted) used += podRequest(p, resource);
    if (wanted + used > capacity) {
      return {
        admit: false,
        reason: `OutOf${resource}`,
        message: `Node didn't have enough resource: ${resource}, requested: ${wanted}, used: ${used}, capacity: ${capacity}`,
      };
    }
  }
  return ADMIT;
}

interface HostPort { readonly ip: string; readonly protocol: string; readonly port: number }

function hostPorts(pod: Pod): HostPort[] {
  const ports: HostPort[] = [];
  for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
    for (const p of c.ports ?? []) {
      if (p.hostPort === undefined || p.hostPort <= 0) continue;
      ports.push({ ip: p.hostIP === undefined || p.hostIP === '' ? '0.0.0.0' : p.hostIP, protocol: p.protocol ?? 'TCP', port: p.hostPort });
    }
  }
  return ports;
}

function conflicts(a: HostPort, b: HostPort): boolean {
  if (a.port !== b.port || a.protocol !== b.protocol) return false;
  return a.ip === b.ip || a.ip === '0.0.0.0' || b.ip === '0.0.0.0';
}

/** Host ports another admitted pod holds (upstream NodePorts). */
export function fitsHostPorts(pod: Pod, admitted: readonly Pod[]): AdmitResult {
  const wanted = hostPorts(pod);
  if (wanted.length === 0) return ADMIT;
  for (const other of admitted) {
    for (const used of hostPorts(other)) {
      const clash = wanted.find((w) => conflicts(w, used));
      if (clash !== undefined) {
        return {
          admit: false,
          reason: 'NodePorts',
          message: `Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports (${clash.protocol} ${clash.ip}:${clash.port} is used by pod ${podNamespacedName(other)})`,
        };
      }
    }
  }
  return ADMIT;
}

function matchesRequirement(labels: Readonly<Record<string, string>>, r: NodeSelectorRequirement): boolean {
  const value = labels[r.key];
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In': return value !== undefined && values.includes(value);
    case 'NotIn': return value === undefined || !values.includes(value);
    case 'Exists': return value !== undefined;
    case 'DoesNotExist': return value === undefined;
    case 'Gt':
    case 'Lt': {
      if (value === undefined || values.length !== 1 || !/^-?\d+$/.test(value) || !/^-?\d+$/.test(values[0] ?? '')) return false;
      const diff = BigInt(value) - BigInt(values[0] ?? '0');
      return r.operator === 'Gt' ? diff > 0n : diff < 0n;
    }
    default: return false;
  }
}

function matchesTerm(node: AdmissionNode, term: NodeSelectorTerm): boolean {
  const labels = node.metadata?.labels ?? {};
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  const nodeFields = { 'metadata.name': node.metadata?.name ?? '' };
  return expressions.every((r) => matchesRequirement(labels, r)) && fields.every((r) => matchesRequirement(nodeFields, r));
}

/** nodeSelector and requiredDuringSchedulingIgnoredDuringExecution (upstream NodeAffinity). */
export function matchesNodeAffinity(pod: Pod, node: AdmissionNode): AdmitResult {
  const labels = node.metadata?.labels ?? {};
  const selector = pod.spec?.nodeSelector ?? {};
  const selectorOk = Object.entries(selector).every(([k, v]) => labels[k] === v);
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  const affinityOk = required === undefined || required.nodeSelectorTerms.some((t) => matchesTerm(node, t));
  if (selectorOk && affinityOk) return ADMIT;
  return { admit: false, reason: 'NodeAffinity', message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector" };
}

/** A pod bound to another node by name (upstream NodeName). */
export function matchesNodeName(pod: Pod, node: AdmissionNode): AdmitResult {
  const wanted = pod.spec?.nodeName;
  if (wanted === undefined || wanted === '' || wanted === node.metadata?.name) return ADMIT;
  return { admit: false, reason: 'NodeName', message: "Predicate NodeName failed: node(s) didn't match the requested node name" };
}

function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect !== undefined && t.effect !== '' && t.effect !== taint.effect) return false;
  if ((t.key ?? '') === '' ) return t.operator === 'Exists';
  if (t.key !== taint.key) return false;
  return t.operator === 'Exists' || (t.value ?? '') === (taint.value ?? '');
}

/** NoExecute taints of the node the pod does not tolerate (upstream: the kubelet checks NoExecute only). */
export function toleratesNoExecuteTaints(pod: Pod, node: AdmissionNode): AdmitResult {
  const tolerations = pod.spec?.tolerations ?? [];
  for (const taint of node.spec?.taints ?? []) {
    if (taint.effect !== 'NoExecute') continue;
    if (!tolerations.some((t) => tolerates(t, taint))) {
      return { admit: false, reason: 'TaintToleration', message: `Predicate TaintToleration failed: node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}` };
    }
  }
  return ADMIT;
}

/**
 * The admit handlers of pods from the API server, against the node object the agent last
 * registered or wrote (none yet: everything but host ports is admitted, as upstream does before
 * the node is known).
 */
export function apiAdmitHandlers(node: () => AdmissionNode | undefined): AdmitHandler[] {
  const withNode = (check: (pod: Pod, admitted: readonly Pod[], node: AdmissionNode) => AdmitResult): AdmitHandler => (pod, admitted) => {
    const n = node();
    return n === undefined ? ADMIT : check(pod, admitted, n);
  };
  return [
    withNode((pod, _admitted, n) => matchesNodeName(pod, n)),
    withNode((pod, _admitted, n) => matchesNodeAffinity(pod, n)),
    withNode((pod, _admitted, n) => toleratesNoExecuteTaints(pod, n)),
    (pod, admitted) => fitsHostPorts(pod, admitted),
    withNode((pod, admitted, n) => fitsResources(pod, admitted, n)),
  ];
}
