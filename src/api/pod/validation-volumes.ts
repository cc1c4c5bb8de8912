/**
 * Validation of spec.volumes: unique DNS-label names, exactly one source each, and the
 * rules of the sources a node agent serves itself (hostPath, emptyDir, configMap, secret,
 * downwardAPI, projected) or through storage drivers and claims (persistentVolumeClaim, csi,
 * flexVolume, ephemeral with its claim template). Other sources are only counted.
 */
import type { KeyToPath, Volume } from 'kubernetes-types/core/v1.js';

import { problemLines } from '../field-problems.js';
import { validateClaimTemplate, validateCsiDriverName } from '../storage/index.js';
import { VOLUME_SOURCES } from './defaults.js';
import {
  Problems, VOLUME_FIELD_PATHS, checkAbsolutePath, checkDNSLabel, checkDNSSubdomain, checkFieldRef, checkFileMode,
  checkOptionalEnum, checkQuantity, checkRelativePath, quote, setKeys,
} from './validation-util.js';

export const HOST_PATH_TYPES = ['', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket', 'CharDevice', 'BlockDevice'] as const;
const MEDIUM = /^(|Memory|HugePages|HugePages-.+)$/;

function validateItems(p: Problems, path: string, items: readonly KeyToPath[]): void {
  items.forEach((item, i) => {
    const at = `${path}[${i}]`;
    if ((item.key as string | undefined) === undefined || item.key === '') p.add(`${at}.key`, 'is required');
    if ((item.path as string | undefined) === undefined || item.path === '') p.add(`${at}.path`, 'is required: a relative file path');
    else checkRelativePath(p, `${at}.path`, item.path);
    checkFileMode(p, `${at}.mode`, item.mode);
  });
}

function validateSource(p: Problems, path: string, v: Volume): void {
  if (v.hostPath !== undefined) {
    checkAbsolutePath(p, `${path}.hostPath.path`, v.hostPath.path, true);
    checkOptionalEnum(p, `${path}.hostPath.type`, v.hostPath.type, HOST_PATH_TYPES);
  }
  if (v.emptyDir !== undefined) {
    const medium = v.emptyDir.medium;
    if (medium !== undefined && !MEDIUM.test(medium)) {
      p.add(`${path}.emptyDir.medium`, `${quote(medium)} is not supported: must be '' (the node's disk), Memory, HugePages or HugePages-<size>`);
    }
    if (v.emptyDir.sizeLimit !== undefined) {
      const q = checkQuantity(p, `${path}.emptyDir.sizeLimit`, v.emptyDir.sizeLimit);
      if (q !== undefined && q.mantissa < 0n) p.add(`${path}.emptyDir.sizeLimit`, `${quote(v.emptyDir.sizeLimit)} must not be negative`);
    }
  }
  if (v.configMap !== undefined) {
    const name = v.configMap.name ?? '';
    if (name === '') p.add(`${path}.configMap.name`, 'is required');
    else checkDNSSubdomain(p, `${path}.configMap.name`, name);
    checkFileMode(p, `${path}.configMap.defaultMode`, v.configMap.defaultMode);
    validateItems(p, `${path}.configMap.items`, v.configMap.items ?? []);
  }
  if (v.secret !== undefined) {
    const name = v.secret.secretName ?? '';
    if (name === '') p.add(`${path}.secret.secretName`, 'is required');
    else checkDNSSubdomain(p, `${path}.secret.secretName`, name);
    checkFileMode(p, `${path}.secret.defaultMode`, v.secret.defaultMode);
    validateItems(p, `${path}.secret.items`, v.secret.items ?? []);
  }
  if (v.downwardAPI !== undefined) {
    checkFileMode(p, `${path}.downwardAPI.defaultMode`, v.downwardAPI.defaultMode);
    (v.downwardAPI.items ?? []).forEach((item, i) => {
      const at = `${path}.downwardAPI.items[${i}]`;
      if ((item.path as string | undefined) === undefined || item.path === '') p.add(`${at}.path`, 'is required: a relative file path');
      else checkRelativePath(p, `${at}.path`, item.path);
      checkFileMode(p, `${at}.mode`, item.mode);
      const refs = setKeys(item, ['fieldRef', 'resourceFieldRef']);
      if (refs.length !== 1) p.add(at, `must have exactly one of fieldRef, resourceFieldRef (found ${refs.length === 0 ? 'none' : refs.join(', ')})`);
      if (item.fieldRef !== undefined) checkFieldRef(p, `${at}.fieldRef`, item.fieldRef, VOLUME_FIELD_PATHS);
    });
  }
  if (v.projected !== undefined) checkFileMode(p, `${path}.projected.defaultMode`, v.projected.defaultMode);
  if (v.persistentVolumeClaim !== undefined) {
    const claim = v.persistentVolumeClaim.claimName as string | undefined;
    if (claim === undefined || claim === '') p.add(`${path}.persistentVolumeClaim.claimName`, 'is required');
  }
  validateStorageSources(p, path, v);
}

/** The sources of storage drivers and claims: csi, flexVolume and ephemeral (upstream's rules). */
function validateStorageSources(p: Problems, path: string, v: Volume): void {
  const sink = problemLines(p.lines);
  if (v.csi !== undefined) {
    validateCsiDriverName(sink, `${path}.csi.driver`, v.csi.driver);
    const secret = v.csi.nodePublishSecretRef;
    if (secret !== undefined) {
      const name = secret.name ?? '';
      if (name === '') p.add(`${path}.csi.nodePublishSecretRef.name`, 'is required');
      else checkDNSSubdomain(p, `${path}.csi.nodePublishSecretRef.name`, name);
    }
  }
  if (v.flexVolume !== undefined) {
    if ((v.flexVolume.driver as string | undefined ?? '') === '') p.add(`${path}.flexVolume.driver`, 'is required');
    for (const key of Object.keys(v.flexVolume.options ?? {})) {
      const slash = key.indexOf('/');
      const prefix = `.${(slash < 0 ? key : key.slice(0, slash)).toLowerCase()}`;
      // The node agent passes its own options under orch.io/ (fsType, readwrite, secrets, pod information).
      if (prefix.endsWith('.orch.io')) p.add(`${path}.flexVolume.options[${key}]`, `${quote(key)} is in the orch.io namespace, which is reserved`);
    }
  }
  if (v.ephemeral !== undefined) {
    const template = v.ephemeral.volumeClaimTemplate;
    if (template === undefined) p.add(`${path}.ephemeral.volumeClaimTemplate`, 'is required');
    else validateClaimTemplate(sink, `${path}.ephemeral.volumeClaimTemplate`, template);
  }
}

/** Checks spec.volumes; returns the set of (valid or not) volume names, for the mounts' checks. */
export function validateVolumes(p: Problems, volumes: readonly Volume[]): Set<string> {
  const names = new Map<string, number>();
  volumes.forEach((v, i) => {
    const path = `spec.volumes[${i}]`;
    const name = v.name as string | undefined;
    if (name === undefined || name === '') p.add(`${path}.name`, 'is required');
    else {
      checkDNSLabel(p, `${path}.name`, name);
      const first = names.get(name);
      if (first !== undefined) p.add(`${path}.name`, `${quote(name)} is already the name of spec.volumes[${first}]; volume names must be unique`);
      else names.set(name, i);
    }
    const sources = setKeys(v, VOLUME_SOURCES);
    if (sources.length === 0) p.add(path, `must have a volume source (one of ${VOLUME_SOURCES.join(', ')})`);
    else if (sources.length > 1) p.add(path, `must have exactly one volume source (found ${sources.join(', ')})`);
    validateSource(p, path, v);
  });
  return new Set(names.keys());
}
