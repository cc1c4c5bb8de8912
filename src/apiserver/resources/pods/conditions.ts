/**
 * Pod conditions as upstream's UpdatePodCondition writes them: a condition of a type replaces
 * the one there (or is appended); lastTransitionTime moves only when the status changes. Used by
 * the binding subresource and the loops that write pod conditions (scheduler, node lifecycle,
 * taint eviction, pod GC).
 */
import { formatTime } from '../../../api/time.js';
import type { WireObject } from '../../registry/index.js';
import { rec, recs } from '../common/index.js';

export interface PodConditionInput {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason?: string;
  readonly message?: string;
}

/** The condition of `type` in a pod's status, if any. */
export function podCondition(pod: WireObject, type: string): WireObject | undefined {
  return recs(rec(pod.status).conditions).find((c) => c.type === type);
}

/**
 * Sets the condition on `pod` (mutated in place; its status object is created when missing).
 * Returns whether anything changed (status, reason, message or the transition time).
 */
export function setPodCondition(pod: WireObject, input: PodConditionInput, nowMs: number): boolean {
  const status = rec(pod.status);
  pod.status = status;
  const conditions = recs(status.conditions);
  const index = conditions.findIndex((c) => c.type === input.type);
  const old = index < 0 ? undefined : conditions[index];
  const transition = old !== undefined && old.status === input.status && typeof old.lastTransitionTime === 'string'
    ? old.lastTransitionTime
    : formatTime(nowMs);
  const next: WireObject = {
    type: input.type,
    status: input.status,
    ...(old?.lastProbeTime === undefined ? {} : { lastProbeTime: old.lastProbeTime }),
    lastTransitionTime: transition,
    ...(input.reason === undefined || input.reason === '' ? {} : { reason: input.reason }),
    ...(input.message === undefined || input.message === '' ? {} : { message: input.message }),
  };
  const changed = old === undefined || old.status !== next.status || old.reason !== next.reason || old.message !== next.message || old.lastTransitionTime !== transition;
  if (index < 0) conditions.push(next);
  else conditions[index] = next;
  status.conditions = conditions;
  return changed;
}
