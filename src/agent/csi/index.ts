/**
 * csi: CSI drivers on the node (upstream: pkg/volume/csi, renamed: `kubernetes.io/csi` is
 * `orch.io/csi`, the pod directory `orch.io~csi`). Drivers register through the plugin watcher
 * (type CSIPlugin, versions 1.x); on registration NodeGetInfo gives the node ID, topology and
 * volume limit, written to the Node (`csi.volume.orch.io/nodeid`, topology labels) and the
 * CSINode. The mounter is the volume manager's CsiVolumePlugin, for PersistentVolumes and inline
 * (Ephemeral) volumes: checks the driver's lifecycle modes, waits for the VolumeAttachment
 * when the driver attaches, NodeStageVolume at the global mount when the driver stages,
 * NodePublishVolume into the pod's directory with vol_data.json beside it, with the PV's (or
 * inline volume's) secrets read from the API server, then the pod's fsGroup by the driver's
 * fsGroupPolicy; NodeExpandVolume when a mounted volume's PV outgrew its claim (then the claim's
 * status capacity); teardown reads vol_data.json (so it works after a restart: reconstruction),
 * unpublishes, and unstages after the last pod. One operation at a time per volume. It also
 * gives the Node's status.volumesInUse (attachable volumes wanted or still mounted).
 *
 * It owns: the CSI gRPC clients (proto/csi-v1.proto, the spec's own), the registered drivers,
 * the claims' status after a node expansion,
 * `<root-dir>/plugins/orch.io/csi/` and the `orch.io~csi` directories of pods. It must not:
 * mount anything itself (drivers mount), attach volumes (the attach/detach controller and an
 * external attacher do), or touch other volume types.
 */
export { CSI_CALL_TIMEOUT_MS, CSI_PROTO, CSI_TIMEOUT_ENV, csiTimeoutFromEnv, dialCsi, isFinalCsiError, type VolumeStats, type CsiNodeClient, type ExpandRequest, type NodeInfo, type PublishRequest, type StageRequest, type VolumeCapability } from './client.js';
export { createCsiDrivers, type CsiDrivers, type CsiDriversOptions, type NodeInfoPublisher } from './drivers.js';
export { CSI_DRIVER_INVALID, CSI_DRIVER_NOT_REGISTERED, CSI_INVALID_TIMEOUT, CSI_MOUNT_FAILED, CSI_NODE_INFO_FAILED, CSI_SECRET_UNAVAILABLE, CSI_UNMOUNT_FAILED, CSI_VOLUME_MODE_UNSUPPORTED } from './errors.js';
export { createCsiMounter, type CsiApi, type CsiMounter, type CsiMounterOptions, type CsiPodVolumeStats } from './mounter.js';
export { CSI_POD_DIR, VOL_DATA_FILE, inlineVolumeHandle, stagingPath } from './vol-data.js';
export { NODE_ID_ANNOTATION, createNodeInfoPublisher } from './node-info.js';
export { createCsiApi } from './api.js';
export { expansionSize, type CsiEventReference, type CsiEventSink } from './expand.js';
