/**
 * devicemanager: devices on the node through device plugins (upstream: pkg/kubelet/cm/devicemanager,
 * API v1beta1). Plugins register on `<root-dir>/device-plugins/nodeagent.sock` (or through the
 * plugin watcher, type DevicePlugin); the agent dials each plugin's socket, reads its options,
 * follows its ListAndWatch, and at pod admission gives each container devices of the resources
 * it asks for (topology hints first, GetPreferredAllocation, Allocate), which the container then
 * starts with (PreStartContainer first when asked). State survives restarts in the checkpoint.
 * docs/devices.md is the plugin author's side.
 *
 * It owns: the device-plugins directory (its stale sockets are removed at start, the checkpoint
 * and the DEPRECATION marker written), the registration socket, the gRPC clients of the plugins,
 * which devices each container holds, and the checks of what plugins send.
 * It must not: create, start or kill containers (the runtime manager starts them with the run
 * options), write the Node (the node status reads `node.capacity()`), or trust a plugin's answer
 * unchecked: a bad registration is refused with its reason, a bad device list is refused whole.
 */
import { DeviceAllocation } from './allocation.js';
import { DeviceState, type DeviceManagerOptions } from './manager.js';
import type { DeviceManager } from './types.js';
import { nodeFacts, pluginHandler, podResourcesView } from './views.js';

export { API_VERSION, CHECKPOINT_FILE, HEALTHY, REGISTRATION_SOCKET, UNHEALTHY, type ContainerAllocation, type PluginDevice } from './api.js';
export { DEVICE_ALLOCATION_FAILED } from './allocate.js';
export { DEVICE_PRE_START_FAILED } from './allocation.js';
export { DEVICE_CDI_UNSUPPORTED, runtimeSupportsCDI } from './cdi.js';
export { DEVICE_PLUGIN_CALL_FAILED, DEVICE_PLUGIN_UNREACHABLE, dialDevicePlugin, type DevicePluginClient, type PluginDialer } from './endpoint.js';
export { DEVICE_MANAGER_NOT_STARTED, type DeviceManagerOptions } from './manager.js';
export type { DeviceRunOptions } from './pod-devices.js';
export { ENDPOINT_STOP_GRACE_MS } from './resources.js';
export { DEVICE_REGISTRATION_INVALID, DEVICE_REGISTRATION_SERVER_FAILED } from './server.js';
export type {
  ContainerDeviceSource, DeviceCapacity, DeviceHintProvider, DeviceManager, DeviceNodeFacts, DevicePluginHandler, DevicePodResources,
  DeviceStartContext, ListedDevice,
} from './types.js';

/** The device manager, not started (the container manager starts it). */
export function createDeviceManager(options: DeviceManagerOptions): DeviceManager {
  const state = new DeviceState(options);
  const allocation = new DeviceAllocation(state);
  return {
    hints: allocation,
    containers: allocation,
    node: nodeFacts(state),
    podResources: podResourcesView(state),
    pluginHandler: pluginHandler(state),
  };
}
