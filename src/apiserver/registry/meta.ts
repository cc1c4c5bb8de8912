/**
 * Object metadata rules that every resource shares: what the server sets on create (uid,
 * creationTimestamp, namespace, generated names), what an update carries over, and validation
 * of names, labels, annotations, finalizers and owner references.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { formatTime } from '../../api/time.js';
import { validateDNS1123Label, validateDNS1123Subdomain, validateLabelValue, validateQualifiedName } from '../../api/labels.js';
import { badRequest, type FieldErrors } from '../status/index.js';
import type { ResourceDefinition, WireObject } from './resource.js';

export type Meta = Record<string, unknown>;

/** `object.metadata`, created empty when missing. */
export function metaOf(object: WireObject): Meta {
  const m = object.metadata;
  if (typeof m === 'object' && m !== null && !Array.isArray(m)) return m as Meta;
  const created: Meta = {};
  object.metadata = created;
  return created;
}

export const str = (value: unknown): string => (typeof value === 'string' ? value : '');

export function nameOf(object: WireObject): string {
  return str(metaOf(object).name);
}

export function namespaceOf(object: WireObject): string {
  return str(metaOf(object).namespace);
}

export function resourceVersionOf(object: WireObject): string {
  return str(metaOf(object).resourceVersion);
}

export function labelsOf(object: WireObject): Record<string, string> {
  const labels = metaOf(object).labels;
  return typeof labels === 'object' && labels !== null ? (labels as Record<string, string>) : {};
}

export function finalizersOf(object: WireObject): string[] {
  const f = metaOf(object).finalizers;
  return Array.isArray(f) ? f.filter((x): x is string => typeof x === 'string') : [];
}

const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const GENERATED_SUFFIX = 5;

/** A name from generateName: the prefix (cut to fit) and five random characters. */
export function generateName(prefix: string, maxLength = 253): string {
  let suffix = '';
  for (let i = 0; i < GENERATED_SUFFIX; i++) suffix += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)] ?? 'x';
  return `${prefix.slice(0, maxLength - GENERATED_SUFFIX)}${suffix}`;
}

/**
 * Sets what the server owns on a new object. Throws 400 when the body's namespace differs from
 * the request's, or when it carries a resourceVersion.
 */
export function prepareCreateMeta(object: WireObject, def: ResourceDefinition, namespace: string, now: Date): void {
  const meta = metaOf(object);
  if (def.namespaced) {
    const given = str(meta.namespace);
    if (given !== '' && given !== namespace) {
      throw badRequest(`the namespace of the provided object (${given}) does not match the namespace sent on the request (${namespace})`);
    }
    meta.namespace = namespace;
  } else {
    delete meta.namespace;
  }
  if (str(meta.resourceVersion) !== '') throw badRequest('resourceVersion should not be set on objects to be created');
  if (str(meta.name) === '' && str(meta.generateName) !== '') meta.name = generateName(str(meta.generateName));
  meta.uid = randomUUID();
  meta.creationTimestamp = formatTime(now.getTime());
  // managedFields stay for the field manager, which reads them and writes the creator's.
  for (const owned of ['deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink', 'resourceVersion']) Reflect.deleteProperty(meta, owned);
}

/** On update: the server-owned fields come from the stored object (managedFields: the field manager's). */
export function carryOverMeta(object: WireObject, old: WireObject): void {
  const meta = metaOf(object);
  const oldMeta = metaOf(old);
  for (const owned of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'namespace', 'generation']) {
    if (oldMeta[owned] === undefined) Reflect.deleteProperty(meta, owned);
    else meta[owned] = oldMeta[owned];
  }
  delete meta.selfLink;
}

function validateStringMap(errors: FieldErrors, field: string, value: unknown, values: boolean): void {
  if (value === undefined) return;
  let total = 0;
  for (const [k, v] of Object.entries(value as Record<string, string>)) {
    errors.invalidEach(field, k, validateQualifiedName(k));
    if (values) errors.invalidEach(`${field}.${k}`, v, validateLabelValue(v));
    total += k.length + v.length;
  }
  if (!values && total > 256 * 1024) errors.tooLong(field, 256 * 1024, 'bytes');
}

/** Validates the metadata of `object` (create: also generateName and name presence). */
export function validateMeta(object: WireObject, def: ResourceDefinition, errors: FieldErrors): void {
  const meta = metaOf(object);
  const name = str(meta.name);
  if (name === '') {
    errors.required('metadata.name', 'name or generateName is required');
  } else {
    const problems = def.nameRule === 'label' ? validateDNS1123Label(name) : validateDNS1123Subdomain(name);
    errors.invalidEach('metadata.name', name, problems);
  }
  if (def.namespaced) {
    const ns = str(meta.namespace);
    if (ns === '') errors.required('metadata.namespace');
    else errors.invalidEach('metadata.namespace', ns, validateDNS1123Label(ns));
  }
  validateStringMap(errors, 'metadata.labels', meta.labels, true);
  validateStringMap(errors, 'metadata.annotations', meta.annotations, false);
  const seen = new Set<string>();
  finalizersOf(object).forEach((f, i) => {
    errors.invalidEach(`metadata.finalizers[${i}]`, f, validateQualifiedName(f));
    if (seen.has(f)) errors.duplicate(`metadata.finalizers[${i}]`, f);
    seen.add(f);
  });
  const owners = meta.ownerReferences;
  if (Array.isArray(owners)) {
    owners.forEach((o: Record<string, unknown>, i) => {
      for (const field of ['apiVersion', 'kind', 'name', 'uid']) {
        if (str(o[field]) === '') errors.required(`metadata.ownerReferences[${i}].${field}`);
      }
    });
  }
}
