/**
 * What the API server adds to src/api/pod for pods: defaults and validation on create (the
 * problems of validatePod become 422 causes naming their fields), status reset to Pending with
 * the QoS class, the spec's immutability on update (only images, activeDeadlineSeconds,
 * tolerations additions and schedulingGates removals may change; ephemeral containers only
 * through their subresource, ephemeral.ts), and graceful deletion.
 */
import { applyPodDefaults, decodePod, DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS, qosClass as podQosClass, validatePod } from '../../../api/pod/index.js';
import { jsonEqual } from '../../patch/index.js';
import { str, type ResourceStrategy, type WireObject } from '../../registry/index.js';
import type { FieldErrors } from '../../status/index.js';
import { num, rec, recs } from '../common/index.js';
import { validateEphemeralAdditions } from './ephemeral.js';
import {
  defaultResizePolicy, dropDisabledResizeFields, dropDisabledResizeStatus, markProposedForResize, mungeResizableResources, validateResizePolicy, type PodGates,
} from './resize.js';

export const PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];

/** The lines of src/api validators (`field: message`) as causes of a 422. */
export function addProblems(errors: FieldErrors, lines: readonly string[], skip: (field: string) => boolean = () => false): void {
  for (const line of lines) {
    const at = line.indexOf(': ');
    const field = at < 0 ? '' : line.slice(0, at);
    const message = at < 0 ? line : line.slice(at + 2);
    if (skip(field)) continue;
    if (message.startsWith('is required')) errors.add('FieldValueRequired', field, `Required value${message.slice('is required'.length)}`);
    else if (message.includes('is not supported')) errors.add('FieldValueNotSupported', field, `Unsupported value: ${message}`);
    else if (/duplicate|is already the name/i.test(message)) errors.add('FieldValueDuplicate', field, `Duplicate value: ${message}`);
    else errors.add('FieldValueInvalid', field, `Invalid value: ${message}`);
  }
}

/** Applies upstream's defaults to the object's spec (a pod that does not decode is left to validation). */
function defaulted(object: WireObject, gates: PodGates): void {
  const decoded = decodePod(object);
  if (decoded.ok) object.spec = applyPodDefaults(decoded.pod).spec;
  if (gates.inPlacePodVerticalScaling) defaultResizePolicy(rec(object.spec));
}

/**
 * The QoS class a new pod's status records (upstream's rule, src/api/pod/qos.ts); a malformed
 * quantity counts as none here, since validation refuses the pod naming the field.
 */
export function qosClass(spec: WireObject): string {
  const decoded = decodePod({ spec });
  if (!decoded.ok) return 'BestEffort';
  try {
    return podQosClass(decoded.pod);
  } catch {
    return 'BestEffort';
  }
}

const UPDATABLE = 'pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, '
  + '`spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations), `spec.schedulingGates` (only removals) '
  + 'and `spec.terminationGracePeriodSeconds` (only to 1 when it was negative)';

/** The spec of `pod` with what an update may change taken from `old`, after checking those changes. */
function mungedSpec(spec: WireObject, old: WireObject, errors: FieldErrors, gates: PodGates): WireObject {
  const munged = structuredClone(spec);
  if (gates.inPlacePodVerticalScaling) mungeResizableResources(munged, old);
  for (const list of ['containers', 'initContainers'] as const) {
    const mine = recs(munged[list]);
    const before = recs(old[list]);
    mine.forEach((c, i) => {
      const o = before[i];
      if (o !== undefined && c.name === o.name) {
        if (str(c.image) === '') errors.required(`spec.${list}[${i}].image`);
        c.image = o.image;
      }
    });
  }
  const deadline = num(spec.activeDeadlineSeconds);
  const oldDeadline = num(old.activeDeadlineSeconds);
  if (oldDeadline !== undefined && deadline === undefined) errors.invalid('spec.activeDeadlineSeconds', null, 'must not be unset once set');
  else if (oldDeadline !== undefined && deadline !== undefined && deadline > oldDeadline) errors.invalid('spec.activeDeadlineSeconds', deadline, `must be less than or equal to the previous value ${oldDeadline}`);
  if (old.activeDeadlineSeconds === undefined) delete munged.activeDeadlineSeconds;
  else munged.activeDeadlineSeconds = old.activeDeadlineSeconds;
  const tolerations = recs(spec.tolerations);
  recs(old.tolerations).forEach((t, i) => {
    if (!tolerations.some((n) => jsonEqual({ ...n, tolerationSeconds: null }, { ...t, tolerationSeconds: null }))) {
      errors.forbidden(`spec.tolerations[${i}]`, 'existing toleration can not be modified except its tolerationSeconds');
    }
  });
  if (old.tolerations === undefined) delete munged.tolerations;
  else munged.tolerations = old.tolerations;
  const schedulingGates = recs(spec.schedulingGates).map((g) => str(g.name));
  const oldGates = recs(old.schedulingGates).map((g) => str(g.name));
  if (schedulingGates.some((g) => !oldGates.includes(g))) errors.forbidden('spec.schedulingGates', 'only deletion is allowed, but found new scheduling gate');
  if (old.schedulingGates === undefined) delete munged.schedulingGates;
  else munged.schedulingGates = old.schedulingGates;
  const grace = num(spec.terminationGracePeriodSeconds);
  const oldGrace = num(old.terminationGracePeriodSeconds);
  if (oldGrace !== undefined && oldGrace < 0 && grace === 1) munged.terminationGracePeriodSeconds = oldGrace;
  return munged;
}

function validateStatus(pod: WireObject, errors: FieldErrors): void {
  const status = rec(pod.status);
  const phase = str(status.phase);
  if (phase !== '' && !PHASES.includes(phase)) errors.notSupported('status.phase', phase, PHASES);
  recs(status.conditions).forEach((c, i) => {
    if (str(c.type) === '') errors.required(`status.conditions[${i}].type`);
    if (!['True', 'False', 'Unknown'].includes(str(c.status))) errors.notSupported(`status.conditions[${i}].status`, c.status, ['True', 'False', 'Unknown']);
  });
}

/** The pod strategy with the API server's feature gates (InPlacePodVerticalScaling). */
export function podStrategyWith(gates: PodGates): ResourceStrategy {
  return {
    prepareForCreate: (pod) => {
      dropDisabledResizeFields(rec(pod.spec), undefined, gates);
      defaulted(pod, gates);
      pod.status = { phase: 'Pending', qosClass: qosClass(rec(pod.spec)) };
    },
    validateCreate: (pod, errors) => {
      const decoded = decodePod(pod);
      if (!decoded.ok) {
        addProblems(errors, decoded.problems);
        return;
      }
      // The registry has checked the metadata already (name, namespace, labels, annotations).
      addProblems(errors, validatePod(decoded.pod), (field) => field.startsWith('metadata.'));
      validateResizePolicy(rec(pod.spec), errors);
    },
    prepareForUpdate: (pod, old, ctx) => {
      if (ctx.subresource === 'status') {
        dropDisabledResizeStatus(rec(pod.status), rec(old.spec), gates);
        return;
      }
      if (ctx.subresource !== undefined && ctx.subresource !== 'ephemeralcontainers') return;
      dropDisabledResizeFields(rec(pod.spec), rec(old.spec), gates);
      defaulted(pod, gates);
      if (gates.inPlacePodVerticalScaling && ctx.subresource === undefined) markProposedForResize(pod, old);
    },
    validateUpdate: (pod, old, errors, ctx) => {
      validateStatus(pod, errors);
      if (ctx.subresource !== undefined && ctx.subresource !== 'ephemeralcontainers') return;
      const decoded = decodePod(pod);
      if (!decoded.ok) {
        addProblems(errors, decoded.problems);
        return;
      }
      addProblems(errors, validatePod(decoded.pod, { existing: true }), (field) => field.startsWith('metadata.'));
      validateResizePolicy(rec(pod.spec), errors);
      if (ctx.subresource === 'ephemeralcontainers') {
        validateEphemeralAdditions(pod, old, errors);
        return;
      }
      const before = errors.list.length;
      const munged = mungedSpec(rec(pod.spec), rec(old.spec), errors, gates);
      if (gates.inPlacePodVerticalScaling && qosClass(rec(pod.spec)) !== qosClass(rec(old.spec))) {
        errors.invalid('metadata', str(rec(old.status).qosClass), 'Pod QoS is immutable');
      }
      if (errors.list.length === before && !jsonEqual(munged, rec(old.spec))) errors.forbidden('spec', UPDATABLE);
    },
    gracePeriod: (pod, requested) => {
      const phase = str(rec(pod.status).phase);
      // Nothing runs it (not bound) or nothing runs any more (terminal): no grace needed.
      if (str(rec(pod.spec).nodeName) === '' || phase === 'Succeeded' || phase === 'Failed') return 0;
      const period = requested ?? num(rec(pod.spec).terminationGracePeriodSeconds) ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
      return period < 0 ? 1 : period;
    },
  };
}

/** The pod strategy with every gate at its default (off). */
export const podStrategy: ResourceStrategy = podStrategyWith({ inPlacePodVerticalScaling: false });
