/**
 * Part of nodeagent's composition root: the FlexVolume drivers of volumePluginDir and the
 * mounter the volume manager uses for flexVolume volumes (src/agent/flexvolume).
 */
import type { Clock } from '../api/clock.js';
import { messageOf } from '../api/errors.js';
import type { ResolvedConfiguration } from '../agent/config/index.js';
import { createFlexDrivers, createFlexMounter, execDriver, FLEX_CALL_TIMEOUT_MS, type FlexDrivers } from '../agent/flexvolume/index.js';
import type { LogRoot } from '../agent/logging/index.js';
import type { FlexVolumePlugin, VolumeObjectSource } from '../agent/volumes/index.js';

export interface FlexVolumes {
  readonly drivers: FlexDrivers;
  readonly plugin: FlexVolumePlugin;
}

/**
 * Probes volumePluginDir (made when missing) and watches it. A directory that cannot be made or
 * read is logged and the agent runs on (upstream's kubelet does the same); volumes of its
 * drivers then fail with the reason.
 */
export async function startFlexVolumes(resolved: ResolvedConfiguration, logs: LogRoot, options: { readonly clock: Clock; readonly nodeName: string; readonly secrets: Pick<VolumeObjectSource, 'secret'> | undefined }): Promise<FlexVolumes> {
  const c = resolved.config;
  const logger = logs.logger('flexvolume');
  const drivers = createFlexDrivers({ pluginDir: c.volumePluginDir, exec: execDriver, clock: options.clock, logger, callTimeoutMs: FLEX_CALL_TIMEOUT_MS });
  try {
    await drivers.start();
  } catch (err) {
    logger.error('cannot probe the FlexVolume plugin directory', { dir: c.volumePluginDir, err: messageOf(err) });
  }
  const plugin = createFlexMounter({
    rootDir: resolved.options.rootDir,
    nodeName: options.nodeName,
    drivers,
    exec: execDriver,
    callTimeoutMs: FLEX_CALL_TIMEOUT_MS,
    controllerAttachDetach: c.enableControllerAttachDetach,
    ...(options.secrets === undefined ? {} : { secrets: options.secrets }),
    logger,
    clock: options.clock,
  });
  return { drivers, plugin };
}
