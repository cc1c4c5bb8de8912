/**
 * Client-side apply's annotation, kubectl.kubernetes.io/last-applied-configuration, meeting
 * server-side apply as upstream does for the manager `kubectl`: an apply whose conflicts are all
 * on fields the annotation holds with the live value (so kubectl applied them client-side
 * before) takes them without --force-conflicts, and an apply to an object that has the
 * annotation rewrites it to the applied configuration, so that a later client-side apply
 * computes its patch from what was applied last.
 */
import { decodeStrict, type ObjectSchema } from '../schema/index.js';
import { compare } from './compare.js';
import type { FieldSet } from './set.js';
import { isMap, toFieldSet, type JsonMap } from './typed.js';

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** The manager whose applies upgrade client-side apply (kubectl's default for --server-side). */
export const KUBECTL_APPLY_MANAGER = 'kubectl';

/** Upstream's limit on the total size of an object's annotations. */
const ANNOTATIONS_MAX_BYTES = 256 * 1024;

function annotationsOf(object: JsonMap): Record<string, unknown> | undefined {
  const meta = object.metadata;
  if (!isMap(meta)) return undefined;
  const annotations = meta.annotations;
  return isMap(annotations) ? annotations : undefined;
}

export function lastAppliedOf(object: JsonMap): string | undefined {
  const value = annotationsOf(object)?.[LAST_APPLIED_ANNOTATION];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The fields of the live object that client-side apply set to their present values: those of the
 * annotation that live still has unchanged. Undefined when there is no usable annotation.
 */
export function fieldsFromLastApplied(schema: ObjectSchema, apiVersion: string, live: JsonMap): FieldSet | undefined {
  const text = lastAppliedOf(live);
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: kubectl did not write it, and it grants nothing.
    return undefined;
  }
  if (!isMap(parsed) || parsed.apiVersion !== apiVersion) return undefined;
  const decoded = decodeStrict(schema, parsed);
  if (decoded.typeErrors.length > 0 || decoded.unknown.length > 0) return undefined;
  const last = decoded.value;
  const diff = compare(schema, last, live);
  return toFieldSet(schema, last).difference(diff.modified).difference(diff.added).difference(diff.removed);
}

/** JSON with the keys of every object sorted, as Go writes a map. */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (isMap(value)) {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${sortedJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Sets the annotation of `object` to `applied` (the configuration as the client sent it) without
 * the annotation itself; drops it instead when the annotations would grow past upstream's limit.
 */
export function recordLastApplied(object: JsonMap, applied: JsonMap): void {
  const copy: JsonMap = { ...applied };
  const meta = isMap(applied.metadata) ? { ...applied.metadata } : undefined;
  if (meta !== undefined) {
    if (isMap(meta.annotations)) {
      const annotations = { ...meta.annotations };
      Reflect.deleteProperty(annotations, LAST_APPLIED_ANNOTATION);
      meta.annotations = annotations;
    }
    copy.metadata = meta;
  }
  const objectMeta = isMap(object.metadata) ? object.metadata : {};
  object.metadata = objectMeta;
  const annotations = isMap(objectMeta.annotations) ? { ...objectMeta.annotations } : {};
  annotations[LAST_APPLIED_ANNOTATION] = sortedJson(copy);
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) size += k.length + (typeof v === 'string' ? v.length : 0);
  if (size > ANNOTATIONS_MAX_BYTES) Reflect.deleteProperty(annotations, LAST_APPLIED_ANNOTATION);
  if (Object.keys(annotations).length === 0) delete objectMeta.annotations;
  else objectMeta.annotations = annotations;
}
