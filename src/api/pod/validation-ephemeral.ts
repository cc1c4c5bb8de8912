/**
 * Validation of a pod's ephemeral containers (upstream validateEphemeralContainers): names unique
 * across every container of the pod; no ports, probes, lifecycle hooks, resources, resize policy
 * or restart policy, and no subPath mounts (an ephemeral container joins a running pod and takes
 * nothing of its own); targetContainerName names a container or init container of the pod; the
 * rest as for containers. A pod is created without any: they are added through the
 * pods/ephemeralcontainers subresource.
 */
import type { Container, EphemeralContainer, PodSpec } from 'kubernetes-types/core/v1.js';
import { validateContainer } from './validation-containers.js';
import { Problems, checkDNSLabel, maybe, quote } from './validation-util.js';

const FORBIDDEN = ['ports', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle', 'resizePolicy', 'restartPolicy'] as const;

/** Checks spec.ephemeralContainers of a pod that already runs (the ephemeralcontainers subresource, and updates of such a pod). */
export function validateEphemeralContainers(p: Problems, spec: PodSpec, volumeNames: ReadonlySet<string>): void {
  const containers = maybe<readonly Container[]>(spec.containers) ?? [];
  const others = new Set([...containers, ...(spec.initContainers ?? [])].map((c) => c.name));
  const regular = new Set(containers.map((c) => c.name));
  const seen = new Set<string>();
  (spec.ephemeralContainers ?? []).forEach((ec: EphemeralContainer, i) => {
    const path = `spec.ephemeralContainers[${i}]`;
    const name = ec.name as string | undefined;
    if (name === undefined || name === '') p.add(`${path}.name`, 'is required');
    else {
      checkDNSLabel(p, `${path}.name`, name);
      if (others.has(name) || seen.has(name)) p.add(`${path}.name`, `${quote(name)} is already the name of a container of this pod; container names must be unique`);
      seen.add(name);
    }
    for (const field of FORBIDDEN) {
      const value = ec[field] as unknown;
      if (value !== undefined && !(Array.isArray(value) && value.length === 0)) p.add(`${path}.${field}`, 'must not be set for an ephemeral container');
    }
    const resources = ec.resources;
    if (resources !== undefined && Object.values(resources).some((v) => v !== undefined && Object.keys(v as object).length > 0)) {
      p.add(`${path}.resources`, 'must not be set for an ephemeral container (the pod\'s resources are fixed)');
    }
    (ec.volumeMounts ?? []).forEach((m, j) => {
      if ((m.subPath ?? '') !== '' || (m.subPathExpr ?? '') !== '') p.add(`${path}.volumeMounts[${j}].subPath`, 'must not be set for an ephemeral container');
    });
    const target = ec.targetContainerName;
    if (target !== undefined && target !== '' && !others.has(target)) p.add(`${path}.targetContainerName`, `${quote(target)} is not a container of this pod`);
    const { targetContainerName: _target, ...container } = ec;
    validateContainer(p, path, container, { volumeNames, hostNetwork: spec.hostNetwork === true, init: false }, regular);
  });
}
