/** The CSI module's error codes (see index.ts). */

/** A driver's registration was refused: no 1.x version, an empty name or node ID, NodeGetInfo failed. */
export const CSI_DRIVER_INVALID = 'CSI_DRIVER_INVALID';
/** A volume names a CSI driver that is not registered on this node (retried: the driver may come). */
export const CSI_DRIVER_NOT_REGISTERED = 'CSI_DRIVER_NOT_REGISTERED';
/** A CSI call to set up a volume failed (stage or publish), or its VolumeAttachment is not attached yet. */
export const CSI_MOUNT_FAILED = 'CSI_MOUNT_FAILED';
/** A CSI call to tear a volume down failed (unpublish or unstage); retried by the next cleanup. */
export const CSI_UNMOUNT_FAILED = 'CSI_UNMOUNT_FAILED';
/** Writing the Node's CSI annotation or labels or the CSINode failed. */
export const CSI_NODE_INFO_FAILED = 'CSI_NODE_INFO_FAILED';
/** A volume's lifecycle mode (an inline volume is Ephemeral) is not among those its driver's CSIDriver lists. */
export const CSI_VOLUME_MODE_UNSUPPORTED = 'CSI_VOLUME_MODE_UNSUPPORTED';
/** NODEAGENT_CSI_TIMEOUT is not a positive Go duration. */
export const CSI_INVALID_TIMEOUT = 'CSI_INVALID_TIMEOUT';
/** A secret a CSI call needs (nodeStageSecretRef, nodePublishSecretRef, nodeExpandSecretRef) is missing or cannot be read (retried). */
export const CSI_SECRET_UNAVAILABLE = 'CSI_SECRET_UNAVAILABLE';
