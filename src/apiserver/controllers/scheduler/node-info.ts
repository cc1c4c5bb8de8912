/**
 * The scheduler's view of one node: the Node (absent while only pods name it), its allocatable,
 * and the pods bound or assumed to be on it with what they add up to (requests, non-zero
 * requests for scoring, host ports, pod count).
 */
import type { Node } from 'kubernetes-types/core/v1.js';
import type { HostPort } from '../../../api/pod/index.js';
import { allocatableOf, type PodInfo } from './pod-info.js';

export class NodeInfo {
  readonly name: string;
  node: Node | undefined;
  allocatable = new Map<string, number>();
  readonly requested = new Map<string, number>();
  nonZeroCpu = 0;
  nonZeroMemory = 0;
  readonly pods = new Map<string, PodInfo>();

  constructor(name: string) {
    this.name = name;
  }

  setNode(node: Node | undefined): void {
    this.node = node;
    this.allocatable = node === undefined ? new Map<string, number>() : allocatableOf(node);
  }

  /** Adds (or replaces) a pod's share. */
  addPod(pod: PodInfo): void {
    this.removePod(pod.key);
    this.pods.set(pod.key, pod);
    this.account(pod, 1);
  }

  removePod(key: string): PodInfo | undefined {
    const pod = this.pods.get(key);
    if (pod === undefined) return undefined;
    this.pods.delete(key);
    this.account(pod, -1);
    return pod;
  }

  usedPorts(): HostPort[] {
    return [...this.pods.values()].flatMap((p) => p.ports);
  }

  private account(pod: PodInfo, sign: 1 | -1): void {
    for (const [resource, amount] of pod.requests) this.requested.set(resource, (this.requested.get(resource) ?? 0) + sign * amount);
    this.nonZeroCpu += sign * pod.nonZeroCpu;
    this.nonZeroMemory += sign * pod.nonZeroMemory;
  }
}
