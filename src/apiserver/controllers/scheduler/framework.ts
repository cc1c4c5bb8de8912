/**
 * The filters and scores of upstream's default profile that our API has data for, in its order,
 * with its reasons (the texts of the FailedScheduling message):
 *
 * | filter | reason | resolvable by preemption |
 * |---|---|---|
 * | NodeUnschedulable | node(s) were unschedulable | no |
 * | NodeName | node(s) didn't match the requested node name | no |
 * | TaintToleration (NoSchedule, NoExecute) | node(s) had untolerated taint {key: value} | no |
 * | NodeAffinity (nodeSelector, required affinity) | node(s) didn't match Pod's node affinity/selector | no |
 * | NodePorts | node(s) didn't have free ports for the requested pod ports | yes |
 * | NodeResourcesFit | Too many pods, Insufficient cpu, Insufficient memory, Insufficient <resource> | yes |
 *
 * A node is filtered out by the first filter that fails. Scores (0-100 each, weight 1 each):
 * NodeResourcesFit's LeastAllocated over cpu and memory (non-zero requests) and
 * NodeResourcesBalancedAllocation (requests).
 */
import { TAINT_NODE_UNSCHEDULABLE } from '../../../api/taints.js';
import { hostPortsConflict, nodeMatchesPod, toleratesTaint, untoleratedTaint } from '../../../api/pod/index.js';
import type { NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';

export interface FilterFailure {
  readonly reasons: readonly string[];
  /** Upstream's UnschedulableAndUnresolvable: preemption cannot help on this node. */
  readonly unresolvable: boolean;
}

type Filter = (pod: PodInfo, node: NodeInfo) => FilterFailure | undefined;

const unresolvable = (reason: string): FilterFailure => ({ reasons: [reason], unresolvable: true });

const nodeUnschedulable: Filter = (pod, info) => {
  if (info.node?.spec?.unschedulable !== true) return undefined;
  const tolerated = (pod.pod.spec?.tolerations ?? []).some((t) => toleratesTaint(t, { key: TAINT_NODE_UNSCHEDULABLE, effect: 'NoSchedule' }));
  return tolerated ? undefined : unresolvable('node(s) were unschedulable');
};

const nodeName: Filter = (pod, info) => {
  const wanted = pod.pod.spec?.nodeName ?? '';
  return wanted === '' || wanted === info.name ? undefined : unresolvable("node(s) didn't match the requested node name");
};

const taintToleration: Filter = (pod, info) => {
  const taint = untoleratedTaint(info.node?.spec?.taints ?? [], pod.pod.spec?.tolerations ?? [], (t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute');
  return taint === undefined ? undefined : unresolvable(`node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`);
};

const nodeAffinity: Filter = (pod, info) =>
  info.node === undefined || nodeMatchesPod(pod.pod, info.node) ? undefined : unresolvable("node(s) didn't match Pod's node affinity/selector");

const nodePorts: Filter = (pod, info) => {
  if (pod.ports.length === 0) return undefined;
  const used = info.usedPorts();
  const clash = pod.ports.some((p) => used.some((u) => hostPortsConflict(p, u)));
  return clash ? { reasons: ["node(s) didn't have free ports for the requested pod ports"], unresolvable: false } : undefined;
};

const resourcesFit: Filter = (pod, info) => {
  const reasons: string[] = [];
  if (info.pods.size + 1 > (info.allocatable.get('pods') ?? 0)) reasons.push('Too many pods');
  // pod.requests is in upstream's order: cpu, memory, ephemeral-storage, then the others.
  for (const [resource, wanted] of pod.requests) {
    if (resource === 'pods') continue;
    const free = (info.allocatable.get(resource) ?? 0) - (info.requested.get(resource) ?? 0);
    if (wanted > free) reasons.push(`Insufficient ${resource}`);
  }
  return reasons.length === 0 ? undefined : { reasons, unresolvable: false };
};

export const FILTERS: readonly Filter[] = [nodeUnschedulable, nodeName, taintToleration, nodeAffinity, nodePorts, resourcesFit];

/** Why the node cannot take the pod, or undefined when it can. */
export function filterNode(pod: PodInfo, node: NodeInfo): FilterFailure | undefined {
  for (const filter of FILTERS) {
    const failure = filter(pod, node);
    if (failure !== undefined) return failure;
  }
  return undefined;
}

/** LeastAllocated (cpu and memory, weight 1 each, non-zero requests): the share left free, 0-100. */
export function leastAllocatedScore(pod: PodInfo, node: NodeInfo): number {
  const one = (requested: number, capacity: number): number =>
    capacity <= 0 || requested > capacity ? 0 : Math.floor(((capacity - requested) * 100) / capacity);
  const cpu = one(node.nonZeroCpu + pod.nonZeroCpu, node.allocatable.get('cpu') ?? 0);
  const memory = one(node.nonZeroMemory + pod.nonZeroMemory, node.allocatable.get('memory') ?? 0);
  return Math.floor((cpu + memory) / 2);
}

/** BalancedAllocation: 100 when cpu and memory are used in the same proportion, less the further apart. */
export function balancedAllocationScore(pod: PodInfo, node: NodeInfo): number {
  const fraction = (resource: string): number => {
    const capacity = node.allocatable.get(resource) ?? 0;
    if (capacity <= 0) return 1;
    return Math.min(1, ((node.requested.get(resource) ?? 0) + (pod.requests.get(resource) ?? 0)) / capacity);
  };
  const std = Math.abs(fraction('cpu') - fraction('memory')) / 2;
  return Math.floor((1 - std) * 100);
}

export function scoreNode(pod: PodInfo, node: NodeInfo): number {
  return leastAllocatedScore(pod, node) + balancedAllocationScore(pod, node);
}

/** `count reason` items sorted as Go's sort.Strings does, joined by ", ". */
function histogram(reasons: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const r of reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  return [...counts].map(([r, n]) => `${n} ${r}`).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join(', ');
}

/**
 * Upstream's FitError text with the default preemption's part (preemption itself is not done:
 * a node where it might help reports that no victims were found, as upstream says when none are):
 * `0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {k: }. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling..`
 */
export function fitErrorMessage(pod: PodInfo, total: number, failures: readonly FilterFailure[]): string {
  const head = `0/${total} nodes are available: ${histogram(failures.flatMap((f) => f.reasons))}.`;
  if (pod.pod.spec?.preemptionPolicy === 'Never') return `${head} preemption: not eligible due to preemptionPolicy=Never..`;
  const preemption = histogram(failures.map((f) => (f.unresolvable ? 'Preemption is not helpful for scheduling' : 'No preemption victims found for incoming pod')));
  return `${head} preemption: 0/${total} nodes are available: ${preemption}..`;
}

/**
 * The FitError text when a PreFilter plugin refused the pod for every node (upstream: the plugin's
 * message instead of the histogram; preemption cannot help anywhere).
 */
export function preFilterFitErrorMessage(pod: PodInfo, total: number, message: string): string {
  const head = `0/${total} nodes are available: ${message}.`;
  if (pod.pod.spec?.preemptionPolicy === 'Never') return `${head} preemption: not eligible due to preemptionPolicy=Never..`;
  return `${head} preemption: 0/${total} nodes are available: ${total} Preemption is not helpful for scheduling..`;
}

/** Upstream's ErrNoNodesAvailable. */
export const NO_NODES_AVAILABLE = 'no nodes available to schedule pods';
