/**
 * Upstream's validation of a PersistentVolume (ValidatePersistentVolumeSpec and
 * ValidatePersistentVolumeUpdate, v1.28): access modes, capacity (storage only, positive), reclaim
 * policy, node affinity, exactly one volume source with the rules of the sources this system
 * mounts (hostPath, local with its required node affinity, csi, flexVolume, nfs), class name and
 * volume mode; on update the source, volume mode and a set node affinity are immutable.
 */
import type { NodeSelector } from 'kubernetes-types/core/v1.js';
import { validateNodeSelector } from '../../../api/node-selector.js';
import {
  RECLAIM_POLICIES, VOLUME_MODES, validateAccessModes, validateClassName, validateCsiDriverName,
} from '../../../api/storage/index.js';
import { HOST_PATH_TYPES } from '../../../api/pod/index.js';
import { validateDNS1123Label, validateDNS1123Subdomain } from '../../../api/labels.js';
import { jsonEqual } from '../../patch/index.js';
import { str, type WireObject } from '../../registry/index.js';
import type { FieldErrors } from '../../status/index.js';
import { rec } from '../common/index.js';
import { checkPositive } from './quantities.js';
import { PV_SOURCES } from './schema.js';

function noBacksteps(errors: FieldErrors, field: string, path: string): void {
  if (path.split('/').includes('..')) errors.invalid(field, path, "must not contain '..'");
}

function secretRef(errors: FieldErrors, field: string, ref: unknown): void {
  if (ref === undefined) return;
  const r = rec(ref);
  const name = str(r.name);
  if (name === '') errors.required(`${field}.name`);
  else errors.invalidEach(`${field}.name`, name, validateDNS1123Subdomain(name));
  const namespace = str(r.namespace);
  if (namespace === '') errors.required(`${field}.namespace`);
  else errors.invalidEach(`${field}.namespace`, namespace, validateDNS1123Label(namespace));
}

function validateSource(errors: FieldErrors, spec: WireObject, source: string): void {
  const s = rec(spec[source]);
  const at = `spec.${source}`;
  switch (source) {
    case 'hostPath': {
      const path = str(s.path);
      if (path === '') errors.required(`${at}.path`);
      else noBacksteps(errors, `${at}.path`, path);
      if (s.type !== undefined && !(HOST_PATH_TYPES as readonly string[]).includes(str(s.type))) errors.notSupported(`${at}.type`, s.type, HOST_PATH_TYPES);
      break;
    }
    case 'local': {
      const path = str(s.path);
      if (path === '') errors.required(`${at}.path`);
      else noBacksteps(errors, `${at}.path`, path);
      break;
    }
    case 'csi':
      validateCsiDriverName(errors, `${at}.driver`, str(s.driver));
      if (str(s.volumeHandle) === '') errors.required(`${at}.volumeHandle`);
      for (const ref of ['controllerPublishSecretRef', 'controllerExpandSecretRef', 'nodePublishSecretRef', 'nodeExpandSecretRef', 'nodeStageSecretRef']) {
        secretRef(errors, `${at}.${ref}`, s[ref]);
      }
      break;
    case 'flexVolume':
      if (str(s.driver) === '') errors.required(`${at}.driver`);
      for (const key of Object.keys(rec(s.options))) {
        const slash = key.indexOf('/');
        if (`.${(slash < 0 ? key : key.slice(0, slash)).toLowerCase()}`.endsWith('.orch.io')) errors.invalid(`${at}.options[${key}]`, key, 'orch.io namespaces are reserved');
      }
      break;
    case 'nfs':
      if (str(s.server) === '') errors.required(`${at}.server`);
      if (str(s.path) === '') errors.required(`${at}.path`);
      else if (!str(s.path).startsWith('/')) errors.invalid(`${at}.path`, s.path, 'must be an absolute path');
      break;
    default:
      // The in-tree sources of clouds and legacy systems are stored as given: their plugins are not in this system.
      break;
  }
}

export function validatePersistentVolume(pv: WireObject, errors: FieldErrors): void {
  const spec = rec(pv.spec);
  validateAccessModes(errors, 'spec.accessModes', spec.accessModes as string[] | undefined, '');
  const capacity = rec(spec.capacity);
  const resources = Object.keys(capacity);
  if (resources.length === 0) errors.required('spec.capacity');
  if (!resources.includes('storage') || resources.length > 1) errors.notSupported('spec.capacity', capacity, ['storage']);
  for (const r of resources) checkPositive(errors, `spec.capacity[${r}]`, capacity[r]);
  const policy = spec.persistentVolumeReclaimPolicy;
  if (policy !== undefined && policy !== '' && !(RECLAIM_POLICIES as readonly string[]).includes(str(policy))) {
    errors.notSupported('spec.persistentVolumeReclaimPolicy', policy, RECLAIM_POLICIES);
  }
  let affinity = false;
  if (spec.nodeAffinity !== undefined) {
    affinity = true;
    const required = rec(spec.nodeAffinity).required;
    if (required === undefined) errors.required('spec.nodeAffinity.required', 'must specify required node constraints');
    else validateNodeSelector(errors, 'spec.nodeAffinity.required', required as NodeSelector);
  }
  const sources = PV_SOURCES.filter((s) => spec[s] !== undefined);
  if (sources.length === 0) errors.required('spec', 'must specify a volume type');
  sources.forEach((source, i) => {
    if (i > 0) {
      errors.forbidden(`spec.${source}`, 'may not specify more than 1 volume type');
      return;
    }
    validateSource(errors, spec, source);
    if (source === 'local' && !affinity) errors.required('spec.nodeAffinity', 'Local volume requires node affinity');
  });
  const hostPath = str(rec(spec.hostPath).path);
  if (spec.hostPath !== undefined && hostPath.replace(/\/+$/, '') === '' && hostPath !== '' && policy === 'Recycle') {
    errors.forbidden('spec.persistentVolumeReclaimPolicy', "may not be 'recycle' for a hostPath mount of '/'");
  }
  const className = str(spec.storageClassName);
  if (className !== '') validateClassName(errors, 'spec.storageClassName', className);
  if (spec.volumeMode !== undefined && !(VOLUME_MODES as readonly string[]).includes(str(spec.volumeMode))) errors.notSupported('spec.volumeMode', spec.volumeMode, VOLUME_MODES);
}

/** The spec's source fields only (what may never change). */
function sourceOf(spec: WireObject): WireObject {
  return Object.fromEntries(PV_SOURCES.filter((s) => spec[s] !== undefined).map((s) => [s, spec[s]]));
}

export function validatePersistentVolumeUpdate(pv: WireObject, old: WireObject, errors: FieldErrors): void {
  validatePersistentVolume(pv, errors);
  const spec = rec(pv.spec);
  const oldSpec = rec(old.spec);
  const now = sourceOf(spec);
  const before = sourceOf(oldSpec);
  // A CSI volume may gain a controllerExpandSecretRef it did not have.
  const csi = rec(now.csi);
  if (now.csi !== undefined && before.csi !== undefined && rec(before.csi).controllerExpandSecretRef === undefined) {
    const { controllerExpandSecretRef: _added, ...rest } = csi;
    now.csi = rest;
  }
  if (!jsonEqual(now, before)) errors.forbidden('spec.persistentvolumesource', 'spec.persistentvolumesource is immutable after creation');
  if (!jsonEqual(spec.volumeMode ?? null, oldSpec.volumeMode ?? null)) errors.invalid('spec.volumeMode', spec.volumeMode ?? null, 'field is immutable');
  if (oldSpec.nodeAffinity !== undefined && !jsonEqual(spec.nodeAffinity ?? null, oldSpec.nodeAffinity)) {
    errors.invalid('spec.nodeAffinity', spec.nodeAffinity ?? null, 'field is immutable');
  }
}
