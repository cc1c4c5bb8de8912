/**
 * The device manager at admission and container start (upstream: Allocate,
 * allocateContainerResources, GetDeviceRunContainerOptions, callPreStartContainerIfNeeded):
 *
 * - hints for the topology manager, container by container or for the whole pod;
 * - allocation in the topology manager's order (init containers first: devices an init
 *   container held are reused by the next containers, except a sidecar's, which it keeps),
 *   one at a time: each waits for the plugin's GetPreferredAllocation and Allocate;
 * - at each container start: PreStartContainer when the plugin asked for it, an allocation
 *   again when the container's devices were lost, and the run options (envs, mounts, device
 *   nodes, annotations, CDI devices) merged over its resources.
 */
import type { Container } from 'kubernetes-types/core/v1.js';
import { OrchError } from '../../../api/errors.js';
import type { NodePod } from '../../../api/pod/index.js';
import type { TopologyHint } from '../topologymanager/index.js';
import { allocationError, byNumaNode, containerLimits, devicesToAllocate, podLimits, type AllocationContext } from './allocate.js';
import { cdiUnsupported, runtimeSupportsCDI } from './cdi.js';
import { containerHints, podHints, type HintInputs } from './hints.js';
import type { DeviceState } from './manager.js';
import type { DeviceRunOptions } from './pod-devices.js';
import type { ContainerDeviceSource, DeviceHintProvider } from './types.js';

/** PreStartContainer failed, or a container lost its devices and they cannot be given again. */
export const DEVICE_PRE_START_FAILED = 'DEVICE_PRE_START_FAILED';

export class DeviceAllocation implements DeviceHintProvider, ContainerDeviceSource {
  /** Devices an init container left for the next containers, by pod (only the pod being admitted is kept). */
  private readonly reuse = new Map<string, Map<string, Set<string>>>();
  /** Allocations one at a time: each reads and marks the devices in use across its awaits. */
  private queue: Promise<void> = Promise.resolve();
  private runtime: Promise<{ readonly name: string; readonly version: string }> | undefined;
  /** Containers whose CDI devices were left out with the gate off (said once each). */
  private readonly cdiWarned = new Set<string>();

  constructor(private readonly s: DeviceState) {}

  start: DeviceHintProvider['start'] = (context) => this.s.start(context);
  stop: DeviceHintProvider['stop'] = () => this.s.stop();

  private inputs(): HintInputs {
    return { numaNodes: this.s.numaNodes, registry: this.s.registry, allocated: this.s.allocated, podDevices: this.s.podDevices };
  }

  private readonly note = (message: string, fields: Readonly<Record<string, unknown>>): void => {
    this.s.log.v(3, message, fields);
  };

  private readonly isDeviceResource = (resource: string): boolean => this.s.isDeviceResource(resource);

  topologyHints(pod: NodePod, container: Container): ReturnType<DeviceHintProvider['topologyHints']> {
    this.s.updateAllocated();
    const requests = containerLimits(container, this.isDeviceResource);
    if (requests.size === 0) return undefined;
    return containerHints(this.inputs(), pod.metadata.uid, container.name, requests, this.reuse.get(pod.metadata.uid), this.note);
  }

  podTopologyHints(pod: NodePod): ReturnType<DeviceHintProvider['podTopologyHints']> {
    this.s.updateAllocated();
    const requests = podLimits(pod, this.isDeviceResource);
    if (requests.size === 0) return undefined;
    return podHints(this.inputs(), pod.metadata.uid, requests, this.note);
  }

  allocate(pod: NodePod, container: Container, affinity: TopologyHint): Promise<void> {
    const run = this.queue.then(() => this.allocateNow(pod, container, affinity));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async allocateNow(pod: NodePod, container: Container, affinity: TopologyHint): Promise<void> {
    const uid = pod.metadata.uid;
    for (const other of this.reuse.keys()) if (other !== uid) this.reuse.delete(other);
    const reuse = this.reuse.get(uid) ?? new Map<string, Set<string>>();
    this.reuse.set(uid, reuse);
    await this.allocateContainer(pod, container, reuse, affinity);
    const init = pod.spec?.initContainers?.find((c) => c.name === container.name);
    if (init !== undefined && init.restartPolicy !== 'Always') this.s.podDevices.addContainerDevices(uid, container.name, reuse);
    else this.s.podDevices.removeContainerDevices(uid, container.name, reuse);
  }

  private context(): AllocationContext {
    const s = this.s;
    const running = new Set((s.context?.running ?? []).map((r) => `${r.podUID}/${r.name}`));
    return {
      registry: s.registry,
      podDevices: s.podDevices,
      allocated: s.allocated,
      wasRunning: (podUID, name) => running.has(`${podUID}/${name}`),
      preferred: async (resource, available, mustInclude, size) => {
        const connected = s.registry.connected(resource);
        if (connected === undefined) throw allocationError(`endpoint not found in cache for a registered resource: ${resource}`, resource);
        if (!connected.options.getPreferredAllocationAvailable) return undefined;
        return new Set(await connected.client.preferredAllocation([...available].sort(), [...mustInclude].sort(), size));
      },
      note: this.note,
    };
  }

  /** upstream allocateContainerResources. */
  private async allocateContainer(pod: NodePod, container: Container, reuse: ReadonlyMap<string, ReadonlySet<string>>, affinity: TopologyHint): Promise<void> {
    const s = this.s;
    const uid = pod.metadata.uid;
    const ctx = this.context();
    let swept = false;
    let changed = false;
    for (const [resource, needed] of containerLimits(container, this.isDeviceResource)) {
      if (needed === 0) continue;
      if (!swept) {
        s.updateAllocated();
        swept = true;
      }
      let ids: Set<string>;
      try {
        ids = await devicesToAllocate(ctx, uid, container.name, resource, needed, reuse.get(resource) ?? new Set(), affinity);
      } catch (err) {
        s.resetAllocated();
        throw err;
      }
      if (ids.size === 0) continue;
      changed = true;
      const connected = s.registry.connected(resource);
      if (connected === undefined) {
        s.resetAllocated();
        throw allocationError(`endpoint of ${resource} has been stopped: its device plugin is not registered`, resource);
      }
      const chosen = [...ids].sort();
      s.log.v(4, 'Making allocation request for device plugin', { resource, devices: chosen, pod: `${pod.metadata.namespace}/${pod.metadata.name}`, container: container.name });
      let allocation;
      try {
        allocation = await connected.client.allocate(chosen);
      } catch (err) {
        s.resetAllocated();
        throw err;
      }
      s.podDevices.insert(uid, container.name, resource, byNumaNode(s.registry, resource, chosen), allocation);
    }
    if (changed) s.writeCheckpoint();
  }

  async containerDevices(pod: NodePod, container: Container): Promise<DeviceRunOptions | undefined> {
    const s = this.s;
    const uid = pod.metadata.uid;
    let reallocate = false;
    for (const [resource, value] of containerLimits(container, this.isDeviceResource)) {
      if (value === 0) continue;
      await this.preStart(uid, container.name, resource);
      if (!(s.context?.activePods().some((p) => p.metadata.uid === uid) ?? false)) continue;
      if (s.podDevices.containerDevices(uid, container.name, resource) === undefined) reallocate = true;
    }
    if (reallocate) {
      s.log.info('Allocating the devices of a container again: they were not found', { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, container: container.name });
      await this.allocate(pod, container, s.context?.affinity(uid, container.name) ?? { numaAffinity: undefined, preferred: false });
    }
    const options = s.podDevices.runOptions(uid, container.name, (c) => {
      s.log.error('Device plugins gave a container conflicting settings; the first resource\'s is kept', { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, container: container.name, ...c });
    });
    if (options === undefined || options.cdiDevices.length === 0) return options;
    return this.withCdi(pod, container, options);
  }

  private async withCdi(pod: NodePod, container: Container, options: DeviceRunOptions): Promise<DeviceRunOptions> {
    const podName = `${pod.metadata.namespace}/${pod.metadata.name}`;
    if (!this.s.options.gates.enabled('DevicePluginCDIDevices')) {
      const key = `${pod.metadata.uid}/${container.name}`;
      if (!this.cdiWarned.has(key)) {
        this.cdiWarned.add(key);
        this.s.log.warn('CDI devices of a device plugin are not passed to the runtime: the DevicePluginCDIDevices feature gate is off', { pod: podName, container: container.name, cdiDevices: options.cdiDevices });
      }
      return { ...options, cdiDevices: [] };
    }
    this.runtime ??= this.s.options.runtimeVersion();
    let runtime;
    try {
      runtime = await this.runtime;
    } catch (err) {
      this.runtime = undefined;
      throw err;
    }
    if (!runtimeSupportsCDI(runtime.name, runtime.version)) throw cdiUnsupported(container.name, podName, options.cdiDevices, runtime);
    return options;
  }

  /** upstream callPreStartContainerIfNeeded. */
  private async preStart(podUID: string, container: string, resource: string): Promise<void> {
    const s = this.s;
    if (!s.registry.has(resource)) throw new OrchError(DEVICE_PRE_START_FAILED, 'unavailable', `endpoint not found in cache for a registered resource: ${resource}`, { subject: resource });
    const options = s.registry.options(resource);
    if (options?.preStartRequired !== true) return;
    const devices = s.podDevices.containerDevices(podUID, container, resource);
    if (devices === undefined) {
      throw new OrchError(DEVICE_PRE_START_FAILED, 'unavailable', `no devices found allocated in local cache for pod ${podUID}, container ${container}, resource ${resource}`, { subject: resource });
    }
    const connected = s.registry.connected(resource);
    if (connected === undefined) throw new OrchError(DEVICE_PRE_START_FAILED, 'unavailable', `endpoint of ${resource} has been stopped: its device plugin is not registered`, { subject: resource });
    try {
      await connected.client.preStartContainer([...devices].sort());
    } catch (err) {
      throw new OrchError(DEVICE_PRE_START_FAILED, 'unavailable', `device plugin PreStartContainer rpc failed with err: ${err instanceof Error ? err.message : String(err)}`, { subject: resource, cause: err });
    }
  }
}
