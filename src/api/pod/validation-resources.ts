/**
 * Validation of a container's resources: resource names (the standard cpu, memory,
 * ephemeral-storage, hugepages-<size>, or an extended resource `domain/name`), quantities
 * (well formed, not negative), requests at most the limits, and extended resources in whole
 * numbers with requests equal to limits.
 */
import type { ResourceRequirements } from 'kubernetes-types/core/v1.js';

import { validateQualifiedName } from '../labels.js';
import { compareQuantities, formatQuantity, type Quantity } from '../quantity.js';
import { Problems, checkQuantity, quote } from './validation-util.js';

const STANDARD = ['cpu', 'memory', 'ephemeral-storage'];

function isHugePages(name: string): boolean {
  return name.startsWith('hugepages-');
}

/** A resource in a domain ('example.com/gpu'), outside the orch.io and kubernetes.io namespaces. */
function isExtended(name: string): boolean {
  if (!name.includes('/')) return false;
  const domain = name.slice(0, name.indexOf('/'));
  return !(domain === 'orch.io' || domain.endsWith('.orch.io') || domain === 'kubernetes.io' || domain.endsWith('.kubernetes.io'));
}

function checkName(p: Problems, path: string, name: string): void {
  const problems = validateQualifiedName(name);
  if (problems.length > 0) {
    p.addEach(path, name, problems);
    return;
  }
  if (isExtended(name)) return;
  if (STANDARD.includes(name)) return;
  if (isHugePages(name)) {
    checkQuantity(p, path, name.slice('hugepages-'.length));
    return;
  }
  p.add(path, `${quote(name)} is not a container resource: must be cpu, memory, ephemeral-storage, hugepages-<size> or an extended resource <domain>/<name>`);
}

function readList(p: Problems, path: string, list: Readonly<Record<string, string>> | undefined): Map<string, Quantity> {
  const values = new Map<string, Quantity>();
  for (const [name, text] of Object.entries(list ?? {})) {
    const at = `${path}[${name}]`;
    checkName(p, at, name);
    const q = checkQuantity(p, at, text);
    if (q === undefined) continue;
    if (q.mantissa < 0n) {
      p.add(at, `${quote(text)} must not be negative`);
      continue;
    }
    if (isExtended(name) && q.exponent < 0) p.add(at, `${quote(text)} must be a whole number for an extended resource`);
    values.set(name, q);
  }
  return values;
}

export function validateResources(p: Problems, path: string, resources: ResourceRequirements): void {
  const limits = readList(p, `${path}.limits`, resources.limits);
  const requests = readList(p, `${path}.requests`, resources.requests);
  for (const [name, request] of requests) {
    const limit = limits.get(name);
    const at = `${path}.requests[${name}]`;
    if (limit === undefined) {
      if (isExtended(name)) p.add(at, 'an extended resource needs a limit equal to its request');
      continue;
    }
    if (isExtended(name) && compareQuantities(request, limit) !== 0) {
      p.add(at, `${formatQuantity(request)} must equal the limit (${formatQuantity(limit)}) for an extended resource`);
    } else if (compareQuantities(request, limit) > 0) {
      p.add(at, `${formatQuantity(request)} must be less than or equal to the limit (${formatQuantity(limit)})`);
    }
  }
}
