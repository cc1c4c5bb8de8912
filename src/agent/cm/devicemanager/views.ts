/**
 * The device manager's state as the node status, the pod resources API and the plugin watcher
 * read it (upstream: GetCapacity, GetDevices, GetAllocatableDevices and the plugin handler).
 */
import type { DeviceState } from './manager.js';
import type { DeviceNodeFacts, DevicePluginHandler, DevicePodResources, ListedDevice } from './types.js';

export function nodeFacts(s: DeviceState): DeviceNodeFacts {
  return {
    capacity() {
      s.expire();
      const { capacity, allocatable } = s.registry.capacity();
      return { capacity, allocatable, removed: s.removedResources().filter((r) => !capacity.has(r)) };
    },
    allocated() {
      return new Map([...s.allocated].map(([resource, ids]) => [resource, ids.size]));
    },
    resetExtendedResources: () => s.shouldResetExtendedResources(),
    onChange: (listener) => s.onChange(listener),
  };
}

function listed(resourceName: string, deviceId: string, numaNodes: readonly number[] | undefined): ListedDevice[] {
  if (numaNodes === undefined || numaNodes.length === 0) return [{ resourceName, deviceId, numaNode: undefined }];
  return numaNodes.map((numaNode) => ({ resourceName, deviceId, numaNode }));
}

export function podResourcesView(s: DeviceState): DevicePodResources {
  return {
    devicesOf(podUID, container) {
      const out: ListedDevice[] = [];
      for (const [resource, devices] of s.podDevices.containerDeviceInstances(podUID, container)) {
        for (const [id, nodes] of devices) out.push(...listed(resource, id, nodes));
      }
      return out;
    },
    allocatableDevices() {
      const out: ListedDevice[] = [];
      for (const [resource, ids] of s.registry.registered()) {
        for (const id of ids) out.push(...listed(resource, id, s.registry.device(resource, id)?.numaNodes));
      }
      return out;
    },
    updateAllocated: () => { s.updateAllocated(); },
  };
}

export function pluginHandler(s: DeviceState): DevicePluginHandler {
  return {
    validatePlugin(name, _endpoint, versions) {
      s.validatePlugin(name, versions);
    },
    async registerPlugin(name, endpoint, versions) {
      s.validatePlugin(name, versions);
      s.log.v(2, 'Registering device plugin through the plugin watcher', { resource: name, endpoint });
      await s.connect(name, endpoint);
    },
    deregisterPlugin(name, endpoint) {
      s.log.v(2, 'Deregistering device plugin', { resource: name, endpoint });
      s.deregister(name, endpoint);
    },
  };
}
