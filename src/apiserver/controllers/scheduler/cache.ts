/**
 * The scheduler's cache of the cluster: a NodeInfo per node (made for a node's pods even before
 * the Node is seen), which pod is counted on which node, and the pods assumed on a node while
 * their binding is written (upstream's AssumePod/ForgetPod), so that the next decision counts
 * them without waiting for the watch; and how many of the counted pods name each claim.
 */
import type { Node } from 'kubernetes-types/core/v1.js';
import { NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';

export class SchedulerCache {
  private readonly nodes = new Map<string, NodeInfo>();
  /** Pod key -> the node it is counted on. */
  private readonly placement = new Map<string, string>();
  private readonly assumed = new Set<string>();
  /** Claim (`namespace/name`) -> how many counted pods name it (upstream's PVCRefCounts). */
  private readonly claimUsers = new Map<string, number>();

  private info(name: string): NodeInfo {
    let info = this.nodes.get(name);
    if (info === undefined) {
      info = new NodeInfo(name);
      this.nodes.set(name, info);
    }
    return info;
  }

  setNode(node: Node): void {
    this.info(node.metadata?.name ?? '').setNode(node);
  }

  removeNode(name: string): void {
    const info = this.nodes.get(name);
    if (info === undefined) return;
    info.setNode(undefined);
    if (info.pods.size === 0) this.nodes.delete(name);
  }

  /** The nodes a pod may be placed on (those whose Node is known). */
  candidates(): NodeInfo[] {
    return [...this.nodes.values()].filter((n) => n.node !== undefined);
  }

  /** Counts a bound pod on its node (replacing an assumption). */
  addPod(pod: PodInfo, nodeName: string): void {
    const was = this.placement.get(pod.key);
    if (was !== undefined && was !== nodeName) this.removePod(pod.key);
    this.assumed.delete(pod.key);
    if (was !== nodeName) for (const c of pod.claims) this.claimUsers.set(c, (this.claimUsers.get(c) ?? 0) + 1);
    this.info(nodeName).addPod(pod);
    this.placement.set(pod.key, nodeName);
  }

  /** How many pods bound (or assumed) to a node name the claim. */
  usersOfClaim(claim: string): number {
    return this.claimUsers.get(claim) ?? 0;
  }

  /** Stops counting a pod; true when it was counted. */
  removePod(key: string): boolean {
    const nodeName = this.placement.get(key);
    if (nodeName === undefined) return false;
    this.placement.delete(key);
    this.assumed.delete(key);
    const info = this.nodes.get(nodeName);
    const removed = info?.removePod(key);
    for (const c of removed?.claims ?? []) {
      const n = (this.claimUsers.get(c) ?? 0) - 1;
      if (n > 0) this.claimUsers.set(c, n);
      else this.claimUsers.delete(c);
    }
    if (info !== undefined && info.node === undefined && info.pods.size === 0) this.nodes.delete(nodeName);
    return true;
  }

  assume(pod: PodInfo, nodeName: string): void {
    this.addPod(pod, nodeName);
    this.assumed.add(pod.key);
  }

  /** Drops an assumption whose binding failed (a pod the watch showed bound meanwhile stays). */
  forget(key: string): void {
    if (this.assumed.has(key)) this.removePod(key);
  }

  /** The pod as counted (bound or assumed), if it is. */
  counted(key: string): PodInfo | undefined {
    const nodeName = this.placement.get(key);
    return nodeName === undefined ? undefined : this.nodes.get(nodeName)?.pods.get(key);
  }

  isCounted(key: string): boolean {
    return this.placement.has(key);
  }
}
