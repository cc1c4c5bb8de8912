/**
 * Upstream's validation of the storage fields both binaries read, reported into a FieldProblems
 * sink: a claim's spec (ValidatePersistentVolumeClaimSpec), the claim template of a generic
 * ephemeral volume, CSI driver names and access modes. The API server's resources add the rest
 * (PersistentVolume specs, StorageClasses, CSI objects).
 */
import type { PersistentVolumeClaimSpec, PersistentVolumeClaimTemplate } from 'kubernetes-types/core/v1.js';
import { maybe, type FieldProblems } from '../field-problems.js';
import { validateLabelSelector } from '../label-selector.js';
import { validateDNS1123Label, validateDNS1123Subdomain, validateLabelValue, validateQualifiedName } from '../labels.js';
import { compareQuantities, formatQuantity, parseQuantity } from '../quantity.js';
import { ACCESS_MODES, CSI_DRIVER_NAME_MAX_LENGTH, VOLUME_MODES } from './names.js';

/** Upstream's ValidateCSIDriverName: required, at most 63 characters, a DNS subdomain when lowercased. */
export function validateCsiDriverName(p: FieldProblems, path: string, name: string | undefined): void {
  const value = name ?? '';
  if (value === '') {
    p.required(path);
    return;
  }
  if (value.length > CSI_DRIVER_NAME_MAX_LENGTH) p.invalid(path, value, `must be no more than ${CSI_DRIVER_NAME_MAX_LENGTH} characters`);
  for (const m of validateDNS1123Subdomain(value.toLowerCase())) p.invalid(path, value, m);
}

/** Access modes: at least one (when `required`), each known, ReadWriteOncePod alone. */
export function validateAccessModes(p: FieldProblems, path: string, modes: readonly string[] | undefined, required: string | undefined): void {
  const list = modes ?? [];
  if (list.length === 0 && required !== undefined) p.required(path, required);
  let rwop = false;
  let other = false;
  for (const mode of list) {
    if (!(ACCESS_MODES as readonly string[]).includes(mode)) p.notSupported(path, mode, ACCESS_MODES);
    else if (mode === 'ReadWriteOncePod') rwop = true;
    else other = true;
  }
  if (rwop && other) p.forbidden(path, 'may not use ReadWriteOncePod with other access modes');
}

/** A class name (storage class, volume attributes class): a DNS subdomain. */
export function validateClassName(p: FieldProblems, path: string, name: string): void {
  for (const m of validateDNS1123Subdomain(name)) p.invalid(path, name, m);
}

function validateDataSource(p: FieldProblems, path: string, ref: { apiGroup?: string; kind?: string; name?: string; namespace?: string }): void {
  if ((ref.name ?? '') === '') p.required(`${path}.name`);
  if ((ref.kind ?? '') === '') p.required(`${path}.kind`);
  const group = ref.apiGroup ?? '';
  if (group === '' && ref.kind !== 'PersistentVolumeClaim') p.invalid(path, ref.kind ?? '', "must be 'PersistentVolumeClaim' when referencing the default apiGroup");
  if (group !== '') for (const m of validateDNS1123Subdomain(group)) p.invalid(`${path}.apiGroup`, group, m);
  const namespace = ref.namespace ?? '';
  if (namespace !== '') for (const m of validateDNS1123Label(namespace)) p.invalid(`${path}.namespace`, namespace, m);
}

/** Upstream's ValidatePersistentVolumeClaimSpec (`path` is `spec` or a template's `....spec`). */
export function validateClaimSpec(p: FieldProblems, path: string, spec: PersistentVolumeClaimSpec): void {
  validateAccessModes(p, `${path}.accessModes`, spec.accessModes, 'at least 1 access mode is required');
  if (spec.selector !== undefined) validateLabelSelector(p, `${path}.selector`, spec.selector);
  const storagePath = `${path}.resources[storage]`;
  const storage = spec.resources?.requests?.storage as string | number | undefined;
  if (storage === undefined) {
    p.required(storagePath);
  } else {
    try {
      const q = parseQuantity(String(storage));
      if (compareQuantities(q, parseQuantity('0')) <= 0) p.invalid(storagePath, formatQuantity(q), 'must be greater than zero');
    } catch (err) {
      p.invalid(storagePath, String(storage), err instanceof Error ? err.message : String(err));
    }
  }
  if (spec.storageClassName !== undefined && spec.storageClassName !== '') validateClassName(p, `${path}.storageClassName`, spec.storageClassName);
  if (spec.volumeMode !== undefined && !(VOLUME_MODES as readonly string[]).includes(spec.volumeMode)) p.notSupported(`${path}.volumeMode`, spec.volumeMode, VOLUME_MODES);
  if (spec.dataSource !== undefined) validateDataSource(p, `${path}.dataSource`, spec.dataSource);
  if (spec.dataSourceRef !== undefined) validateDataSource(p, `${path}.dataSourceRef`, spec.dataSourceRef);
  const source = spec.dataSource;
  const ref = spec.dataSourceRef;
  if ((ref?.namespace ?? '') !== '') {
    if (source !== undefined) p.invalid(path, `${path}.dataSource`, 'may not be specified when dataSourceRef.namespace is specified');
  } else if (source !== undefined && ref !== undefined
    && ((source.apiGroup ?? '') !== (ref.apiGroup ?? '') || source.kind !== ref.kind || source.name !== ref.name)) {
    p.invalid(path, `${path}.dataSource`, 'must match dataSourceRef');
  }
}

const TEMPLATE_METADATA_FIELDS = new Set(['labels', 'annotations']);

/** Upstream's ValidatePersistentVolumeClaimTemplate: metadata holds only labels and annotations; the spec is a claim's. */
export function validateClaimTemplate(p: FieldProblems, path: string, template: PersistentVolumeClaimTemplate): void {
  const meta = (template.metadata ?? {}) as Record<string, unknown>;
  for (const field of Object.keys(meta)) if (!TEMPLATE_METADATA_FIELDS.has(field)) p.forbidden(`${path}.metadata.${field}`, 'cannot be set');
  for (const [k, v] of Object.entries(template.metadata?.labels ?? {})) {
    for (const m of validateQualifiedName(k)) p.invalid(`${path}.metadata.labels`, k, m);
    for (const m of validateLabelValue(v)) p.invalid(`${path}.metadata.labels`, v, m);
  }
  for (const k of Object.keys(template.metadata?.annotations ?? {})) {
    for (const m of validateQualifiedName(k.toLowerCase())) p.invalid(`${path}.metadata.annotations`, k, m);
  }
  validateClaimSpec(p, `${path}.spec`, maybe(template.spec) ?? {});
}
