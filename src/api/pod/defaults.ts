/**
 * The defaults that upstream's core/v1 defaulting (SetObjectDefaults_Pod) gives a pod, as
 * users see them after a create: pod-level policies, per-container pull policy and
 * termination message, port protocols, probe timings, HTTP probe path and scheme, the
 * downward API's field version, requests copied from limits, and volume sources' defaults.
 * The status is left alone.
 */
import type {
  Container, EnvVar, HTTPGetAction, LifecycleHandler, ObjectFieldSelector, Pod, PodSpec, Probe, Volume,
} from 'kubernetes-types/core/v1.js';

export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';
export const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log';
/** 0644, the mode of files of secret, configMap, downwardAPI and projected volumes. */
export const DEFAULT_VOLUME_FILE_MODE = 0o644;

/** `value` unless it is undefined or '' (upstream treats the empty string as unset). */
function or<T>(value: T | undefined | '', fallback: T): T {
  return value === undefined || value === '' ? fallback : value;
}

/** A number field where 0 means unset (probe timings). */
function orPositive(value: number | undefined, fallback: number): number {
  return value === undefined || value === 0 ? fallback : value;
}

/**
 * The tag and digest of an image reference: `registry:5000/repo/name:tag@sha256:…`. The tag
 * is what follows the last ':' after the last '/', before any '@'.
 */
export function imageTagAndDigest(image: string): { readonly tag: string; readonly digest: string } {
  const at = image.indexOf('@');
  const name = at < 0 ? image : image.slice(0, at);
  const digest = at < 0 ? '' : image.slice(at + 1);
  const tail = name.slice(name.lastIndexOf('/') + 1);
  const colon = tail.lastIndexOf(':');
  return { tag: colon < 0 ? '' : tail.slice(colon + 1), digest };
}

/** Always for `:latest` or an untagged image without a digest, else IfNotPresent (upstream's rule). */
export function defaultImagePullPolicy(image: string): 'Always' | 'IfNotPresent' {
  if (image.trim() === '') return 'IfNotPresent';
  const { tag, digest } = imageTagAndDigest(image);
  return tag === 'latest' || (tag === '' && digest === '') ? 'Always' : 'IfNotPresent';
}

function defaultFieldRef(ref: ObjectFieldSelector | undefined): void {
  if (ref !== undefined) ref.apiVersion = or(ref.apiVersion, 'v1');
}

function defaultHTTPGet(action: HTTPGetAction | undefined): void {
  if (action === undefined) return;
  action.path = or(action.path, '/');
  action.scheme = or(action.scheme, 'HTTP');
}

function defaultProbe(probe: Probe | undefined): void {
  if (probe === undefined) return;
  probe.timeoutSeconds = orPositive(probe.timeoutSeconds, 1);
  probe.periodSeconds = orPositive(probe.periodSeconds, 10);
  probe.successThreshold = orPositive(probe.successThreshold, 1);
  probe.failureThreshold = orPositive(probe.failureThreshold, 3);
  defaultHTTPGet(probe.httpGet);
  if (probe.grpc !== undefined) probe.grpc.service ??= '';
}

function defaultHandler(handler: LifecycleHandler | undefined): void {
  defaultHTTPGet(handler?.httpGet);
}

function defaultEnv(env: EnvVar): void {
  defaultFieldRef(env.valueFrom?.fieldRef);
}

function defaultContainer(container: Container, hostNetwork: boolean, requestsFromLimits: boolean): void {
  container.imagePullPolicy = or(container.imagePullPolicy, defaultImagePullPolicy(container.image ?? ''));
  container.terminationMessagePath = or(container.terminationMessagePath, DEFAULT_TERMINATION_MESSAGE_PATH);
  container.terminationMessagePolicy = or(container.terminationMessagePolicy, 'File');
  for (const port of container.ports ?? []) {
    port.protocol = or(port.protocol, 'TCP');
    if (hostNetwork && (port.hostPort ?? 0) === 0) port.hostPort = port.containerPort;
  }
  for (const env of container.env ?? []) defaultEnv(env);
  defaultProbe(container.livenessProbe);
  defaultProbe(container.readinessProbe);
  defaultProbe(container.startupProbe);
  defaultHandler(container.lifecycle?.postStart);
  defaultHandler(container.lifecycle?.preStop);
  const resources = container.resources;
  if (requestsFromLimits && resources?.limits !== undefined && Object.keys(resources.limits).length > 0) {
    const requests = (resources.requests ??= {});
    for (const [name, value] of Object.entries(resources.limits)) {
      if (!(name in requests)) requests[name] = value;
    }
  }
}

/** The volume source fields of core/v1 (a volume has exactly one). */
export const VOLUME_SOURCES = [
  'awsElasticBlockStore', 'azureDisk', 'azureFile', 'cephfs', 'cinder', 'configMap', 'csi', 'downwardAPI', 'emptyDir',
  'ephemeral', 'fc', 'flexVolume', 'flocker', 'gcePersistentDisk', 'gitRepo', 'glusterfs', 'hostPath', 'iscsi', 'nfs',
  'persistentVolumeClaim', 'photonPersistentDisk', 'portworxVolume', 'projected', 'quobyte', 'rbd', 'scaleIO', 'secret',
  'storageos', 'vsphereVolume',
] as const satisfies readonly (keyof Volume)[];

function defaultVolume(volume: Volume): void {
  if (VOLUME_SOURCES.every((source) => volume[source] === undefined)) volume.emptyDir = {};
  if (volume.hostPath !== undefined) volume.hostPath.type ??= '';
  if (volume.secret !== undefined) volume.secret.defaultMode ??= DEFAULT_VOLUME_FILE_MODE;
  if (volume.configMap !== undefined) volume.configMap.defaultMode ??= DEFAULT_VOLUME_FILE_MODE;
  if (volume.downwardAPI !== undefined) {
    volume.downwardAPI.defaultMode ??= DEFAULT_VOLUME_FILE_MODE;
    for (const item of volume.downwardAPI.items ?? []) defaultFieldRef(item.fieldRef);
  }
  if (volume.projected !== undefined) {
    volume.projected.defaultMode ??= DEFAULT_VOLUME_FILE_MODE;
    for (const source of volume.projected.sources ?? []) {
      for (const item of source.downwardAPI?.items ?? []) defaultFieldRef(item.fieldRef);
      if (source.serviceAccountToken !== undefined) source.serviceAccountToken.expirationSeconds ??= 3600;
    }
  }
  if (volume.iscsi !== undefined) volume.iscsi.iscsiInterface = or(volume.iscsi.iscsiInterface, 'default');
  if (volume.rbd !== undefined) {
    volume.rbd.pool = or(volume.rbd.pool, 'rbd');
    volume.rbd.user = or(volume.rbd.user, 'admin');
    volume.rbd.keyring = or(volume.rbd.keyring, '/etc/ceph/keyring');
  }
  if (volume.azureDisk !== undefined) {
    volume.azureDisk.cachingMode ??= 'ReadWrite';
    volume.azureDisk.fsType ??= 'ext4';
    volume.azureDisk.readOnly ??= false;
    volume.azureDisk.kind ??= 'Shared';
  }
  if (volume.scaleIO !== undefined) {
    volume.scaleIO.storageMode = or(volume.scaleIO.storageMode, 'ThinProvisioned');
    volume.scaleIO.fsType = or(volume.scaleIO.fsType, 'xfs');
  }
  const claimSpec = volume.ephemeral?.volumeClaimTemplate?.spec;
  if (claimSpec !== undefined) claimSpec.volumeMode ??= 'Filesystem';
}

function defaultSpec(spec: PodSpec): void {
  spec.dnsPolicy = or(spec.dnsPolicy, 'ClusterFirst');
  spec.restartPolicy = or(spec.restartPolicy, 'Always');
  spec.securityContext ??= {};
  spec.terminationGracePeriodSeconds ??= DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
  spec.schedulerName = or(spec.schedulerName, DEFAULT_SCHEDULER_NAME);
  spec.enableServiceLinks ??= true;
  const hostNetwork = spec.hostNetwork === true;
  for (const c of spec.containers) defaultContainer(c, hostNetwork, true);
  for (const c of spec.initContainers ?? []) defaultContainer(c, hostNetwork, true);
  // Ephemeral containers share the container defaults, but have no resources nor host ports.
  for (const c of spec.ephemeralContainers ?? []) defaultContainer(c, false, false);
  for (const v of spec.volumes ?? []) defaultVolume(v);
}

/**
 * A new pod with upstream's defaults applied; `pod` is not changed. Idempotent:
 * applyPodDefaults(applyPodDefaults(p)) deep-equals applyPodDefaults(p). A pod without a
 * spec gets one with no containers (which validation then rejects).
 */
export function applyPodDefaults(pod: Pod): Pod {
  const copy = structuredClone(pod);
  // Decoded input may lack what the type calls required.
  const spec: Partial<PodSpec> = copy.spec ?? {};
  spec.containers ??= [];
  copy.spec = spec as PodSpec;
  defaultSpec(copy.spec);
  return copy;
}
