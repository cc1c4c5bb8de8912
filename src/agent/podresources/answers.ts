/**
 * The answers of the pod resources API, in the loader's camelCase shapes of
 * proto/podresources-v1.proto (upstream: server_v1.go and the container manager's providers):
 * a device is listed once per NUMA node it is on (without topology when it has none), CPU IDs
 * are the container's exclusive CPUs, memory blocks carry their NUMA nodes.
 */
import type { Container } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../api/pod/index.js';
import type { DevicePodResources, ListedDevice, MemoryBlock, ResourceAssignments } from '../cm/index.js';

export interface WireTopology {
  readonly nodes: readonly { readonly ID: number }[];
}

export interface WireContainerDevices {
  readonly resourceName: string;
  readonly deviceIds: readonly string[];
  readonly topology: WireTopology | null;
}

export interface WireContainerMemory {
  readonly memoryType: string;
  readonly size: number;
  readonly topology: WireTopology;
}

export interface WirePodResources {
  readonly name: string;
  readonly namespace: string;
  readonly containers: readonly {
    readonly name: string;
    readonly devices: readonly WireContainerDevices[];
    readonly cpuIds: readonly number[];
    readonly memory: readonly WireContainerMemory[];
    readonly dynamicResources: readonly never[];
  }[];
}

export interface AnswerSources {
  readonly devices: DevicePodResources;
  readonly assignments: () => ResourceAssignments;
  /** Sidecars (restartable init containers) are listed with the containers (the SidecarContainers gate). */
  readonly sidecarContainers: boolean;
}

function devices(list: readonly ListedDevice[]): WireContainerDevices[] {
  return list.map((d) => ({ resourceName: d.resourceName, deviceIds: [d.deviceId], topology: d.numaNode === undefined ? null : { nodes: [{ ID: d.numaNode }] } }));
}

function memory(blocks: readonly MemoryBlock[]): WireContainerMemory[] {
  return blocks.map((b) => ({ memoryType: b.type, size: b.bytes, topology: { nodes: b.numaNodes.map((ID) => ({ ID })) } }));
}

/** One pod's resources (upstream: the List and Get entries). */
export function podResources(pod: NodePod, sources: AnswerSources): WirePodResources {
  const uid = pod.metadata.uid;
  const assignments = sources.assignments();
  const containers: Container[] = [
    ...(sources.sidecarContainers ? (pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always') : []),
    ...(pod.spec?.containers ?? []),
  ];
  return {
    name: pod.metadata.name,
    namespace: pod.metadata.namespace,
    containers: containers.map((c) => ({
      name: c.name,
      devices: devices(sources.devices.devicesOf(uid, c.name)),
      cpuIds: assignments.exclusiveCPUs(uid, c.name),
      memory: memory(assignments.memory(uid, c.name)),
      dynamicResources: [],
    })),
  };
}

/** GetAllocatableResources. */
export function allocatableResources(sources: AnswerSources): { devices: WireContainerDevices[]; cpuIds: number[]; memory: WireContainerMemory[] } {
  const assignments = sources.assignments();
  return { devices: devices(sources.devices.allocatableDevices()), cpuIds: assignments.allocatableCPUs(), memory: memory(assignments.allocatableMemory()) };
}
