/**
 * Objects in and out of the backends: stored as JSON without metadata.resourceVersion (the
 * backend's revision is the truth), given back with it.
 */
import { invalid, internal, StoreErrorCode } from './errors.js';
import type { KvChange, KvRecord } from './kv.js';
import type { StoredObject } from './types.js';

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON of `object` without metadata.resourceVersion; throws invalid for a non-object. */
export function encodeObject(key: string, object: StoredObject): string {
  if (!isJsonObject(object)) {
    throw invalid(StoreErrorCode.invalidObject, `the object for ${key} is not a JSON object`, key);
  }
  const metadata = object.metadata;
  if (metadata === undefined) return JSON.stringify(object);
  if (!isJsonObject(metadata)) {
    throw invalid(StoreErrorCode.invalidObject, `metadata of the object for ${key} is not a JSON object`, key);
  }
  // Without a resourceVersion (every create through the registry) the object is stored as is.
  if (!Object.hasOwn(metadata, 'resourceVersion')) return JSON.stringify(object);
  const { resourceVersion: _ignored, ...rest } = metadata;
  return JSON.stringify({ ...object, metadata: rest });
}

/** A fresh object from a stored value, with metadata.resourceVersion = `revision`. */
export function decodeValue(key: string, value: string, revision: number): StoredObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (err) {
    throw internal(`the stored value at ${key} is not JSON`, key, err);
  }
  if (!isJsonObject(parsed)) throw internal(`the stored value at ${key} is not a JSON object`, key);
  // The parsed metadata is already a fresh object: stamp it in place.
  if (isJsonObject(parsed.metadata)) parsed.metadata.resourceVersion = String(revision);
  else parsed.metadata = { resourceVersion: String(revision) };
  return parsed;
}

export function decodeRecord(record: KvRecord): StoredObject {
  return decodeValue(record.key, record.value, record.modRevision);
}

const shared = new WeakMap<KvRecord, StoredObject>();

/** Like decodeRecord, decoded once per record for every watcher that receives it. */
export function decodeShared(record: KvRecord): StoredObject {
  let object = shared.get(record);
  if (object === undefined) {
    object = decodeRecord(record);
    shared.set(record, object);
  }
  return object;
}

const previousShared = new WeakMap<KvChange, StoredObject>();

/**
 * The value before a change (a put's `previous`), decoded once per change for every watcher. Its
 * revision is not kept with the change: it reads 0.
 */
export function decodePreviousShared(change: KvChange, previous: string): StoredObject {
  let object = previousShared.get(change);
  if (object === undefined) {
    object = decodeValue(change.record.key, previous, 0);
    previousShared.set(change, object);
  }
  return object;
}

/** metadata.uid of a decoded object, '' when absent. */
export function uidOf(object: StoredObject): string {
  const metadata = object.metadata;
  if (!isJsonObject(metadata)) return '';
  return typeof metadata.uid === 'string' ? metadata.uid : '';
}
