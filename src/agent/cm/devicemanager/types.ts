/**
 * The device manager as each of its users sees it: the container manager (start, hints and
 * allocation at admission), the runtime manager (what a container starts with), the node status
 * (capacity and allocatable), the pod resources API (who holds what), and the plugin watcher
 * (plugins that register through plugins_registry/).
 */
import type { Container } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../../api/pod/index.js';
import type { ProviderHints, TopologyHint } from '../topologymanager/index.js';
import type { DeviceRunOptions } from './pod-devices.js';

/** What the device manager reads of the agent once it starts. */
export interface DeviceStartContext {
  /** The pods admitted and not finished (their devices are kept; others' are freed once the sources are ready). */
  activePods(): readonly NodePod[];
  /** Every pod source delivered its first snapshot. */
  sourcesReady(): boolean;
  /** The machine's NUMA nodes. */
  readonly numaNodes: readonly number[];
  /** The containers running when the agent started (they keep their devices across the restart). */
  readonly running: readonly { readonly podUID: string; readonly name: string }[];
  /** The topology manager's affinity of a container (for an allocation made at container start). */
  affinity(podUID: string, container: string): TopologyHint;
}

/** The container manager's view: the first hint provider of the topology manager. */
export interface DeviceHintProvider {
  /** Reads the checkpoint and serves registrations. Throws DEVICE_REGISTRATION_SERVER_FAILED. */
  start(context: DeviceStartContext): Promise<void>;
  /** Stops serving and disconnects the plugins; allocations stay in the checkpoint. */
  stop(): Promise<void>;
  topologyHints(pod: NodePod, container: Container): ProviderHints;
  podTopologyHints(pod: NodePod): ProviderHints;
  /**
   * Gives the container its devices (GetPreferredAllocation, Allocate), with the topology
   * manager's merged hint. Rejects with the reason to refuse the pod (upstream's texts).
   */
  allocate(pod: NodePod, container: Container, affinity: TopologyHint): Promise<void>;
}

/** The runtime manager's view. */
export interface ContainerDeviceSource {
  /**
   * What the container starts with to use its devices; undefined when it holds none. Calls the
   * plugin's PreStartContainer when it asked for it (up to 30 s), and allocates again when the
   * container's devices were lost (upstream's restart race). Rejects to fail the container
   * (CreateContainerConfigError): a plugin that fails PreStartContainer, CDI devices the runtime
   * cannot take.
   */
  containerDevices(pod: NodePod, container: Container): Promise<DeviceRunOptions | undefined>;
}

/** Device plugin resources for the node status. */
export interface DeviceCapacity {
  readonly capacity: ReadonlyMap<string, number>;
  readonly allocatable: ReadonlyMap<string, number>;
  /** Resources whose plugins went away for good: reported as 0 (upstream keeps them at 0 rather than dropping them). */
  readonly removed: readonly string[];
}

/** The node status's view. */
export interface DeviceNodeFacts {
  /** Capacity and allocatable of the device plugin resources (resources gone for 5 minutes are removed here). */
  capacity(): DeviceCapacity;
  /** Devices held by pods, by resource (admission never counts a resource below what its pods hold). */
  allocated(): ReadonlyMap<string, number>;
  /** The agent started without a checkpoint: the Node's extended resources are zeroed at registration (a recreated node). */
  resetExtendedResources(): boolean;
  /** Calls `listener` when capacity or allocatable changed; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
}

/** One device as the pod resources API lists it. */
export interface ListedDevice {
  readonly resourceName: string;
  readonly deviceId: string;
  /** The NUMA node it is listed on; undefined: no topology. */
  readonly numaNode: number | undefined;
}

/** The pod resources API's view. */
export interface DevicePodResources {
  /** The container's devices, one entry per device and NUMA node. */
  devicesOf(podUID: string, container: string): ListedDevice[];
  /** The healthy devices of every resource, one entry per device and NUMA node. */
  allocatableDevices(): ListedDevice[];
  /** Frees the devices of pods no longer active (upstream UpdateAllocatedDevices, before each List). */
  updateAllocated(): void;
}

/**
 * A plugin handler of the plugin watcher (pluginmanager's PluginHandler, by shape): device
 * plugins that register through `<root-dir>/plugins_registry/` with type DevicePlugin.
 */
export interface DevicePluginHandler {
  validatePlugin(name: string, endpoint: string, versions: readonly string[]): void;
  registerPlugin(name: string, endpoint: string, versions: readonly string[]): Promise<void>;
  deregisterPlugin(name: string, endpoint: string): void;
}

export interface DeviceManager {
  readonly hints: DeviceHintProvider;
  readonly containers: ContainerDeviceSource;
  readonly node: DeviceNodeFacts;
  readonly podResources: DevicePodResources;
  readonly pluginHandler: DevicePluginHandler;
}
