/**
 * Thresholds (upstream's ParseThresholdConfig and the helpers of its eviction manager): the
 * configuration's evictionHard, evictionSoft with evictionSoftGracePeriod and
 * evictionMinimumReclaim as thresholds; with `pods` in enforceNodeAllocatable, each hard
 * memory.available threshold also applies to allocatableMemory.available. Then the pure
 * steps of a monitoring pass: which thresholds are met (against the value plus the minimum
 * reclaim once met), since when, whether their grace periods passed, the node conditions they
 * raise and how long those stay, and which signal to reclaim first (memory before the rest).
 *
 * Percentages are float32 fractions as upstream parses them ("10%" is 0.1f), "0%" and "100%"
 * are ignored, a quantity must be positive; a percentage of a capacity is truncated to an
 * integer.
 */
import { parseDuration, durationToMs } from '../../api/duration.js';
import { OrchError, messageOf } from '../../api/errors.js';
import { formatQuantity, parseQuantity, quantityValue } from '../../api/quantity.js';
import { SIGNALS, type Observation, type Observations, type PressureCondition, type Signal, type StarvedResource, type Threshold, type ThresholdValue } from './types.js';

/** A threshold, grace period or minimum reclaim of the configuration cannot be used. */
export const EVICTION_THRESHOLD_INVALID = 'EVICTION_THRESHOLD_INVALID';

export const SIGNAL_RESOURCE: Readonly<Record<Signal, StarvedResource>> = {
  'memory.available': 'memory',
  'allocatableMemory.available': 'memory',
  'nodefs.available': 'ephemeral-storage',
  'nodefs.inodesFree': 'inodes',
  'imagefs.available': 'ephemeral-storage',
  'imagefs.inodesFree': 'inodes',
  'pid.available': 'pids',
};

export const SIGNAL_CONDITION: Readonly<Record<Signal, PressureCondition>> = {
  'memory.available': 'MemoryPressure',
  'allocatableMemory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
};

/** The conditions in the order the node status and messages list them. */
export const CONDITION_ORDER: readonly PressureCondition[] = ['MemoryPressure', 'DiskPressure', 'PIDPressure'];

export interface ThresholdConfig {
  readonly evictionHard: Readonly<Record<string, string>>;
  readonly evictionSoft: Readonly<Record<string, string>>;
  readonly evictionSoftGracePeriod: Readonly<Record<string, string>>;
  readonly evictionMinimumReclaim: Readonly<Record<string, string>>;
  readonly enforceNodeAllocatable: readonly string[];
}

function invalid(field: string, message: string): OrchError {
  return new OrchError(EVICTION_THRESHOLD_INVALID, 'invalid', `${field}: ${message}`, { subject: field });
}

function signalOf(field: string, name: string): Signal {
  if (!(SIGNALS as readonly string[]).includes(name)) throw invalid(field, `unsupported eviction signal ${name}`);
  return name as Signal;
}

/** upstream's parsePercentage: float32(value) / 100 in float32. */
function percentageOf(field: string, signal: string, text: string): number {
  const n = Number(text.slice(0, -1));
  if (text.length === 1 || !Number.isFinite(n)) throw invalid(field, `${signal}: ${JSON.stringify(text)} is not a percentage`);
  return Math.fround(Math.fround(n) / 100);
}

function quantityOf(field: string, signal: string, text: string): { value: number; text: string } {
  try {
    const q = parseQuantity(text, field);
    return { value: quantityValue(q), text: formatQuantity(q) };
  } catch (err) {
    throw invalid(field, `${signal}: ${messageOf(err)}`);
  }
}

/** A threshold's value, or undefined for "0%" and "100%" (ignored, as upstream). */
function thresholdValue(field: string, signal: string, text: string): ThresholdValue | undefined {
  if (text.endsWith('%')) {
    if (text === '0%' || text === '100%') return undefined;
    const percentage = percentageOf(field, signal, text);
    if (percentage < 0) throw invalid(field, `eviction percentage threshold ${signal} must be >= 0%: ${text}`);
    if (percentage > 1) throw invalid(field, `eviction percentage threshold ${signal} must be <= 100%: ${text}`);
    return { percentage, text };
  }
  const q = quantityOf(field, signal, text);
  if (q.value <= 0) throw invalid(field, `eviction threshold ${signal} must be positive: ${q.text}`);
  return { quantity: q.value, text: q.text };
}

function minimumReclaim(signal: string, text: string): ThresholdValue {
  const field = 'evictionMinimumReclaim';
  if (text.endsWith('%')) {
    const percentage = percentageOf(field, signal, text);
    if (!(percentage > 0)) throw invalid(field, `eviction percentage minimum reclaim ${signal} must be positive: ${text}`);
    return { percentage, text };
  }
  const q = quantityOf(field, signal, text);
  if (q.value < 0) throw invalid(field, `negative eviction minimum reclaim specified for ${signal}`);
  return { quantity: q.value, text: q.text };
}

/** The thresholds of the configuration. Throws EVICTION_THRESHOLD_INVALID naming the field. */
export function parseThresholds(c: ThresholdConfig): Threshold[] {
  const reclaims = new Map<Signal, ThresholdValue>();
  for (const [name, text] of Object.entries(c.evictionMinimumReclaim)) reclaims.set(signalOf('evictionMinimumReclaim', name), minimumReclaim(name, text));
  const results: Threshold[] = [];
  const add = (signal: Signal, value: ThresholdValue, gracePeriodMs: number): void => {
    const minReclaim = reclaims.get(signal);
    results.push({ signal, value, gracePeriodMs, ...(minReclaim === undefined ? {} : { minReclaim }) });
  };
  for (const [name, text] of Object.entries(c.evictionHard)) {
    const signal = signalOf('evictionHard', name);
    const value = thresholdValue('evictionHard', name, text);
    if (value !== undefined) add(signal, value, 0);
  }
  for (const [name, text] of Object.entries(c.evictionSoft)) {
    const signal = signalOf('evictionSoft', name);
    const value = thresholdValue('evictionSoft', name, text);
    const graceText = c.evictionSoftGracePeriod[name];
    if (graceText === undefined) throw invalid('evictionSoftGracePeriod', `grace period must be specified for the soft eviction threshold ${name}`);
    let graceMs: number;
    try {
      graceMs = durationToMs(parseDuration(graceText));
    } catch (err) {
      throw invalid('evictionSoftGracePeriod', `${name}: ${messageOf(err)}`);
    }
    if (graceMs < 0) throw invalid('evictionSoftGracePeriod', `invalid eviction grace period specified: ${graceText}, must be a positive value`);
    if (value !== undefined) add(signal, value, graceMs);
  }
  for (const name of Object.keys(c.evictionSoftGracePeriod)) signalOf('evictionSoftGracePeriod', name);
  if (c.enforceNodeAllocatable.includes('pods')) {
    for (const t of [...results]) {
      if (t.signal === 'memory.available' && t.gracePeriodMs === 0) results.push({ ...t, signal: 'allocatableMemory.available' });
    }
  }
  return results;
}

export const isHard = (t: Threshold): boolean => t.gracePeriodMs === 0;

/** A key that tells thresholds apart (upstream keys its maps by the threshold's value). */
export function thresholdKey(t: Threshold): string {
  return `${t.signal}|${t.gracePeriodMs}|${t.value.text}`;
}

/** The threshold's amount against `capacity` (upstream's GetThresholdQuantity). */
export function thresholdQuantity(value: ThresholdValue, capacity: number): number {
  return 'quantity' in value ? value.quantity : Math.trunc(capacity * value.percentage);
}

/** The thresholds met now; with `enforceMinReclaim` against the value plus the minimum reclaim. */
export function thresholdsMet(thresholds: readonly Threshold[], observations: Observations, enforceMinReclaim: boolean): Threshold[] {
  return thresholds.filter((t) => {
    const o = observations.get(t.signal);
    if (o === undefined) return false;
    let quantity = thresholdQuantity(t.value, o.capacity);
    if (enforceMinReclaim && t.minReclaim !== undefined) quantity += thresholdQuantity(t.minReclaim, o.capacity);
    return quantity > o.available;
  });
}

/** `a` with those of `b` it lacks. */
export function mergeThresholds(a: readonly Threshold[], b: readonly Threshold[]): Threshold[] {
  const keys = new Set(a.map(thresholdKey));
  return [...a, ...b.filter((t) => !keys.has(thresholdKey(t)))];
}

/** When each threshold met now was first met (kept from `previous` while it stays met). */
export function firstObservedAt(thresholds: readonly Threshold[], previous: ReadonlyMap<string, { readonly threshold: Threshold; readonly at: number }>, now: number): Map<string, { threshold: Threshold; at: number }> {
  const out = new Map<string, { threshold: Threshold; at: number }>();
  for (const t of thresholds) out.set(thresholdKey(t), { threshold: t, at: previous.get(thresholdKey(t))?.at ?? now });
  return out;
}

/** The thresholds met for at least their grace period. */
export function metGracePeriod(observedAt: ReadonlyMap<string, { readonly threshold: Threshold; readonly at: number }>, now: number): Threshold[] {
  return [...observedAt.values()].filter((e) => now - e.at >= e.threshold.gracePeriodMs).map((e) => e.threshold);
}

/** The conditions the thresholds raise, in the node status's order. */
export function conditionsOf(thresholds: readonly Threshold[]): PressureCondition[] {
  const raised = new Set(thresholds.map((t) => SIGNAL_CONDITION[t.signal]));
  return CONDITION_ORDER.filter((c) => raised.has(c));
}

/** When each condition was last observed: `conditions` now, the others as before. */
export function conditionsLastObservedAt(conditions: readonly PressureCondition[], previous: ReadonlyMap<PressureCondition, number>, now: number): Map<PressureCondition, number> {
  const out = new Map(previous);
  for (const c of conditions) out.set(c, now);
  return out;
}

/** The conditions observed less than `periodMs` ago (the pressure transition period). */
export function conditionsObservedSince(lastObservedAt: ReadonlyMap<PressureCondition, number>, periodMs: number, now: number): PressureCondition[] {
  return CONDITION_ORDER.filter((c) => {
    const at = lastObservedAt.get(c);
    return at !== undefined && now - at < periodMs;
  });
}

/** The thresholds whose observation is newer than at the last pass (or never seen before). */
export function thresholdsUpdatedStats(thresholds: readonly Threshold[], observations: Observations, last: Observations): Threshold[] {
  return thresholds.filter((t) => {
    const o = observations.get(t.signal);
    if (o === undefined) return false;
    const before: Observation | undefined = last.get(t.signal);
    return before === undefined || o.time === 0 || o.time > before.time;
  });
}

/** Memory first, then the others as given (upstream's byEvictionPriority, stable). */
export function byEvictionPriority(thresholds: readonly Threshold[]): Threshold[] {
  const memory = (t: Threshold): boolean => t.signal === 'memory.available' || t.signal === 'allocatableMemory.available';
  return [...thresholds.filter(memory), ...thresholds.filter((t) => !memory(t))];
}
