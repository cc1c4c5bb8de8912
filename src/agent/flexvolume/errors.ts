/** The FlexVolume module's error codes (see index.ts). Each message names the driver, the call and, for pod volumes, the volume. */

/** A volume names a driver with no executable at `<volumePluginDir>/<vendor>~<driver>/<driver>`, or whose init failed (retried: the driver may be installed or fixed). */
export const FLEXVOLUME_DRIVER_NOT_FOUND = 'FLEXVOLUME_DRIVER_NOT_FOUND';
/** A driver call could not run, exited non-zero, or answered `"status": "Failure"`. */
export const FLEXVOLUME_CALL_FAILED = 'FLEXVOLUME_CALL_FAILED';
/** A driver call printed something other than the JSON status object. */
export const FLEXVOLUME_OUTPUT_INVALID = 'FLEXVOLUME_OUTPUT_INVALID';
/** A driver call outlived its time limit and was killed. */
export const FLEXVOLUME_CALL_TIMEOUT = 'FLEXVOLUME_CALL_TIMEOUT';
/** The secret of a volume's secretRef is missing, of another type than the driver's name, or cannot be read (or the agent runs without an API server). */
export const FLEXVOLUME_SECRET_UNAVAILABLE = 'FLEXVOLUME_SECRET_UNAVAILABLE';
/** A driver that attaches is used while enableControllerAttachDetach is true: no controller of this system attaches FlexVolumes. */
export const FLEXVOLUME_ATTACH_BY_CONTROLLER = 'FLEXVOLUME_ATTACH_BY_CONTROLLER';
