/**
 * The secrets a CSI driver receives (upstream: pkg/volume/csi's getCredentialsFromSecret): a
 * PersistentVolume's `nodeStageSecretRef`, `nodePublishSecretRef` and `nodeExpandSecretRef`, or
 * an inline volume's `nodePublishSecretRef` (in the pod's namespace), read from the API server
 * when the call needs them and passed as the request's `secrets` (every key, its value decoded).
 * A secret that is missing or cannot be read fails the call before the driver is asked, naming
 * the volume, the reference and the secret; the pod sync retries with its back-off.
 */
import type { Secret } from 'kubernetes-types/core/v1.js';

import { OrchError, messageOf } from '../../api/errors.js';
import { CSI_SECRET_UNAVAILABLE } from './errors.js';

/** A secret reference with its namespace resolved. */
export interface CsiSecretRef {
  /** The field it came from, for messages: `nodeStageSecretRef`, `nodePublishSecretRef`, `nodeExpandSecretRef`. */
  readonly field: string;
  readonly namespace: string;
  readonly name: string;
}

/** A reference as the objects hold it: undefined (or without a name) when the volume needs no secret. */
export function secretRefOf(field: string, ref: { readonly name?: string; readonly namespace?: string } | undefined, defaultNamespace: string): CsiSecretRef | undefined {
  if (ref?.name === undefined || ref.name === '') return undefined;
  return { field, namespace: ref.namespace === undefined || ref.namespace === '' ? defaultNamespace : ref.namespace, name: ref.name };
}

/** The secret's data as the CSI request's `secrets`; {} without a reference. Throws CSI_SECRET_UNAVAILABLE naming the volume and the secret. */
export async function csiSecrets(
  read: (namespace: string, name: string) => Promise<Secret | undefined>, volumeName: string, ref: CsiSecretRef | undefined,
): Promise<Record<string, string>> {
  if (ref === undefined) return {};
  const fail = (why: string, cause?: unknown): OrchError =>
    new OrchError(CSI_SECRET_UNAVAILABLE, 'unavailable', `volume "${volumeName}": fetching ${ref.field} ${ref.namespace}/${ref.name} failed: ${why}`, {
      subject: volumeName, ...(cause === undefined ? {} : { cause }),
    });
  let secret: Secret | undefined;
  try {
    secret = await read(ref.namespace, ref.name);
  } catch (err) {
    throw fail(messageOf(err), err);
  }
  if (secret === undefined) throw fail(`secret "${ref.name}" not found in namespace "${ref.namespace}"`);
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(secret.data ?? {})) out[key] = Buffer.from(value, 'base64').toString('utf8');
  return out;
}
