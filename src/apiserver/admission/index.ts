/**
 * admission: the mutating admission plugins of orch-apiserver that change objects on their way
 * in (upstream's admission chain, for what this server serves). Each is a decorator of a
 * ResourceDefinition: it runs before the definition's own defaults on create.
 *
 * - DefaultTolerationSeconds: pods get tolerations of `node.orch.io/not-ready` and
 *   `node.orch.io/unreachable` (NoExecute) for --default-not-ready-toleration-seconds and
 *   --default-unreachable-toleration-seconds (300 s each) unless they tolerate those taints
 *   already.
 * - ServiceAccount: pods get their service account (`default` when they name none, which must
 *   exist), its image pull secrets, and the projected API access volume (token, cluster CA,
 *   namespace) mounted in every container unless automountServiceAccountToken says no.
 * - StorageObjectInUseProtection: new PersistentVolumeClaims and PersistentVolumes get the
 *   `orch.io/pvc-protection` / `orch.io/pv-protection` finalizers.
 * - DefaultStorageClass: a new claim naming no class gets the default StorageClass.
 *
 * Must not: validate (the strategies do), know HTTP or the store (objects are read through the
 * functions given).
 */
export { withDefaultTolerationSeconds, type DefaultTolerationOptions } from './default-tolerations.js';
export {
  admitServiceAccount, apiAccessVolumeSource, withServiceAccountAdmission, API_ACCESS_TOKEN_SECONDS, API_ACCESS_VOLUME_PREFIX, API_TOKEN_MOUNT_PATH,
  DEFAULT_SERVICE_ACCOUNT, ROOT_CA_CONFIG_MAP, type ServiceAccountAdmissionOptions,
} from './service-account.js';
export { admitDefaultStorageClass, withDefaultStorageClass, withInUseProtection, type DefaultStorageClassOptions } from './storage.js';
