/**
 * What the views show, derived from API objects: a pod's row (its status as kubectl's STATUS
 * column computes it, readiness, restarts, requests), a node's health, an event's row. Rows
 * are small, immutable and compared by reference: the views redraw a row only when it changed.
 */
import { keyOf, timeOf, type Container, type ContainerStatus, type KubeEvent, type KubeObject, type Lease, type Node, type Pod } from './kube.js';
import { parseQuantity } from './quantity.js';

/** How a status looks: green, amber, red or grey. */
export type Tone = 'ok' | 'warn' | 'bad' | 'unknown';

export interface Requests {
  readonly cpu: number;
  readonly memory: number;
}

export interface PodRow {
  readonly key: string;
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  readonly node: string;
  readonly phase: string;
  /** What kubectl's STATUS column shows (Running, ContainerCreating, CrashLoopBackOff, Init:0/1...). */
  readonly status: string;
  readonly tone: Tone;
  readonly ready: number;
  readonly total: number;
  readonly restarts: number;
  readonly created: number | undefined;
  /** Counted against its node's allocatable (not Succeeded or Failed). */
  readonly active: boolean;
  readonly requests: Requests;
}

const BAD_REASONS = new Set([
  'CrashLoopBackOff', 'Error', 'ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'CreateContainerConfigError', 'CreateContainerError',
  'RunContainerError', 'OOMKilled', 'Evicted', 'Failed', 'ContainerCannotRun', 'StartError', 'DeadlineExceeded', 'UnexpectedAdmissionError',
  'OutOfcpu', 'OutOfmemory', 'NodeAffinity', 'Terminated', 'Shutdown',
]);

function toneOf(status: string, phase: string, ready: boolean): Tone {
  if (status === 'Unknown' || phase === 'Unknown') return 'unknown';
  if (BAD_REASONS.has(status) || status.startsWith('Init:') && BAD_REASONS.has(status.slice(5)) || /^(Init:)?(ExitCode|Signal):/.test(status)) return 'bad';
  if (status === 'Completed' || phase === 'Succeeded') return 'ok';
  if (phase === 'Failed') return 'bad';
  if (status === 'Running' && ready) return 'ok';
  return 'warn';
}

function terminatedText(t: NonNullable<ContainerStatus['state']>['terminated']): string {
  if (t === undefined) return '';
  if (t.reason !== undefined && t.reason !== '') return t.reason;
  if (t.signal !== undefined && t.signal !== 0) return `Signal:${t.signal}`;
  return `ExitCode:${t.exitCode ?? 0}`;
}

/** The STATUS column of `kubectl get pods` (upstream's pod printer, in short). */
export function podStatus(pod: Pod): string {
  const status = pod.status ?? {};
  let reason = status.reason !== undefined && status.reason !== '' ? status.reason : status.phase ?? 'Pending';
  const inits = pod.spec?.initContainers ?? [];
  const initStatuses = status.initContainerStatuses ?? [];
  let initializing = false;
  for (const [i, c] of initStatuses.entries()) {
    const sidecar = inits.find((s) => s.name === c.name)?.restartPolicy === 'Always';
    const t = c.state?.terminated;
    if (t !== undefined && t.exitCode === 0) continue;
    if (sidecar && c.started === true) continue;
    initializing = true;
    if (t !== undefined) reason = `Init:${terminatedText(t)}`;
    else if (c.state?.waiting?.reason !== undefined && c.state.waiting.reason !== '' && c.state.waiting.reason !== 'PodInitializing') reason = `Init:${c.state.waiting.reason}`;
    else reason = `Init:${i}/${inits.length}`;
    break;
  }
  if (!initializing) {
    let running = false;
    const containers = [...(status.containerStatuses ?? [])].reverse();
    for (const c of containers) {
      const waiting = c.state?.waiting?.reason;
      if (waiting !== undefined && waiting !== '') reason = waiting;
      else if (c.state?.terminated !== undefined) reason = terminatedText(c.state.terminated);
      else if (c.state?.running !== undefined && c.ready === true) running = true;
    }
    if (reason === 'Completed' && running) reason = 'Running';
  }
  if (pod.metadata?.deletionTimestamp !== undefined) reason = status.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return reason;
}

function sumRequests(containers: readonly Container[]): Requests {
  let cpu = 0;
  let memory = 0;
  for (const c of containers) {
    cpu += parseQuantity(c.resources?.requests?.cpu) ?? 0;
    memory += parseQuantity(c.resources?.requests?.memory) ?? 0;
  }
  return { cpu, memory };
}

/** The pod's effective requests, as the scheduler counts them: max(containers + sidecars, each init container) + overhead. */
export function podRequests(pod: Pod): Requests {
  const inits = pod.spec?.initContainers ?? [];
  const sidecars = inits.filter((c) => c.restartPolicy === 'Always');
  const main = sumRequests([...(pod.spec?.containers ?? []), ...sidecars]);
  let cpu = main.cpu;
  let memory = main.memory;
  for (const c of inits.filter((i) => i.restartPolicy !== 'Always')) {
    const one = sumRequests([c]);
    cpu = Math.max(cpu, one.cpu);
    memory = Math.max(memory, one.memory);
  }
  cpu += parseQuantity(pod.spec?.overhead?.cpu) ?? 0;
  memory += parseQuantity(pod.spec?.overhead?.memory) ?? 0;
  return { cpu, memory };
}

export function podRow(object: KubeObject): PodRow {
  const pod = object as Pod;
  const meta = pod.metadata ?? {};
  const statuses = pod.status?.containerStatuses ?? [];
  const total = pod.spec?.containers?.length ?? statuses.length;
  const ready = statuses.filter((c) => c.ready === true).length;
  const restarts = [...statuses, ...(pod.status?.initContainerStatuses ?? [])].reduce((n, c) => n + (c.restartCount ?? 0), 0);
  const phase = pod.status?.phase ?? 'Pending';
  const status = podStatus(pod);
  return {
    key: keyOf(pod), uid: meta.uid ?? '', namespace: meta.namespace ?? '', name: meta.name ?? '', node: pod.spec?.nodeName ?? '',
    phase, status, tone: toneOf(status, phase, total > 0 && ready === total), ready, total, restarts,
    created: timeOf(meta.creationTimestamp), active: phase !== 'Succeeded' && phase !== 'Failed', requests: podRequests(pod),
  };
}

export interface NodeHealth {
  /** The Ready condition's status: True, False or Unknown (no condition: Unknown). */
  readonly ready: string;
  /** Ready, NotReady or Unknown, with SchedulingDisabled when cordoned (kubectl's STATUS). */
  readonly label: string;
  readonly tone: Tone;
  readonly reason: string;
  readonly message: string;
  /** Conditions other than Ready that are True (MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable). */
  readonly pressures: readonly string[];
}

export function nodeHealth(node: Node): NodeHealth {
  const conditions = node.status?.conditions ?? [];
  const readyCondition = conditions.find((c) => c.type === 'Ready');
  const ready = readyCondition?.status ?? 'Unknown';
  const base = ready === 'True' ? 'Ready' : ready === 'False' ? 'NotReady' : 'Unknown';
  const pressures = conditions.filter((c) => c.type !== 'Ready' && c.status === 'True').map((c) => c.type ?? '');
  const tone: Tone = ready === 'Unknown' ? 'unknown' : ready === 'False' ? 'bad' : pressures.length > 0 || node.spec?.unschedulable === true ? 'warn' : 'ok';
  return {
    ready, label: node.spec?.unschedulable === true ? `${base},SchedulingDisabled` : base, tone,
    reason: readyCondition?.reason ?? '', message: readyCondition?.message ?? '', pressures,
  };
}

/** A node's resource: capacity, allocatable and the requests of its active pods, in base units. */
export interface ResourceUse {
  readonly capacity: number | undefined;
  readonly allocatable: number | undefined;
  readonly requested: number;
}

/** The requests and count of the active pods of each node, in one pass over the pods. */
export function requestsByNode(pods: Iterable<PodRow>): Map<string, { cpu: number; memory: number; count: number }> {
  const sums = new Map<string, { cpu: number; memory: number; count: number }>();
  for (const p of pods) {
    if (p.node === '' || !p.active) continue;
    let sum = sums.get(p.node);
    if (sum === undefined) {
      sum = { cpu: 0, memory: 0, count: 0 };
      sums.set(p.node, sum);
    }
    sum.cpu += p.requests.cpu;
    sum.memory += p.requests.memory;
    sum.count++;
  }
  return sums;
}

export function nodeResources(node: Node, sum: { cpu: number; memory: number; count: number } | undefined): { cpu: ResourceUse; memory: ResourceUse; pods: ResourceUse } {
  const of = (resource: string, requested: number): ResourceUse => ({
    capacity: parseQuantity(node.status?.capacity?.[resource]), allocatable: parseQuantity(node.status?.allocatable?.[resource]), requested,
  });
  return { cpu: of('cpu', sum?.cpu ?? 0), memory: of('memory', sum?.memory ?? 0), pods: of('pods', sum?.count ?? 0) };
}

/** Milliseconds since the lease was last renewed, and whether that is past its duration. */
export function leaseAge(lease: Lease | undefined, now: number): { ageMs: number | undefined; expired: boolean } {
  const renewed = timeOf(lease?.spec?.renewTime);
  if (renewed === undefined) return { ageMs: undefined, expired: false };
  const ageMs = now - renewed;
  return { ageMs, expired: ageMs > (lease?.spec?.leaseDurationSeconds ?? 40) * 1000 };
}

export interface EventRow {
  readonly key: string;
  readonly namespace: string;
  readonly type: string;
  readonly reason: string;
  readonly note: string;
  readonly kind: string;
  readonly objectName: string;
  readonly objectNamespace: string;
  readonly objectUid: string;
  readonly source: string;
  readonly count: number;
  /** When it was last seen (ms), for ordering. */
  readonly last: number;
  /** Lowercase text the filter searches. */
  readonly text: string;
}

export function eventRow(object: KubeObject): EventRow {
  const e = object as KubeEvent;
  const meta = e.metadata ?? {};
  const last = timeOf(e.series?.lastObservedTime) ?? timeOf(e.deprecatedLastTimestamp) ?? timeOf(e.eventTime) ?? timeOf(meta.creationTimestamp) ?? 0;
  const regarding = e.regarding ?? {};
  const row = {
    key: keyOf(e), namespace: meta.namespace ?? '', type: e.type ?? 'Normal', reason: e.reason ?? '', note: e.note ?? '',
    kind: regarding.kind ?? '', objectName: regarding.name ?? '', objectNamespace: regarding.namespace ?? '', objectUid: regarding.uid ?? '',
    source: e.reportingController ?? e.deprecatedSource?.component ?? '', count: e.series?.count ?? e.deprecatedCount ?? 1, last,
  };
  return { ...row, text: [row.namespace, row.type, row.reason, row.note, row.kind, row.objectName, row.source].join(' ').toLowerCase() };
}

/** The latest event of each object, by `namespace/name` of the object (`name` for cluster-scoped ones). */
export function latestEvents(events: Iterable<EventRow>, kind: string): Map<string, EventRow> {
  const latest = new Map<string, EventRow>();
  for (const e of events) {
    if (e.kind !== kind) continue;
    const key = e.objectNamespace === '' ? e.objectName : `${e.objectNamespace}/${e.objectName}`;
    const seen = latest.get(key);
    if (seen === undefined || seen.last <= e.last) latest.set(key, e);
  }
  return latest;
}
