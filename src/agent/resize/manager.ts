/**
 * The node's side of in-place pod resize (upstream v1.28 with InPlacePodVerticalScaling: the
 * kubelet's handlePodResourcesResize, its status manager's allocation checkpoint and the
 * container statuses' allocatedResources and resources).
 *
 * Owns: the allocation of each pod (the requests it was admitted or last resized at, kept in
 * pod_status_manager_state so that an agent restart keeps it), the resize decision of each pod,
 * the resources each running container instance has (set when it started or was updated), and
 * the pod as it is to run (its spec with the allocated resources while a resize waits).
 * Must not: talk to the runtime or the cgroups (the runtime manager and podsync apply).
 */
import type { Container, ContainerStatus, PodStatus, ResourceRequirements } from 'kubernetes-types/core/v1.js';
import { messageOf } from '../../api/errors.js';
import { podNamespacedName, podRequest, qosClass, resourceAmount, type NodePod } from '../../api/pod/index.js';
import type { Logger } from '../logging/index.js';
import { loadResizeState, storeResizeState, type ResizeStatus, type ResourceList } from './checkpoint.js';
import { admitResize, resizeMessage, sameCpuMemory, sameResourceList, type Allocatable, type Requested } from './decide.js';

export interface ResizeManagerOptions {
  /** The checkpoint file (`<root dir>/pod_status_manager_state`). */
  readonly statePath: string;
  readonly logger: Logger;
  /** The node's allocatable CPU and memory. */
  readonly allocatable: () => Allocatable;
  /** The active pods of the node (the pod being resized is left out of them here). */
  readonly activePods: () => readonly NodePod[];
  /** A resize decision other than InProgress (for an event). */
  readonly onDecision?: (pod: NodePod, decision: ResizeStatus, message: string) => void;
}

export interface ResizeManager {
  /**
   * The pod as it is to run: a running pod whose requests changed is admitted against the
   * node's allocatable (accepted: its allocation is the new spec; Deferred or Infeasible: it keeps
   * running with what it was allocated). A pod without an allocation is given its spec's.
   * `previous`: the pod's last status (after an agent restart, the API server's).
   */
  allocatedPod(pod: NodePod, previous: PodStatus | undefined): NodePod;
  /**
   * Adds status.resize and each container's allocatedResources and resources to a status
   * computed for `pod` (the spec) while `allocated` (allocatedPod's answer) runs; records the
   * resources of container instances seen running for the first time.
   */
  decorate(pod: NodePod, allocated: NodePod, status: PodStatus, previous: PodStatus | undefined): PodStatus;
  /**
   * The pod as its cgroup is to be set before its containers are resized: no cpu or memory
   * below what a running container (`running`: container name → running instance ID) still has,
   * since cgroup v1 refuses a pod CFS quota below a container's (upstream lowers the pod's
   * limits after the containers'). The sync sets `allocated` itself once the containers were
   * resized. `allocated` when nothing is lowered (or the QoS class would differ).
   */
  podForCgroup(allocated: NodePod, running: ReadonlyMap<string, string>): NodePod;
  /** The resources a running container instance has, as far as the agent knows. */
  current(uid: string, containerId: string): ResourceRequirements | undefined;
  /** The runtime manager updated or started a container instance with these resources. */
  applied(uid: string, containerId: string, resources: ResourceRequirements): void;
  /** Pods whose resize waits for room (retried when a pod leaves the node). */
  deferred(): string[];
  /** Forgets a pod that left the node. */
  removePod(uid: string): void;
}

const CPU_MEMORY = ['cpu', 'memory'];

/** The requests of a container as an allocation (every resource it requests). */
function requestsOf(c: Container): ResourceList {
  return { ...(c.resources?.requests ?? {}) };
}

function cpuMemory(list: Readonly<Record<string, string>> | undefined): Record<string, string> | undefined {
  if (list === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const r of CPU_MEMORY) if (list[r] !== undefined) out[r] = list[r];
  return out;
}

/**
 * `wanted` with each of its cpu and memory at least `have`'s; for limits an absent one (no
 * limit) is the largest. `wanted` itself when nothing is raised.
 */
function larger(wanted: Readonly<Record<string, string>> | undefined, have: Readonly<Record<string, string>> | undefined, limits: boolean): Readonly<Record<string, string>> | undefined {
  /** The raised values; undefined: no limit. */
  const raised = new Map<string, string | undefined>();
  for (const r of CPU_MEMORY) {
    const w = wanted?.[r];
    const h = have?.[r];
    if (limits && w === undefined) continue;
    if (limits && h === undefined) raised.set(r, undefined);
    else if (h !== undefined && resourceAmount(h, r) > resourceAmount(w, r)) raised.set(r, h);
  }
  if (raised.size === 0) return wanted;
  const merged = Object.entries({ ...wanted, ...Object.fromEntries(raised) });
  return Object.fromEntries(merged.filter((e): e is [string, string] => e[1] !== undefined));
}

function sum(pods: readonly NodePod[]): Requested {
  let cpuMilli = 0;
  let memoryBytes = 0;
  for (const p of pods) {
    cpuMilli += podRequest(p, 'cpu');
    memoryBytes += podRequest(p, 'memory');
  }
  return { cpuMilli, memoryBytes };
}

function statusOf(status: PodStatus | undefined, name: string): ContainerStatus | undefined {
  return status?.containerStatuses?.find((s) => s.name === name);
}

function runningId(s: ContainerStatus | undefined): string | undefined {
  if (s?.state?.running === undefined || s.containerID === undefined) return undefined;
  const at = s.containerID.indexOf('://');
  return at < 0 ? s.containerID : s.containerID.slice(at + 3);
}

class Manager implements ResizeManager {
  private readonly allocations: Map<string, Map<string, ResourceList>>;
  private readonly resizeStatus: Map<string, ResizeStatus>;
  /** The limits each pod's containers were admitted with, by pod UID and container name. */
  private readonly admittedLimits = new Map<string, Map<string, Readonly<Record<string, string>> | undefined>>();
  /** What each running container instance has, by pod UID and container ID. */
  private readonly instances = new Map<string, Map<string, ResourceRequirements>>();

  constructor(private readonly options: ResizeManagerOptions) {
    const state = loadResizeState(options.statePath);
    this.allocations = new Map([...state.allocations].map(([uid, m]) => [uid, new Map(m)]));
    this.resizeStatus = new Map(state.resizeStatus);
  }

  private save(): void {
    try {
      storeResizeState(this.options.statePath, { allocations: this.allocations, resizeStatus: this.resizeStatus });
    } catch (err) {
      // The allocation is kept in memory; the next change writes the file again.
      this.options.logger.error('Writing the pod resource allocation checkpoint failed', { path: this.options.statePath, err: messageOf(err) });
    }
  }

  private allocate(pod: NodePod): void {
    const byName = new Map<string, ResourceList>();
    const limits = new Map<string, Readonly<Record<string, string>> | undefined>();
    for (const c of pod.spec?.containers ?? []) {
      byName.set(c.name, requestsOf(c));
      limits.set(c.name, c.resources?.limits);
    }
    this.allocations.set(pod.metadata.uid, byName);
    this.admittedLimits.set(pod.metadata.uid, limits);
  }

  private setStatus(uid: string, status: ResizeStatus | undefined): void {
    if (this.resizeStatus.get(uid) === status) return;
    if (status === undefined) this.resizeStatus.delete(uid);
    else this.resizeStatus.set(uid, status);
    this.save();
  }

  /** The pod with its containers' allocated requests and admitted limits. */
  private withAllocation(pod: NodePod, previous: PodStatus | undefined): NodePod {
    const allocation = this.allocations.get(pod.metadata.uid);
    if (allocation === undefined || pod.spec === undefined) return pod;
    const limits = this.admittedLimits.get(pod.metadata.uid);
    const containers = pod.spec.containers.map((c) => {
      const requests = allocation.get(c.name);
      if (requests === undefined) return c;
      const limit = limits?.has(c.name) === true ? limits.get(c.name) : statusOf(previous, c.name)?.resources?.limits ?? c.resources?.limits;
      const merged: ResourceRequirements = {
        ...(c.resources ?? {}),
        ...(Object.keys(requests).length === 0 ? {} : { requests: { ...(c.resources?.requests ?? {}), ...requests } }),
        ...(limit === undefined ? {} : { limits: { ...(c.resources?.limits ?? {}), ...cpuMemory(limit) } }),
      };
      return sameCpuMemory(merged, c.resources) ? c : { ...c, resources: merged };
    });
    return containers.every((c, i) => c === pod.spec?.containers[i]) ? pod : { ...pod, spec: { ...pod.spec, containers } };
  }

  allocatedPod(pod: NodePod, previous: PodStatus | undefined): NodePod {
    const { uid } = pod.metadata;
    const allocation = this.allocations.get(uid);
    if (allocation === undefined) {
      this.allocate(pod);
      this.save();
      return pod;
    }
    const resized = (pod.spec?.containers ?? []).some((c) => {
      const allocated = allocation.get(c.name);
      return allocated !== undefined && !sameResourceList(requestsOf(c), allocated);
    });
    if (!resized) {
      // The requests are what the node allocated: a change of limits alone needs no admission (as upstream).
      this.allocate(pod);
      return pod;
    }
    // As upstream: only a running pod is resized (a pending one starts with what it was admitted at).
    if (previous?.phase !== 'Running') return this.withAllocation(pod, previous);
    const allocatable = this.options.allocatable();
    const others = sum(this.options.activePods().filter((p) => p.metadata.uid !== uid).map((p) => this.withAllocation(p, p.status)));
    const wanted = { cpuMilli: podRequest(pod, 'cpu'), memoryBytes: podRequest(pod, 'memory') };
    const decision = admitResize(wanted, others, allocatable);
    const message = resizeMessage(decision, wanted, others, allocatable);
    if (this.resizeStatus.get(uid) !== decision) {
      this.options.logger.info('Pod resize', { pod: podNamespacedName(pod), decision, message });
      if (decision !== 'InProgress') this.options.onDecision?.(pod, decision, message);
    }
    if (decision === 'InProgress') this.allocate(pod);
    this.resizeStatus.set(uid, decision);
    this.save();
    return this.withAllocation(pod, previous);
  }

  decorate(pod: NodePod, allocated: NodePod, status: PodStatus, previous: PodStatus | undefined): PodStatus {
    const { uid } = pod.metadata;
    const allocation = this.allocations.get(uid);
    const specs = new Map((allocated.spec?.containers ?? []).map((c) => [c.name, c]));
    const seen = { differ: false };
    const containerStatuses = (status.containerStatuses ?? []).map((cs) => {
      const c = specs.get(cs.name);
      if (c === undefined) return cs;
      const allocatedResources = allocation?.get(cs.name);
      const id = runningId(cs);
      let actual: ResourceRequirements | undefined;
      if (id !== undefined) {
        actual = this.current(uid, id);
        if (actual === undefined) {
          // First seen running: it has what it was started with (the agent's previous status
          // says so after a restart; else the allocated resources it was just created with).
          const before = statusOf(previous, cs.name);
          actual = runningId(before) === id && before?.resources !== undefined ? before.resources : c.resources ?? {};
          this.applied(uid, id, actual);
        }
      } else {
        actual = c.resources ?? {};
      }
      const resources: ResourceRequirements = {
        ...(c.resources?.limits === undefined ? {} : { limits: { ...c.resources.limits, ...cpuMemory(actual.limits) } }),
        ...(allocatedResources === undefined ? {} : {
          requests: {
            ...allocatedResources,
            ...(actual.requests?.cpu === undefined ? {} : { cpu: actual.requests.cpu }),
          },
        }),
      };
      const spec = pod.spec?.containers.find((s) => s.name === cs.name);
      if (!sameCpuMemory(spec?.resources, resources)) seen.differ = true;
      return {
        ...cs,
        ...(allocatedResources === undefined ? {} : { allocatedResources: { ...allocatedResources } }),
        ...(Object.keys(resources).length === 0 ? {} : { resources }),
      };
    });
    if (!seen.differ) this.setStatus(uid, undefined);
    const resize = seen.differ ? this.resizeStatus.get(uid) : undefined;
    return { ...status, ...(resize === undefined ? {} : { resize }), containerStatuses };
  }

  podForCgroup(allocated: NodePod, running: ReadonlyMap<string, string>): NodePod {
    const { uid } = allocated.metadata;
    if (allocated.spec === undefined) return allocated;
    const containers = allocated.spec.containers.map((c) => {
      const id = running.get(c.name);
      const current = id === undefined ? undefined : this.current(uid, id);
      if (current === undefined) return c;
      const requests = larger(c.resources?.requests, current.requests, false);
      const limits = larger(c.resources?.limits, current.limits, true);
      if (requests === c.resources?.requests && limits === c.resources?.limits) return c;
      const resources: ResourceRequirements = { ...(c.resources ?? {}) };
      delete resources.requests;
      delete resources.limits;
      return { ...c, resources: { ...resources, ...(requests === undefined ? {} : { requests }), ...(limits === undefined ? {} : { limits }) } };
    });
    if (containers.every((c, i) => c === allocated.spec?.containers[i])) return allocated;
    const widened = { ...allocated, spec: { ...allocated.spec, containers } };
    return qosClass(widened) === qosClass(allocated) ? widened : allocated;
  }

  current(uid: string, containerId: string): ResourceRequirements | undefined {
    return this.instances.get(uid)?.get(containerId);
  }

  applied(uid: string, containerId: string, resources: ResourceRequirements): void {
    let byId = this.instances.get(uid);
    if (byId === undefined) {
      byId = new Map();
      this.instances.set(uid, byId);
    }
    byId.set(containerId, resources);
  }

  deferred(): string[] {
    return [...this.resizeStatus].filter(([, s]) => s === 'Deferred').map(([uid]) => uid);
  }

  removePod(uid: string): void {
    this.instances.delete(uid);
    this.admittedLimits.delete(uid);
    const had = this.allocations.delete(uid);
    if (this.resizeStatus.delete(uid) || had) this.save();
  }
}

/** Reads the checkpoint (throws CM_CHECKPOINT_FAILED when it is damaged or edited). */
export function createResizeManager(options: ResizeManagerOptions): ResizeManager {
  return new Manager(options);
}
