/**
 * The node-level admission checks of pods bound to this node (upstream: the kubelet's
 * lifecycle predicate admit handler, GeneralPredicates): resources that do not fit the node's
 * allocatable given the pods already admitted (OutOf<resource>), host ports already taken
 * (NodePorts), a nodeSelector or required node affinity the node's labels do not match
 * (NodeAffinity), a spec.nodeName naming another node (NodeName), and NoExecute taints the pod
 * does not tolerate (TaintToleration). Each is a pure function of the pod, the admitted pods
 * and the node; the sync loop runs them in order and fails the pod with the reason.
 */
import type { Node, NodeStatus, Pod } from 'kubernetes-types/core/v1.js';
import {
  hostPortsConflict, hostPortsOf, nodeMatchesPod, podNamespacedName, podRequest, requestedResources, resourceAmount, untoleratedTaint, type PodRequestOptions,
} from '../../api/pod/index.js';
import { isExtendedResourceName } from '../../api/resource-names.js';
import type { AdmitHandler, AdmitResult } from '../syncloop/index.js';

export { podRequest } from '../../api/pod/index.js';

/** What admission reads of the Node: its name and labels, its taints, its allocatable resources. */
export type AdmissionNode = Pick<Node, 'metadata' | 'spec'> & { readonly status?: Pick<NodeStatus, 'allocatable'> | undefined };

const ADMIT: AdmitResult = { admit: true };

/** An admit handler that answers at once (all of these do). */
export type SyncAdmitHandler = (...args: Parameters<AdmitHandler>) => AdmitResult;

/**
 * Resources the pod requests beyond what is left of the node's allocatable (upstream
 * noderesources.Fits, with the predicate admit handler's two adjustments): an extended resource
 * the Node does not list is not counted (a cluster-level resource), and a device plugin
 * resource counts as at least the devices pods hold (`allocatedDevices`: pods keep running
 * when their plugin's devices turn unhealthy).
 */
export function fitsResources(pod: Pod, admitted: readonly Pod[], node: AdmissionNode, allocatedDevices?: ReadonlyMap<string, number>, options: PodRequestOptions = {}): AdmitResult {
  const allocatable = node.status?.allocatable ?? {};
  for (const resource of requestedResources(pod, options)) {
    const wanted = podRequest(pod, resource, options);
    if (wanted === 0) continue;
    const held = allocatedDevices?.get(resource);
    if (isExtendedResourceName(resource) && allocatable[resource] === undefined && held === undefined) continue;
    const capacity = Math.max(resourceAmount(allocatable[resource], resource), held ?? 0);
    let used = 0;
    for (const p of admitted) used += podRequest(p, resource, options);
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

/** Host ports another admitted pod holds (upstream NodePorts). */
export function fitsHostPorts(pod: Pod, admitted: readonly Pod[]): AdmitResult {
  const wanted = hostPortsOf(pod);
  if (wanted.length === 0) return ADMIT;
  for (const other of admitted) {
    for (const used of hostPortsOf(other)) {
      const clash = wanted.find((w) => hostPortsConflict(w, used));
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

/** nodeSelector and requiredDuringSchedulingIgnoredDuringExecution (upstream NodeAffinity). */
export function matchesNodeAffinity(pod: Pod, node: AdmissionNode): AdmitResult {
  if (nodeMatchesPod(pod, node)) return ADMIT;
  return { admit: false, reason: 'NodeAffinity', message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector" };
}

/** A pod bound to another node by name (upstream NodeName). */
export function matchesNodeName(pod: Pod, node: AdmissionNode): AdmitResult {
  const wanted = pod.spec?.nodeName;
  if (wanted === undefined || wanted === '' || wanted === node.metadata?.name) return ADMIT;
  return { admit: false, reason: 'NodeName', message: "Predicate NodeName failed: node(s) didn't match the requested node name" };
}

/** NoExecute taints of the node the pod does not tolerate (upstream: the kubelet checks NoExecute only). */
export function toleratesNoExecuteTaints(pod: Pod, node: AdmissionNode): AdmitResult {
  const taint = untoleratedTaint(node.spec?.taints ?? [], pod.spec?.tolerations ?? [], (t) => t.effect === 'NoExecute');
  if (taint === undefined) return ADMIT;
  return { admit: false, reason: 'TaintToleration', message: `Predicate TaintToleration failed: node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}` };
}

/**
 * The admit handlers of pods from the API server, against the node object the agent last
 * registered or wrote (none yet: everything but host ports is admitted, as upstream does before
 * the node is known), with the devices pods hold by resource when the node has a device manager,
 * and with InPlacePodVerticalScaling pods counted at what they were allocated (PodRequestOptions).
 */
export function apiAdmitHandlers(node: () => AdmissionNode | undefined, allocatedDevices?: () => ReadonlyMap<string, number>, requests: PodRequestOptions = {}): SyncAdmitHandler[] {
  const withNode = (check: (pod: Pod, admitted: readonly Pod[], node: AdmissionNode) => AdmitResult): SyncAdmitHandler => (pod, admitted) => {
    const n = node();
    return n === undefined ? ADMIT : check(pod, admitted, n);
  };
  return [
    withNode((pod, _admitted, n) => matchesNodeName(pod, n)),
    withNode((pod, _admitted, n) => matchesNodeAffinity(pod, n)),
    withNode((pod, _admitted, n) => toleratesNoExecuteTaints(pod, n)),
    (pod, admitted) => fitsHostPorts(pod, admitted),
    withNode((pod, admitted, n) => fitsResources(pod, admitted, n, allocatedDevices?.(), requests)),
  ];
}
