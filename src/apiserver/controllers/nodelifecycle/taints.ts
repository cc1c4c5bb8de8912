/**
 * The taints the node lifecycle controller keeps on a node from its conditions (upstream's
 * TaintNodesByCondition and taint-based eviction): NoSchedule for Ready False (not-ready) or
 * Unknown (unreachable), MemoryPressure, DiskPressure, PIDPressure or NetworkUnavailable True,
 * and a cordoned node (unschedulable); NoExecute for Ready False (not-ready) or Unknown
 * (unreachable). Taints of other keys, and of these keys with other effects, are left as they
 * are. A NoExecute taint carries the time it was added.
 */
import {
  TAINT_NODE_DISK_PRESSURE, TAINT_NODE_MEMORY_PRESSURE, TAINT_NODE_NETWORK_UNAVAILABLE, TAINT_NODE_NOT_READY, TAINT_NODE_PID_PRESSURE,
  TAINT_NODE_UNREACHABLE, TAINT_NODE_UNSCHEDULABLE,
} from '../../../api/taints.js';
import { formatTime } from '../../../api/time.js';
import { str, type WireObject } from '../../registry/index.js';
import { rec, recs } from '../../resources/common/index.js';

interface ManagedTaint {
  readonly key: string;
  readonly effect: 'NoSchedule' | 'NoExecute';
}

const MANAGED: readonly ManagedTaint[] = [
  ...[TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE, TAINT_NODE_MEMORY_PRESSURE, TAINT_NODE_DISK_PRESSURE, TAINT_NODE_PID_PRESSURE,
    TAINT_NODE_NETWORK_UNAVAILABLE, TAINT_NODE_UNSCHEDULABLE].map((key) => ({ key, effect: 'NoSchedule' as const })),
  { key: TAINT_NODE_NOT_READY, effect: 'NoExecute' },
  { key: TAINT_NODE_UNREACHABLE, effect: 'NoExecute' },
];

const PRESSURE: readonly [string, string][] = [
  ['MemoryPressure', TAINT_NODE_MEMORY_PRESSURE], ['DiskPressure', TAINT_NODE_DISK_PRESSURE],
  ['PIDPressure', TAINT_NODE_PID_PRESSURE], ['NetworkUnavailable', TAINT_NODE_NETWORK_UNAVAILABLE],
];

/** The status of a node condition ('' when the node has none of that type). */
export function conditionStatus(node: WireObject, type: string): string {
  return str(recs(rec(node.status).conditions).find((c) => c.type === type)?.status);
}

/** The managed taints the node should carry now. */
export function desiredTaints(node: WireObject): ManagedTaint[] {
  const wanted: ManagedTaint[] = [];
  const ready = conditionStatus(node, 'Ready');
  if (ready === 'False') wanted.push({ key: TAINT_NODE_NOT_READY, effect: 'NoSchedule' }, { key: TAINT_NODE_NOT_READY, effect: 'NoExecute' });
  if (ready === 'Unknown') wanted.push({ key: TAINT_NODE_UNREACHABLE, effect: 'NoSchedule' }, { key: TAINT_NODE_UNREACHABLE, effect: 'NoExecute' });
  for (const [type, key] of PRESSURE) if (conditionStatus(node, type) === 'True') wanted.push({ key, effect: 'NoSchedule' });
  if (rec(node.spec).unschedulable === true) wanted.push({ key: TAINT_NODE_UNSCHEDULABLE, effect: 'NoSchedule' });
  return wanted;
}

/**
 * The node's taints with the managed ones made to match its conditions, or undefined when they
 * match already.
 */
export function reconciledTaints(node: WireObject, nowMs: number): WireObject[] | undefined {
  const current = recs(rec(node.spec).taints);
  const wanted = desiredTaints(node);
  const same = (t: WireObject, m: ManagedTaint): boolean => t.key === m.key && t.effect === m.effect;
  const kept = current.filter((t) => !MANAGED.some((m) => same(t, m)) || wanted.some((w) => same(t, w)));
  const added = wanted.filter((w) => !current.some((t) => same(t, w)))
    .map((w): WireObject => (w.effect === 'NoExecute' ? { key: w.key, effect: w.effect, timeAdded: formatTime(nowMs) } : { key: w.key, effect: w.effect }));
  if (added.length === 0 && kept.length === current.length) return undefined;
  return [...kept, ...added];
}
