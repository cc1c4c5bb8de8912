/**
 * The node conditions the agent owns (upstream: nodestatus' MemoryPressureCondition,
 * DiskPressureCondition, PIDPressureCondition and ReadyCondition): lastHeartbeatTime is the
 * time of each report, lastTransitionTime changes only when the status does. Conditions owned
 * by others (e.g. NetworkUnavailable) are kept as they are. A transition yields an event, as
 * upstream records "Node <name> status is now: <reason>".
 */
import type { NodeCondition } from 'kubernetes-types/core/v1.js';
import { formatTime } from '../../api/time.js';
import type { NodeEvent, NodePressure, RuntimeStatus } from './types.js';

/** Condition reasons (upstream's Kubelet* reasons, renamed) and event reasons. */
export const REASONS = {
  ready: 'NodeagentReady',
  notReady: 'NodeagentNotReady',
  sufficientMemory: 'NodeagentHasSufficientMemory',
  insufficientMemory: 'NodeagentHasInsufficientMemory',
  noDiskPressure: 'NodeagentHasNoDiskPressure',
  diskPressure: 'NodeagentHasDiskPressure',
  sufficientPID: 'NodeagentHasSufficientPID',
  insufficientPID: 'NodeagentHasInsufficientPID',
} as const;

export const EVENT_REASONS = {
  ready: 'NodeReady',
  notReady: 'NodeNotReady',
  sufficientMemory: 'NodeHasSufficientMemory',
  insufficientMemory: 'NodeHasInsufficientMemory',
  noDiskPressure: 'NodeHasNoDiskPressure',
  diskPressure: 'NodeHasDiskPressure',
  sufficientPID: 'NodeHasSufficientPID',
  insufficientPID: 'NodeHasInsufficientPID',
} as const;

export const READY_MESSAGE = 'nodeagent is posting ready status';

/** The condition types the agent writes. */
export const OWNED_CONDITIONS: readonly string[] = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'];

/** Resources whose capacity the node must report before it is ready. */
export const REQUIRED_CAPACITY = ['cpu', 'memory', 'pods', 'ephemeral-storage'] as const;

export interface ConditionInputs {
  /** The CRI Status answer, or the error it failed with. */
  readonly runtime: RuntimeStatus | { readonly error: string };
  /** The agent's own health problem (PLEG, sync loop), if any. */
  readonly health: string | undefined;
  readonly pressure: NodePressure;
  /** The capacity keys computed this round. */
  readonly capacity: readonly string[];
}

function describe(name: string, c: { readonly reason?: string; readonly message?: string }): string {
  return `${name}=false reason:${c.reason ?? ''} message:${c.message ?? ''}`;
}

/** Why the node is not ready; empty when it is. */
export function readyProblems(inputs: ConditionInputs): string[] {
  const out: string[] = [];
  if ('error' in inputs.runtime) {
    out.push(`container runtime is down: ${inputs.runtime.error}`);
  } else {
    if (!inputs.runtime.runtime.ready) out.push(`container runtime not ready: ${describe('RuntimeReady', inputs.runtime.runtime)}`);
    if (!inputs.runtime.network.ready) out.push(`container runtime network not ready: ${describe('NetworkReady', inputs.runtime.network)}`);
  }
  if (inputs.health !== undefined) out.push(inputs.health);
  const missing = REQUIRED_CAPACITY.filter((r) => !inputs.capacity.includes(r));
  if (missing.length > 0) out.push(`missing node capacity for resources: ${missing.join(', ')}`);
  return out;
}

/** One problem as is, several as `[a, b]` (upstream's aggregate error text). */
export function aggregate(problems: readonly string[]): string {
  return problems.length === 1 ? (problems[0] ?? '') : `[${problems.join(', ')}]`;
}

interface Wanted {
  readonly type: string;
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
  readonly event: string;
}

function wantedConditions(inputs: ConditionInputs): Wanted[] {
  const p = inputs.pressure;
  const problems = readyProblems(inputs);
  return [
    p.memory
      ? { type: 'MemoryPressure', status: 'True', reason: REASONS.insufficientMemory, message: 'nodeagent has insufficient memory available', event: EVENT_REASONS.insufficientMemory }
      : { type: 'MemoryPressure', status: 'False', reason: REASONS.sufficientMemory, message: 'nodeagent has sufficient memory available', event: EVENT_REASONS.sufficientMemory },
    p.disk
      ? { type: 'DiskPressure', status: 'True', reason: REASONS.diskPressure, message: 'nodeagent has disk pressure', event: EVENT_REASONS.diskPressure }
      : { type: 'DiskPressure', status: 'False', reason: REASONS.noDiskPressure, message: 'nodeagent has no disk pressure', event: EVENT_REASONS.noDiskPressure },
    p.pid
      ? { type: 'PIDPressure', status: 'True', reason: REASONS.insufficientPID, message: 'nodeagent has insufficient PID available', event: EVENT_REASONS.insufficientPID }
      : { type: 'PIDPressure', status: 'False', reason: REASONS.sufficientPID, message: 'nodeagent has sufficient PID available', event: EVENT_REASONS.sufficientPID },
    problems.length === 0
      ? { type: 'Ready', status: 'True', reason: REASONS.ready, message: READY_MESSAGE, event: EVENT_REASONS.ready }
      : { type: 'Ready', status: 'False', reason: REASONS.notReady, message: aggregate(problems), event: EVENT_REASONS.notReady },
  ];
}

export interface ComputedConditions {
  /** Others' conditions first (unchanged), then MemoryPressure, DiskPressure, PIDPressure, Ready. */
  readonly conditions: NodeCondition[];
  /** One per transition, in condition order. */
  readonly events: NodeEvent[];
}

/**
 * The conditions after this report. A pressure condition seen for the first time counts as a
 * transition (from Unknown, as upstream); a first Ready condition does not.
 */
export function computeConditions(previous: readonly NodeCondition[] | undefined, inputs: ConditionInputs, nowMs: number, nodeName: string): ComputedConditions {
  const now = formatTime(nowMs);
  const wanted = wantedConditions(inputs);
  const owned = new Set(wanted.map((w) => w.type));
  const conditions: NodeCondition[] = (previous ?? []).filter((c) => !owned.has(c.type)).map((c) => ({ ...c }));
  const events: NodeEvent[] = [];
  for (const w of wanted) {
    const old = previous?.find((c) => c.type === w.type);
    const same = old?.status === w.status;
    conditions.push({
      type: w.type,
      status: w.status,
      lastHeartbeatTime: now,
      lastTransitionTime: same && old.lastTransitionTime !== undefined ? old.lastTransitionTime : now,
      reason: w.reason,
      message: w.message,
    });
    const transition = old === undefined ? w.type !== 'Ready' : !same;
    if (transition) events.push({ type: 'Normal', reason: w.event, message: `Node ${nodeName} status is now: ${w.event}` });
  }
  return { conditions, events };
}
