/**
 * DefaultTolerationSeconds (upstream's admission plugin of that name): on create and update of a
 * pod itself (not its subresources), a pod that has no toleration for the not-ready (or
 * unreachable) NoExecute taint — a toleration with that key or an empty key, and the NoExecute
 * effect or an empty one — gets `{key, operator: Exists, effect: NoExecute, tolerationSeconds}`.
 * The taint eviction then deletes such pods that long after their node became not ready or
 * unreachable. On update this puts back the tolerations an update's list left out (an apply of a
 * manifest's own tolerations, a replace), which the pod may not lose.
 */
import { TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE } from '../../api/taints.js';
import type { ResourceDefinition, WireObject } from '../registry/index.js';
import { rec, recs } from '../resources/common/index.js';

export interface DefaultTolerationOptions {
  /** --default-not-ready-toleration-seconds. */
  readonly notReadySeconds: number;
  /** --default-unreachable-toleration-seconds. */
  readonly unreachableSeconds: number;
}

function tolerates(tolerations: readonly WireObject[], key: string): boolean {
  return tolerations.some((t) => (t.key === key || t.key === undefined || t.key === '') && (t.effect === 'NoExecute' || t.effect === undefined || t.effect === ''));
}

/** Adds the default tolerations to a pod's spec (in place). */
export function addDefaultTolerations(pod: WireObject, options: DefaultTolerationOptions): void {
  const spec = rec(pod.spec);
  const tolerations = recs(spec.tolerations);
  const added: WireObject[] = [];
  if (!tolerates(tolerations, TAINT_NODE_NOT_READY)) {
    added.push({ key: TAINT_NODE_NOT_READY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: options.notReadySeconds });
  }
  if (!tolerates(tolerations, TAINT_NODE_UNREACHABLE)) {
    added.push({ key: TAINT_NODE_UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: options.unreachableSeconds });
  }
  if (added.length === 0) return;
  spec.tolerations = [...tolerations, ...added];
  pod.spec = spec;
}

/** The pods definition with DefaultTolerationSeconds before its own create and update defaults. */
export function withDefaultTolerationSeconds(def: ResourceDefinition, options: DefaultTolerationOptions): ResourceDefinition {
  const base = def.strategy;
  return {
    ...def,
    strategy: {
      ...def.strategy,
      prepareForCreate: (object, ctx) => {
        addDefaultTolerations(object, options);
        base.prepareForCreate?.(object, ctx);
      },
      prepareForUpdate: (object, old, ctx) => {
        if (ctx.subresource === undefined) addDefaultTolerations(object, options);
        base.prepareForUpdate?.(object, old, ctx);
      },
    },
  };
}
