/**
 * flexvolume: FlexVolume drivers on the node (upstream: pkg/volume/flexvolume, renamed: option
 * keys `orch.io/...`, plugin directory `orch.io/flexvolume`). Drivers are executables at
 * `<volumePluginDir>/<vendor>~<driver>/<driver>`, found at start and when the directory changes,
 * each initialised with `init` (its capabilities: attach, selinuxRelabel, supportsMetrics,
 * fsGroup). The mounter is the volume manager's FlexVolumePlugin: the attach family when the
 * driver attaches and the agent attaches (enableControllerAttachDetach false), then `mount` into
 * `<root-dir>/pods/<uid>/volumes/<vendor>~<driver>/<name>`; teardown `unmount`, and
 * `unmountdevice`/`detach` after the last pod. Replies are parsed strictly ("Success", "Failure",
 * "Not supported"; "Not supported" falls back to upstream's defaults).
 *
 * It owns: running the drivers (execFile, never a shell, with a time limit), the drivers' pod
 * directories and `<root-dir>/plugins/orch.io/flexvolume/`. It must not: write to the plugin
 * directory (beyond making it when missing), read the API server but through the secret source
 * it is given, or touch other volume types' directories.
 */
export { callDriver, execDriver, parseDriverReply, DEFAULT_CAPABILITIES, type DriverCapabilities, type DriverReply, type FlexExec, type FlexExecResult } from './driver-call.js';
export { createFlexDrivers, driverDirName, type FlexDriver, type FlexDrivers, type FlexDriversOptions } from './drivers.js';
export {
  FLEXVOLUME_ATTACH_BY_CONTROLLER, FLEXVOLUME_CALL_FAILED, FLEXVOLUME_CALL_TIMEOUT, FLEXVOLUME_DRIVER_NOT_FOUND, FLEXVOLUME_OUTPUT_INVALID, FLEXVOLUME_SECRET_UNAVAILABLE,
} from './errors.js';
export { createFlexMounter, systemMountOps, type FlexMounterOptions, type MountOps } from './mounter.js';
export {
  OPTION_FS_GROUP, OPTION_FS_TYPE, OPTION_POD_NAME, OPTION_POD_NAMESPACE, OPTION_POD_UID, OPTION_PV_OR_VOLUME_NAME, OPTION_READ_WRITE, OPTION_SECRET_PREFIX, OPTION_SERVICE_ACCOUNT_NAME,
} from './options.js';

/** Time limit of one driver call (upstream has none but for waitforattach; a hung driver must not hold a pod's sync forever). */
export const FLEX_CALL_TIMEOUT_MS = 60_000;
