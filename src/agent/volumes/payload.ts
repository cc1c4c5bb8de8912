/**
 * The payloads (path → bytes and mode) of configMap and secret volumes and of their projected
 * sources, as upstream's MakePayload: every key of the object when there are no items, else
 * only the items (key → path, with their own mode); a missing object or key is an error unless
 * the volume (or source) is optional, when the object counts as empty and the key is skipped.
 */
import { Buffer } from 'node:buffer';
import type { ConfigMap, KeyToPath, Secret } from 'kubernetes-types/core/v1.js';

import { OrchError } from '../../api/errors.js';
import type { FileProjection } from './atomic-writer.js';
import { VOLUME_INVALID, VOLUME_KEY_NOT_FOUND, VOLUME_OBJECT_NOT_FOUND, VOLUME_OBJECT_UNAVAILABLE, type VolumeObjectSource } from './types.js';
import { quoteValue } from '../../api/quote.js';

/** The mode of files of configMap, secret, projected and downwardAPI volumes when nothing says otherwise (upstream: 0644 for all four). */
export const DEFAULT_FILE_MODE = 0o644;

export type ObjectKind = 'configMap' | 'secret';

/** What a configMap or secret volume (or projected source) asks for. */
export interface KeysSource {
  readonly kind: ObjectKind;
  readonly name: string;
  readonly items?: readonly KeyToPath[];
  readonly optional?: boolean;
}

/**
 * The mode a volume field gives, checked to be a permission mode (0 to 0777, as upstream's
 * validation), or `fallback` when unset. Throws `VOLUME_INVALID`.
 */
export function fileMode(mode: number | undefined, fallback: number, subject: string): number {
  if (mode === undefined) return fallback;
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) {
    throw new OrchError(VOLUME_INVALID, 'invalid', `${subject}: mode ${mode} must be between 0 and 0777 (octal) / 511 (decimal)`, { subject });
  }
  return mode;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function decodeBase64(text: string, what: string): Buffer {
  if (!BASE64.test(text)) throw new OrchError(VOLUME_INVALID, 'invalid', `${what} is not valid base64`, { subject: what });
  return Buffer.from(text, 'base64');
}

/** The bytes of each key of a configMap: `data` as UTF-8 text, `binaryData` decoded from base64. */
export function configMapKeys(cm: ConfigMap): Map<string, Buffer> {
  const name = cm.metadata?.name ?? '';
  const keys = new Map<string, Buffer>();
  for (const [key, value] of Object.entries(cm.data ?? {})) keys.set(key, Buffer.from(value, 'utf8'));
  for (const [key, value] of Object.entries(cm.binaryData ?? {})) {
    if (keys.has(key)) {
      throw new OrchError(VOLUME_INVALID, 'invalid', `configMap "${name}": key ${quoteValue(key)} is in both data and binaryData`, { subject: `configMap ${name}` });
    }
    keys.set(key, decodeBase64(value, `configMap "${name}" binaryData[${quoteValue(key)}]`));
  }
  return keys;
}

/** The bytes of each key of a secret (`data` is base64; a `stringData` the API server did not merge is taken as text, its keys winning). */
export function secretKeys(secret: Secret): Map<string, Buffer> {
  const name = secret.metadata?.name ?? '';
  const keys = new Map<string, Buffer>();
  for (const [key, value] of Object.entries(secret.data ?? {})) keys.set(key, decodeBase64(value, `secret "${name}" data[${quoteValue(key)}]`));
  for (const [key, value] of Object.entries(secret.stringData ?? {})) keys.set(key, Buffer.from(value, 'utf8'));
  return keys;
}

/**
 * Reads the object a source names from `objects`: its keys, or undefined when it does not
 * exist. Throws `VOLUME_OBJECT_UNAVAILABLE` when the read fails.
 */
export async function fetchKeys(objects: VolumeObjectSource, namespace: string, source: KeysSource, volumeName: string): Promise<Map<string, Buffer> | undefined> {
  let found: ConfigMap | Secret | undefined;
  try {
    found = source.kind === 'configMap' ? await objects.configMap(namespace, source.name) : await objects.secret(namespace, source.name);
  } catch (err) {
    throw new OrchError(
      VOLUME_OBJECT_UNAVAILABLE,
      'unavailable',
      `volume "${volumeName}": cannot read ${source.kind} ${namespace}/${source.name}: ${err instanceof Error ? err.message : String(err)}`,
      { subject: `${source.kind} ${namespace}/${source.name}`, cause: err },
    );
  }
  if (found === undefined) return undefined;
  return source.kind === 'configMap' ? configMapKeys(found as ConfigMap) : secretKeys(found as Secret);
}

/**
 * The files of one configMap or secret source. `keys` undefined means the object does not
 * exist. `subject` is the source's field (e.g. `spec.volumes[2].configMap`). Throws
 * `VOLUME_OBJECT_NOT_FOUND`, `VOLUME_KEY_NOT_FOUND` or `VOLUME_INVALID` (a bad item mode).
 */
export function keysPayload(
  source: KeysSource,
  keys: ReadonlyMap<string, Buffer> | undefined,
  defaultMode: number,
  volumeName: string,
  subject: string,
): Map<string, FileProjection> {
  const payload = new Map<string, FileProjection>();
  const optional = source.optional === true;
  if (keys === undefined) {
    if (optional) return payload;
    throw new OrchError(VOLUME_OBJECT_NOT_FOUND, 'not-found', `volume "${volumeName}": ${source.kind} "${source.name}" not found`, {
      subject: `${source.kind} ${source.name}`,
    });
  }
  const items = source.items ?? [];
  if (items.length === 0) {
    for (const [key, data] of keys) payload.set(key, { data, mode: defaultMode });
    return payload;
  }
  items.forEach((item, i) => {
    const data = keys.get(item.key);
    if (data === undefined) {
      if (optional) return;
      throw new OrchError(
        VOLUME_KEY_NOT_FOUND,
        'not-found',
        `volume "${volumeName}": ${source.kind} "${source.name}" has no key ${quoteValue(item.key)} (named by ${subject}.items[${i}])`,
        { subject: `${subject}.items[${i}].key` },
      );
    }
    payload.set(item.path, { data, mode: fileMode(item.mode, defaultMode, `${subject}.items[${i}].mode`) });
  });
  return payload;
}
