/**
 * ServiceAccount (upstream's admission plugin of that name), on pod creation:
 *
 * - a pod without `spec.serviceAccountName` gets `default`;
 * - the service account must exist (403 `error looking up service account <ns>/<name>`); the
 *   `default` one is looked for ten times over a second or two, as the serviceaccount
 *   controller makes it right after its namespace;
 * - unless the pod or, failing that, the service account sets automountServiceAccountToken
 *   false, every init and regular container gets a read-only mount of
 *   `/var/run/secrets/orch.io/serviceaccount` (upstream: .../kubernetes.io/serviceaccount) from a
 *   projected volume `kube-api-access-<5 random characters>`: a serviceAccountToken (`token`,
 *   3607 s), the `ca.crt` of the ConfigMap `kube-root-ca.crt` and the pod's namespace
 *   (`namespace`); a container that mounts something at that path already keeps it;
 * - a pod without imagePullSecrets gets those of its service account.
 *
 * Mirror pods are left as they are, but may not name a service account, mount secrets or
 * project tokens (403). Updates are left alone.
 */
import { randomInt } from 'node:crypto';
import type { Clock } from '../../api/clock.js';
import { CONFIG_MIRROR_ANNOTATION } from '../../api/pod/index.js';
import { metaOf, str, type ResourceDefinition, type StrategyContext, type WireObject } from '../registry/index.js';
import { rec, recs } from '../resources/common/index.js';
import { forbidden } from '../status/index.js';

export const DEFAULT_SERVICE_ACCOUNT = 'default';
/** Where the token, CA and namespace are mounted (upstream: /var/run/secrets/kubernetes.io/serviceaccount). */
export const API_TOKEN_MOUNT_PATH = '/var/run/secrets/orch.io/serviceaccount';
export const API_ACCESS_VOLUME_PREFIX = 'kube-api-access-';
/** The ConfigMap of the cluster's CA in every namespace (the root CA publisher's). */
export const ROOT_CA_CONFIG_MAP = 'kube-root-ca.crt';
/** Upstream's WarnOnlyBoundTokenExpirationSeconds: the projected token's requested validity. */
export const API_ACCESS_TOKEN_SECONDS = 3607;

/** Upstream's name generator alphabet (no vowels, no confusable digits). */
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const PODS = { group: '', resource: 'pods' };

export interface ServiceAccountAdmissionOptions {
  /** Reads a service account (undefined: it does not exist). */
  readonly serviceAccount: (namespace: string, name: string) => Promise<WireObject | undefined>;
  /** The pause between lookups of the default service account. */
  readonly clock: Pick<Clock, 'sleep'>;
  /** The suffix of the volume name (default: 5 random characters). */
  readonly suffix?: () => string;
}

function randomSuffix(): string {
  return Array.from({ length: 5 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
}

/** The projected volume source of the API access volume (upstream's TokenVolumeSource). */
export function apiAccessVolumeSource(): WireObject {
  return {
    defaultMode: 0o644,
    sources: [
      { serviceAccountToken: { path: 'token', expirationSeconds: API_ACCESS_TOKEN_SECONDS } },
      { configMap: { name: ROOT_CA_CONFIG_MAP, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
  };
}

async function lookUp(o: ServiceAccountAdmissionOptions, namespace: string, name: string): Promise<WireObject | undefined> {
  const attempts = name === DEFAULT_SERVICE_ACCOUNT ? 10 : 1;
  for (let i = 0; i < attempts; i++) {
    if (i > 0) await o.clock.sleep(100 + randomInt(100));
    const found = await o.serviceAccount(namespace, name);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Adds the volume and the mounts (upstream's mountServiceAccountToken). */
function mountToken(spec: WireObject, suffix: string): void {
  const volumes = recs(spec.volumes);
  const existing = volumes.find((v) => str(v.name).startsWith(API_ACCESS_VOLUME_PREFIX));
  const name = existing === undefined ? `${API_ACCESS_VOLUME_PREFIX}${suffix}` : str(existing.name);
  let needed = false;
  for (const list of ['initContainers', 'containers'] as const) {
    for (const c of recs(spec[list])) {
      const mounts = recs(c.volumeMounts);
      if (mounts.some((m) => m.mountPath === API_TOKEN_MOUNT_PATH)) continue;
      c.volumeMounts = [...mounts, { name, readOnly: true, mountPath: API_TOKEN_MOUNT_PATH }];
      needed = true;
    }
  }
  if (existing === undefined && needed) spec.volumes = [...volumes, { name, projected: apiAccessVolumeSource() }];
}

/** The refusal of a mirror pod that uses what only the API server's pods may. */
function checkMirrorPod(pod: WireObject, spec: WireObject): void {
  const name = str(metaOf(pod).name);
  if (str(spec.serviceAccountName) !== '' || str(spec.serviceAccount) !== '') throw forbidden(PODS, name, 'a mirror pod may not reference service accounts');
  for (const v of recs(spec.volumes)) {
    if (v.secret !== undefined) throw forbidden(PODS, name, `a mirror pod may not reference secrets (volume ${str(v.name)})`);
    if (recs(rec(v.projected).sources).some((s) => s.secret !== undefined || s.serviceAccountToken !== undefined)) {
      throw forbidden(PODS, name, `a mirror pod may not reference secrets or service account tokens (volume ${str(v.name)})`);
    }
  }
}

/** Applies the plugin to a pod being created (in place). Throws 403 StatusErrors. */
export async function admitServiceAccount(o: ServiceAccountAdmissionOptions, pod: WireObject, namespace: string): Promise<void> {
  const spec = rec(pod.spec);
  pod.spec = spec;
  if (rec(metaOf(pod).annotations)[CONFIG_MIRROR_ANNOTATION] !== undefined) {
    checkMirrorPod(pod, spec);
    return;
  }
  const accountName = str(spec.serviceAccountName) || str(spec.serviceAccount) || DEFAULT_SERVICE_ACCOUNT;
  spec.serviceAccountName = accountName;
  const account = await lookUp(o, namespace, accountName);
  if (account === undefined) {
    throw forbidden(PODS, str(metaOf(pod).name), `error looking up service account ${namespace}/${accountName}: serviceaccount "${accountName}" not found`);
  }
  const automount = typeof spec.automountServiceAccountToken === 'boolean' ? spec.automountServiceAccountToken
    : typeof account.automountServiceAccountToken === 'boolean' ? account.automountServiceAccountToken : true;
  if (automount) mountToken(spec, (o.suffix ?? randomSuffix)());
  if (recs(spec.imagePullSecrets).length === 0 && recs(account.imagePullSecrets).length > 0) {
    spec.imagePullSecrets = recs(account.imagePullSecrets).map((s) => ({ name: str(s.name) }));
  }
}

/** The pods definition with the ServiceAccount admission on create. */
export function withServiceAccountAdmission(def: ResourceDefinition, options: ServiceAccountAdmissionOptions): ResourceDefinition {
  const base = def.strategy;
  return {
    ...def,
    strategy: {
      ...base,
      admit: async (object: WireObject, ctx: StrategyContext, namespace: string) => {
        await base.admit?.(object, ctx, namespace);
        await admitServiceAccount(options, object, namespace);
      },
    },
  };
}
