/**
 * In-place pod resize on the API server's side (upstream v1.28 with InPlacePodVerticalScaling):
 * resizePolicy defaulted (NotRequired for the cpu and memory a container requests) and
 * validated; on update the cpu and memory requests and limits of containers may change, the QoS
 * class may not, and a change of requests marks the pod's status.resize Proposed until the node
 * answers. With the gate off, resizePolicy and the status fields are dropped unless the old pod
 * uses them, and a change of resources is refused by the update rule (strategy.ts).
 */
import { str, type WireObject } from '../../registry/index.js';
import type { FieldErrors } from '../../status/index.js';
import { rec, recs } from '../common/index.js';
import { jsonEqual } from '../../patch/index.js';

export interface PodGates {
  /** InPlacePodVerticalScaling (alpha in v1.28, default off). */
  readonly inPlacePodVerticalScaling: boolean;
}

const RESIZE_RESOURCES = ['cpu', 'memory'];
const RESIZE_POLICIES = ['NotRequired', 'RestartContainer'];

/** upstream SetDefaults_Pod with the gate on: NotRequired for cpu and memory a container requests and names no policy for. */
export function defaultResizePolicy(spec: WireObject): void {
  for (const c of recs(spec.containers)) {
    const requests = rec(rec(c.resources).requests);
    if (rec(c.resources).requests === undefined) continue;
    const policies = recs(c.resizePolicy);
    const named = new Set(policies.map((p) => str(p.resourceName)));
    const added = RESIZE_RESOURCES.filter((r) => requests[r] !== undefined && !named.has(r)).map((r) => ({ resourceName: r, restartPolicy: 'NotRequired' }));
    if (added.length > 0) c.resizePolicy = [...policies, ...added];
  }
}

/** Whether a pod spec uses in-place resize fields (upstream inPlacePodVerticalScalingInUse). */
function resizeInUse(spec: WireObject | undefined): boolean {
  return spec !== undefined && recs(spec.containers).some((c) => recs(c.resizePolicy).length > 0);
}

/** upstream dropDisabledFields: with the gate off, resizePolicy goes unless the old pod has it. */
export function dropDisabledResizeFields(spec: WireObject, oldSpec: WireObject | undefined, gates: PodGates): void {
  if (gates.inPlacePodVerticalScaling || resizeInUse(oldSpec)) return;
  for (const list of ['containers', 'initContainers'] as const) for (const c of recs(spec[list])) delete c.resizePolicy;
}

/** upstream dropDisabledPodStatusFields: with the gate off, status.resize and the container statuses' allocatedResources and resources go. */
export function dropDisabledResizeStatus(status: WireObject, oldSpec: WireObject | undefined, gates: PodGates): void {
  if (gates.inPlacePodVerticalScaling || resizeInUse(oldSpec)) return;
  delete status.resize;
  for (const s of recs(status.containerStatuses)) {
    delete s.allocatedResources;
    delete s.resources;
  }
}

/** upstream validateResizePolicy, and its refusal for init containers. */
export function validateResizePolicy(spec: WireObject, errors: FieldErrors): void {
  recs(spec.containers).forEach((c, i) => {
    const path = `spec.containers[${i}].resizePolicy`;
    const seen = new Set<string>();
    recs(c.resizePolicy).forEach((p, j) => {
      const resource = str(p.resourceName);
      const policy = str(p.restartPolicy);
      if (seen.has(resource)) errors.duplicate(`${path}[${j}]`, resource);
      seen.add(resource);
      if (resource === '') errors.required(path);
      else if (!RESIZE_RESOURCES.includes(resource)) errors.notSupported(path, resource, RESIZE_RESOURCES);
      if (policy === '') errors.required(path);
      else if (!RESIZE_POLICIES.includes(policy)) errors.notSupported(path, policy, RESIZE_POLICIES);
    });
  });
  recs(spec.initContainers).forEach((c, i) => {
    if (recs(c.resizePolicy).length > 0) errors.invalid(`spec.initContainers[${i}].resizePolicy`, c.resizePolicy, 'must not be set for init containers');
  });
}

/** A resource list with its cpu and memory taken from `old` (upstream's mungeCpuMemResources); absent when `old` is. */
function withOldCpuMemory(list: unknown, old: unknown): WireObject | undefined {
  if (old === undefined || old === null) return undefined;
  const munged: WireObject = Object.fromEntries(Object.entries(rec(list)).filter(([name]) => !RESIZE_RESOURCES.includes(name)));
  for (const r of RESIZE_RESOURCES) {
    const value = rec(old)[r];
    if (value !== undefined) munged[r] = value;
  }
  return munged;
}

/**
 * With the gate on, the containers of the munged spec (the update rule compares it with the
 * old spec) get the old cpu and memory requests and limits: those may change.
 */
export function mungeResizableResources(munged: WireObject, old: WireObject): void {
  const before = recs(old.containers);
  recs(munged.containers).forEach((c, i) => {
    const o = rec(before[i]);
    const oldResources = rec(o.resources);
    const resources = rec(c.resources);
    const limits = withOldCpuMemory(resources.limits, oldResources.limits);
    const requests = withOldCpuMemory(resources.requests, oldResources.requests);
    const next: WireObject = { ...resources };
    delete next.limits;
    delete next.requests;
    if (limits !== undefined) next.limits = limits;
    if (requests !== undefined) next.requests = requests;
    if (o.resources === undefined && Object.keys(next).length === 0) delete c.resources;
    else c.resources = next;
  });
}

/** upstream MarkPodProposedForResize: a container's new requests that differ from what the node allocated mark the resize Proposed. */
export function markProposedForResize(pod: WireObject, old: WireObject): void {
  const oldContainers = recs(rec(old.spec).containers);
  const status = rec(pod.status);
  for (const [i, c] of recs(rec(pod.spec).containers).entries()) {
    const requests = rec(c.resources).requests;
    if (requests === undefined) continue;
    if (jsonEqual(rec(oldContainers[i]).resources, c.resources)) continue;
    const cs = recs(status.containerStatuses).find((s) => str(s.name) === str(c.name));
    if (cs !== undefined && !jsonEqual(cs.allocatedResources, requests)) {
      pod.status = { ...status, resize: 'Proposed' };
      return;
    }
  }
}
