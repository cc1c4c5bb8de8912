/**
 * Upstream's validation of a PersistentVolumeClaim (v1.28): the spec on create
 * (src/api/storage's ValidatePersistentVolumeClaimSpec), and on update the spec is immutable but
 * for what the binding sets once (volumeName, and a storageClassName that was unset, as the
 * retroactive default class does) and, on a bound claim, a larger storage request; the status's
 * quantities.
 */
import { ANN_BETA_STORAGE_CLASS, validateClaimSpec } from '../../../api/storage/index.js';
import { cloneJson, jsonEqual } from '../../patch/index.js';
import { metaOf, str, type WireObject } from '../../registry/index.js';
import type { FieldErrors } from '../../status/index.js';
import { rec } from '../common/index.js';
import { checkedQuantity, quantityLess } from './quantities.js';

export function validateClaim(pvc: WireObject, errors: FieldErrors): void {
  validateClaimSpec(errors, 'spec', rec(pvc.spec));
}

function annotation(object: WireObject, key: string): string | undefined {
  const value = rec(metaOf(object).annotations)[key];
  return typeof value === 'string' ? value : undefined;
}

export function validateClaimUpdate(pvc: WireObject, old: WireObject, errors: FieldErrors): void {
  validateClaim(pvc, errors);
  const spec = cloneJson(rec(pvc.spec));
  const oldSpec = cloneJson(rec(old.spec));
  // The binding sets volumeName once.
  if (str(oldSpec.volumeName) === '' && spec.volumeName !== undefined) oldSpec.volumeName = spec.volumeName;
  // A class may be given to a claim that had none (the retroactive default class), when it agrees with the beta annotation.
  const oldAnnotated = annotation(old, ANN_BETA_STORAGE_CLASS);
  if (oldSpec.storageClassName === undefined && spec.storageClassName !== undefined && (oldAnnotated === undefined || oldAnnotated === spec.storageClassName)) {
    oldSpec.storageClassName = spec.storageClassName;
  }
  if (annotation(pvc, ANN_BETA_STORAGE_CLASS) !== oldAnnotated) {
    errors.invalid(`metadata.annotations[${ANN_BETA_STORAGE_CLASS}]`, annotation(pvc, ANN_BETA_STORAGE_CLASS) ?? '', 'field is immutable');
  }
  const bound = rec(pvc.status).phase === 'Bound';
  const requests = rec(rec(spec.resources).requests);
  const oldRequests = rec(rec(oldSpec.resources).requests);
  if (bound && spec.resources !== undefined) {
    if (oldRequests.storage === undefined) delete requests.storage;
    else requests.storage = oldRequests.storage;
  }
  if (bound) spec.volumeAttributesClassName = oldSpec.volumeAttributesClassName;
  if (spec.volumeAttributesClassName === undefined) delete spec.volumeAttributesClassName;
  if (!jsonEqual(spec, oldSpec)) errors.forbidden('spec', 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims');
  const newSize = rec(rec(rec(pvc.spec).resources).requests).storage;
  const oldSize = rec(rec(rec(old.spec).resources).requests).storage;
  if (newSize !== undefined && oldSize !== undefined && quantityLess(newSize, oldSize)) {
    errors.forbidden('spec.resources.requests.storage', 'field can not be less than previous value');
  }
  if (!jsonEqual(rec(pvc.spec).volumeMode ?? null, rec(old.spec).volumeMode ?? null)) errors.invalid('spec.volumeMode', rec(pvc.spec).volumeMode ?? null, 'field is immutable');
  for (const [r, q] of Object.entries(rec(rec(pvc.status).capacity))) {
    const parsed = checkedQuantity(errors, `status.capacity[${r}]`, q);
    if (parsed !== undefined && parsed.mantissa < 0n) errors.invalid(`status.capacity[${r}]`, String(q), 'must be a valid resource quantity');
  }
}
