/**
 * The events.orch.io/v1 Event objects the recorder writes, and the references it writes them
 * about: how an Event is named (`<regarding name>.<hex nanoseconds>`, as upstream), where it
 * lives (the regarding object's namespace, `default` for cluster-scoped objects), its
 * microsecond timestamps, the isomorphism key that folds repeats into a series, and the
 * references to a Pod (optionally one of its containers) and to the Node.
 */
import type { NodePod } from '../../api/pod/index.js';

export const EVENTS_API_VERSION = 'events.orch.io/v1';
/** Where events about cluster-scoped objects (the Node) are written, as upstream. */
export const CLUSTER_EVENT_NAMESPACE = 'default';
/** The server's limits (upstream's events.k8s.io/v1 validation): reason and action 128 characters, note 1024 bytes. */
export const MAX_SHORT_FIELD = 128;
export const MAX_NOTE_BYTES = 1024;

export type EventType = 'Normal' | 'Warning';
export const EVENT_TYPES: readonly EventType[] = ['Normal', 'Warning'];

/** The object an event is about (core/v1 ObjectReference). */
export interface EventReference {
  readonly kind: string;
  readonly name: string;
  /** Empty or absent for cluster-scoped objects. */
  readonly namespace?: string;
  readonly uid?: string;
  readonly apiVersion?: string;
  readonly resourceVersion?: string;
  /** A part of the object, e.g. `spec.containers{app}`. */
  readonly fieldPath?: string;
}

export interface EventSeries {
  count: number;
  /** MicroTime of the last occurrence. */
  lastObservedTime: string;
}

export interface EventObject {
  readonly apiVersion: typeof EVENTS_API_VERSION;
  readonly kind: 'Event';
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly eventTime: string;
  series?: EventSeries;
  readonly reportingController: string;
  readonly reportingInstance: string;
  readonly action: string;
  readonly reason: string;
  readonly regarding: EventReference;
  readonly note: string;
  readonly type: EventType;
}

/** Which list of the pod spec a container is in (the fieldPath of its reference). */
export type ContainerList = 'containers' | 'initContainers' | 'ephemeralContainers';

/**
 * The reference to a pod (kind Pod, apiVersion v1, namespace, name, uid, resourceVersion), or
 * to one of its containers with fieldPath `spec.<list>{<name>}` as upstream's kubelet writes.
 */
export function podReference(pod: Pick<NodePod, 'metadata'>, container?: { readonly name: string; readonly list?: ContainerList }): EventReference {
  const meta = pod.metadata;
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    name: meta.name,
    namespace: meta.namespace,
    uid: meta.uid,
    ...(meta.resourceVersion !== undefined ? { resourceVersion: meta.resourceVersion } : {}),
    ...(container !== undefined ? { fieldPath: `spec.${container.list ?? 'containers'}{${container.name}}` } : {}),
  };
}

/** The reference to this node as upstream's kubelet builds it: kind Node, uid = the node's name. */
export function nodeReference(nodeName: string): EventReference {
  return { kind: 'Node', name: nodeName, uid: nodeName };
}

/** Nanoseconds since the epoch from milliseconds (exact to the microsecond). */
export function epochNanos(ms: number): bigint {
  const whole = Math.floor(ms);
  const micros = Math.min(999, Math.floor((ms - whole) * 1000 + 1e-6));
  return BigInt(whole) * 1_000_000n + BigInt(micros) * 1000n;
}

/** Cuts `text` to at most `max` UTF-8 bytes without splitting a character. */
export function truncateBytes(text: string, max: number): string {
  if (Buffer.byteLength(text, 'utf8') <= max) return text;
  let out = '';
  let bytes = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (bytes + n > max) break;
    out += ch;
    bytes += n;
  }
  return out;
}

/** `ns/name` of the regarding object, for logs. */
export function objectKey(ref: EventReference): string {
  return ref.namespace !== undefined && ref.namespace !== '' ? `${ref.namespace}/${ref.name}` : ref.name;
}

/** The same regarding object, reason, action, reporter, type and note: repeats of one event. */
export function isomorphismKey(e: EventObject): string {
  const r = e.regarding;
  return JSON.stringify([
    e.type, e.action, e.reason, e.reportingController, e.reportingInstance, e.note,
    r.kind, r.namespace ?? '', r.name, r.uid ?? '', r.apiVersion ?? '', r.resourceVersion ?? '', r.fieldPath ?? '',
  ]);
}

/** The collection path of events in `namespace`. */
export function eventsPath(namespace: string): string {
  return `/apis/events.orch.io/v1/namespaces/${encodeURIComponent(namespace)}/events`;
}

export interface NewEvent {
  readonly regarding: EventReference;
  readonly type: EventType;
  readonly reason: string;
  readonly action: string;
  readonly note: string;
  readonly reportingController: string;
  readonly reportingInstance: string;
}

/**
 * A new single event (no series) named `<regarding name>.<hex nanos>`; reason and action are cut
 * to 128 characters and the note to 1024 bytes so that the server does not reject it.
 */
export function buildEvent(input: NewEvent, nanos: bigint, eventTime: string): EventObject {
  const ns = input.regarding.namespace;
  return {
    apiVersion: EVENTS_API_VERSION,
    kind: 'Event',
    metadata: { name: `${input.regarding.name}.${nanos.toString(16)}`, namespace: ns !== undefined && ns !== '' ? ns : CLUSTER_EVENT_NAMESPACE },
    eventTime,
    reportingController: input.reportingController,
    reportingInstance: input.reportingInstance.slice(0, MAX_SHORT_FIELD),
    action: input.action.slice(0, MAX_SHORT_FIELD),
    reason: input.reason.slice(0, MAX_SHORT_FIELD),
    regarding: { ...input.regarding },
    note: truncateBytes(input.note, MAX_NOTE_BYTES),
    type: input.type,
  };
}

/** A deep copy (events are plain JSON). */
export function copyEvent(e: EventObject): EventObject {
  return {
    ...e,
    metadata: { ...e.metadata },
    regarding: { ...e.regarding },
    ...(e.series !== undefined ? { series: { ...e.series } } : {}),
  };
}
