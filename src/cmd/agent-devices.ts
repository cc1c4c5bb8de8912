/**
 * Part of nodeagent's composition root: devices on the node. `buildDeviceManager` makes the
 * device manager (src/agent/cm/devicemanager) over `<root-dir>/device-plugins`; the container
 * manager starts it with the other resource managers. `startDeviceServices` starts, once the
 * container manager runs, the plugin watcher over `<root-dir>/plugins_registry` with the device
 * manager as the DevicePlugin handler (other components add theirs through `handlers`), and the
 * pod resources API on `<root-dir>/pod-resources`. Only wiring: the rules live in the modules.
 */
import path from 'node:path';
import type { Clock } from '../api/clock.js';
import type { NodePod } from '../api/pod/index.js';
import { createDeviceManager, type DeviceManager, type DeviceNodeFacts, type ResourceAssignments } from '../agent/cm/index.js';
import type { ResolvedConfiguration } from '../agent/config/index.js';
import type { LogRoot } from '../agent/logging/index.js';
import type { NodeFacts } from '../agent/nodestatus/index.js';
import { DEVICE_PLUGIN_TYPE, createPluginManager, type PluginHandler } from '../agent/pluginmanager/index.js';
import { createPodResourcesServer } from '../agent/podresources/index.js';
import type { CriClient } from '../agent/runtime/cri/index.js';

export function buildDeviceManager(resolved: ResolvedConfiguration, logs: LogRoot, clock: Clock, cri: Pick<CriClient, 'version'>): DeviceManager {
  return createDeviceManager({
    dir: path.join(resolved.options.rootDir, 'device-plugins'),
    clock,
    logger: logs.logger('devicemanager'),
    gates: resolved.gates,
    runtimeVersion: async () => {
      const v = await cri.version('v1');
      return { name: v.runtimeName, version: v.runtimeVersion };
    },
  });
}

/** The node status's device plugin resources. */
export function deviceNodeFacts(devices: DeviceNodeFacts): Pick<NodeFacts, 'extendedResources' | 'resetExtendedResources'> {
  return { extendedResources: () => devices.capacity(), resetExtendedResources: () => devices.resetExtendedResources() };
}

export interface DeviceServicesDeps {
  readonly resolved: ResolvedConfiguration;
  readonly logs: LogRoot;
  readonly clock: Clock;
  readonly devices: DeviceManager;
  /** The pods the agent knows (the pod resources API lists them). */
  readonly pods: () => readonly NodePod[];
  /** The CPU and memory managers' assignments. */
  readonly assignments: () => ResourceAssignments;
  /** Handlers of other plugin types (CSIPlugin), by type. */
  readonly handlers?: ReadonlyMap<string, PluginHandler>;
}

/** Starts the plugin watcher and the pod resources API; `stop` stops both. */
export async function startDeviceServices(d: DeviceServicesDeps): Promise<{ stop(): Promise<void> }> {
  const rootDir = d.resolved.options.rootDir;
  const watcher = createPluginManager({ dir: path.join(rootDir, 'plugins_registry'), clock: d.clock, logger: d.logs.logger('pluginmanager') });
  watcher.addHandler(DEVICE_PLUGIN_TYPE, d.devices.pluginHandler);
  for (const [type, handler] of d.handlers ?? []) watcher.addHandler(type, handler);
  const podResources = createPodResourcesServer({
    dir: path.join(rootDir, 'pod-resources'),
    sources: { pods: d.pods, devices: d.devices.podResources, assignments: d.assignments },
    gates: d.resolved.gates,
    clock: d.clock,
    logger: d.logs.logger('podresources'),
  });
  await podResources.start();
  try {
    await watcher.start();
  } catch (err) {
    await podResources.stop();
    throw err;
  }
  return {
    async stop() {
      await watcher.stop();
      await podResources.stop();
    },
  };
}
