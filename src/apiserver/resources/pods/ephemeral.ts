/**
 * The pods/ephemeralcontainers subresource (upstream's EphemeralContainersREST): get, update
 * and patch of the Pod, of which only `spec.ephemeralContainers` is taken (the rest is the stored
 * pod's, as upstream's dropNonEphemeralContainerUpdates). Ephemeral containers may only be
 * added: an existing one may be neither removed nor changed (422, Forbidden); the list is
 * validated as the pod's others are (src/api/pod: no ports, probes, lifecycle or resources,
 * names unique in the pod, a known targetContainerName). This is how `kubectl debug` adds its
 * container; the node agent starts it in the running pod.
 */
import { cloneJson, jsonEqual } from '../../patch/index.js';
import type { SubresourceDefinition, WireObject } from '../../registry/index.js';
import { str } from '../../registry/index.js';
import type { FieldErrors } from '../../status/index.js';
import { rec, recs } from '../common/index.js';

/** The stored pod with the written ephemeral containers. */
function merge(written: WireObject, stored: WireObject): WireObject {
  const pod = cloneJson(stored);
  const spec = rec(pod.spec);
  const ephemeral = rec(written.spec).ephemeralContainers;
  if (ephemeral === undefined) delete spec.ephemeralContainers;
  else spec.ephemeralContainers = cloneJson(ephemeral);
  pod.spec = spec;
  return pod;
}

export const ephemeralContainersSubresource: SubresourceDefinition = {
  name: 'ephemeralcontainers', kind: 'Pod', verbs: ['get', 'patch', 'update'], merge, fields: [['spec', 'ephemeralContainers']],
};

/** Upstream ValidatePodEphemeralContainersUpdate's rule: existing ephemeral containers stay as they are. */
export function validateEphemeralAdditions(pod: WireObject, old: WireObject, errors: FieldErrors): void {
  const next = new Map(recs(rec(pod.spec).ephemeralContainers).map((c) => [str(c.name), c]));
  for (const before of recs(rec(old.spec).ephemeralContainers)) {
    const name = str(before.name);
    const now = next.get(name);
    if (now === undefined) errors.forbidden('spec.ephemeralContainers', `existing ephemeral containers ${JSON.stringify(name)} may not be removed`);
    else if (!jsonEqual(now, before)) errors.forbidden('spec.ephemeralContainers', `existing ephemeral containers ${JSON.stringify(name)} may not be changed`);
  }
}
