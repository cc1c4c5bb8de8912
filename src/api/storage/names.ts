/**
 * The names of the storage path that the API server, its control loops and the node agent share:
 * upstream's annotations, finalizers, plugin names and limits, with the naming rule applied
 * (`pv.kubernetes.io/bind-completed` is `pv.orch.io/bind-completed`, `kubernetes.io/csi` is
 * `orch.io/csi`, `storage.k8s.io` is `storage.orch.io`).
 */

/** On a claim: the controller has completed its first binding (upstream's AnnBindCompleted). */
export const ANN_BIND_COMPLETED = 'pv.orch.io/bind-completed';
/** On a volume and a claim: the binding was made by a controller, not pre-bound by a user. */
export const ANN_BOUND_BY_CONTROLLER = 'pv.orch.io/bound-by-controller';
/** On a claim: the node the scheduler chose for its first consumer (provisioning waits for it). */
export const ANN_SELECTED_NODE = 'volume.orch.io/selected-node';
/** On a volume: the provisioner (or plugin) that made it. */
export const ANN_DYNAMICALLY_PROVISIONED = 'pv.orch.io/provisioned-by';
/** On a claim: the provisioner asked to make its volume (and its older beta spelling, also set). */
export const ANN_STORAGE_PROVISIONER = 'volume.orch.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.orch.io/storage-provisioner';
/** The class of a claim or volume before spec.storageClassName existed; still read first. */
export const ANN_BETA_STORAGE_CLASS = 'volume.beta.orch.io/storage-class';
/** On a StorageClass: "true" makes it the default class of new claims (and its beta spelling). */
export const ANN_DEFAULT_STORAGE_CLASS = 'storageclass.orch.io/is-default-class';
export const ANN_BETA_DEFAULT_STORAGE_CLASS = 'storageclass.beta.orch.io/is-default-class';
/** On a Node: its node agent leaves attach and detach to the attach/detach controller. */
export const ANN_CONTROLLER_MANAGED_ATTACH_DETACH = 'volumes.orch.io/controller-managed-attach-detach';

/** Finalizers of StorageObjectInUseProtection: a claim in use by a pod, a volume bound to a claim. */
export const PVC_PROTECTION_FINALIZER = 'orch.io/pvc-protection';
export const PV_PROTECTION_FINALIZER = 'orch.io/pv-protection';

/** The provisioner of classes whose volumes are made by hand (local volumes): nothing provisions. */
export const NO_PROVISIONER = 'orch.io/no-provisioner';
/** The prefix of in-tree plugin names; provisioners outside it are external (a CSI provisioner). */
export const IN_TREE_PLUGIN_PREFIX = 'orch.io/';
/** The CSI volume plugin (upstream kubernetes.io/csi). */
export const CSI_PLUGIN_NAME = 'orch.io/csi';

export const ACCESS_MODES = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'] as const;
export const RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'] as const;
export const VOLUME_MODES = ['Block', 'Filesystem'] as const;
export const BINDING_MODES = ['Immediate', 'WaitForFirstConsumer'] as const;
export const VOLUME_LIFECYCLE_MODES = ['Persistent', 'Ephemeral'] as const;
export const FS_GROUP_POLICIES = ['File', 'None', 'ReadWriteOnceWithFSType'] as const;

/** The longest CSI driver name (a DNS subdomain of at most 63 characters). */
export const CSI_DRIVER_NAME_MAX_LENGTH = 63;
/** The longest CSINode driver nodeID (upstream's csiNodeIDMaxLength of v1.28). */
export const CSI_NODE_ID_MAX_LENGTH = 192;
