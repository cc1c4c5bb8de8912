/**
 * Node taints as --register-with-taints and registerWithTaints give them: the type, the
 * `key=value:effect` text form with Kubernetes' parsing rules, and the validation the API
 * server applies to a node's taints. This file owns no registration logic.
 */
import { OrchError } from './errors.js';
import { validateLabelValue, validateQualifiedName } from './labels.js';
import { quoteValue } from './quote.js';

export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;
export type TaintEffect = (typeof TAINT_EFFECTS)[number];

/** A taint; `value` is omitted when empty (Kubernetes makes no difference between the two). */
export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: TaintEffect;
}

/** Text that is not a list of valid taints, or that repeats a key and effect. */
export const INVALID_TAINT = 'API_INVALID_TAINT';

const FORM = "expected <key>=<value>:<effect> or <key>:<effect>, with effect NoSchedule, PreferNoSchedule or NoExecute, e.g. dedicated=gpu:NoSchedule";

export function isTaintEffect(value: string): value is TaintEffect {
  return (TAINT_EFFECTS as readonly string[]).includes(value);
}

/**
 * Parses a comma-separated list of taints; "" gives none. Items are not trimmed and an empty
 * item is an error, as in Kubernetes. Throws OrchError `API_INVALID_TAINT` (category
 * invalid) naming the item and, when given, `subject`; a key and effect given twice is an
 * error too, as the API server would refuse the node.
 */
export function parseTaints(text: string, subject?: string): Taint[] {
  if (text === '') return [];
  const taints: Taint[] = [];
  const seen = new Set<string>();
  for (const item of text.split(',')) {
    const taint = parseTaint(item, subject);
    const identity = `${taint.key}:${taint.effect}`;
    if (seen.has(identity)) {
      throw invalid(subject, `taint ${quoteValue(item)} repeats key ${quoteValue(taint.key)} with effect ${taint.effect}; each key and effect pair may appear once`);
    }
    seen.add(identity);
    taints.push(taint);
  }
  return taints;
}

/** Parses one `key=value:effect` or `key:effect`. */
export function parseTaint(text: string, subject?: string): Taint {
  const parts = text.split(':');
  if (parts.length !== 2) {
    const reason = parts.length === 1 ? 'it has no effect' : "it has more than one ':'";
    throw invalid(subject, `invalid taint ${quoteValue(text)}: ${reason}; ${FORM}`);
  }
  const [keyValue = '', effect = ''] = parts;
  if (!isTaintEffect(effect)) {
    throw invalid(subject, `invalid taint ${quoteValue(text)}: unknown effect ${quoteValue(effect)}; ${FORM}`);
  }
  const kv = keyValue.split('=');
  if (kv.length > 2) throw invalid(subject, `invalid taint ${quoteValue(text)}: it has more than one '='; ${FORM}`);
  const [key = '', value = ''] = kv;
  const taint: Taint = value === '' ? { key, effect } : { key, value, effect };
  const problems = validateTaint(taint);
  if (problems.length > 0) {
    throw invalid(subject, `invalid taint ${quoteValue(text)}: ${problems.join('; ')}`);
  }
  return taint;
}

function invalid(subject: string | undefined, message: string): OrchError {
  return subject === undefined
    ? new OrchError(INVALID_TAINT, 'invalid', message)
    : new OrchError(INVALID_TAINT, 'invalid', `${subject}: ${message}`, { subject });
}

/**
 * The problems of one taint (empty when valid): the key must be a qualified name, the value
 * a label value, the effect one of TAINT_EFFECTS (checked too, for taints built from
 * decoded JSON).
 */
export function validateTaint(t: Taint): string[] {
  const problems = validateQualifiedName(t.key).map((p) => `key ${p}`);
  if (t.value !== undefined) problems.push(...validateLabelValue(t.value).map((p) => `value ${p}`));
  if (!isTaintEffect(t.effect)) {
    problems.push(`effect ${quoteValue(t.effect)} is not supported; use NoSchedule, PreferNoSchedule or NoExecute`);
  }
  return problems;
}

/** The text form, as Kubernetes prints a taint: `key=value:effect`, or `key:effect` without a value. */
export function formatTaint(t: Taint): string {
  return t.value === undefined || t.value === '' ? `${t.key}:${t.effect}` : `${t.key}=${t.value}:${t.effect}`;
}

/**
 * The taints the cluster's control loops manage (upstream's node.kubernetes.io/ keys, renamed):
 * the node lifecycle controller sets them from the node's conditions, the scheduler and the
 * taint eviction act on them, DefaultTolerationSeconds tolerates the first two for 300 s.
 */
export const TAINT_NODE_NOT_READY = 'node.orch.io/not-ready';
export const TAINT_NODE_UNREACHABLE = 'node.orch.io/unreachable';
export const TAINT_NODE_UNSCHEDULABLE = 'node.orch.io/unschedulable';
export const TAINT_NODE_MEMORY_PRESSURE = 'node.orch.io/memory-pressure';
export const TAINT_NODE_DISK_PRESSURE = 'node.orch.io/disk-pressure';
export const TAINT_NODE_PID_PRESSURE = 'node.orch.io/pid-pressure';
export const TAINT_NODE_NETWORK_UNAVAILABLE = 'node.orch.io/network-unavailable';
/** Set by an administrator on a node known to be down: its terminating pods are force-deleted. */
export const TAINT_NODE_OUT_OF_SERVICE = 'node.orch.io/out-of-service';
