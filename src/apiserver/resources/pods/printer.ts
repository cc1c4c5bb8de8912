/**
 * The pod columns of kubectl get pods, computed as upstream's printer does: READY (ready
 * containers, sidecars included, over all), STATUS (the phase, or the reason of the most telling
 * container: Init:1/2, Init:CrashLoopBackOff, ErrImagePull, Completed, Terminating...), RESTARTS
 * (with the age of the last restart), AGE; and IP, NODE, NOMINATED NODE, READINESS GATES wide.
 */
import { AGE_COLUMN, age, metaOf, str, type TableColumn, type WireObject } from '../../registry/index.js';
import { num, rec, recs, type Obj } from '../common/index.js';

interface Summary {
  readonly ready: string;
  readonly reason: string;
  readonly restarts: string;
}

const isSidecar = (c: Obj | undefined): boolean => c !== undefined && c.restartPolicy === 'Always';

function terminatedReason(t: Obj, prefix: string): string {
  if (str(t.reason) !== '') return `${prefix}${str(t.reason)}`;
  const signal = num(t.signal) ?? 0;
  return signal !== 0 ? `${prefix}Signal:${signal}` : `${prefix}ExitCode:${num(t.exitCode) ?? 0}`;
}

function later(a: string, b: unknown): string {
  return typeof b === 'string' && b !== '' && (a === '' || Date.parse(b) > Date.parse(a)) ? b : a;
}

/** The READY, STATUS and RESTARTS cells of a pod. */
export function summarize(pod: WireObject, now: Date): Summary {
  const spec = rec(pod.spec);
  const status = rec(pod.status);
  const initSpecs = new Map(recs(spec.initContainers).map((c) => [str(c.name), c]));
  const total = recs(spec.containers).length + [...initSpecs.values()].filter(isSidecar).length;
  let ready = 0;
  let restarts = 0;
  let sidecarRestarts = 0;
  let lastRestart = '';
  let reason = str(status.reason) !== '' ? str(status.reason) : str(status.phase);
  if (recs(status.conditions).some((c) => c.type === 'PodScheduled' && c.reason === 'SchedulingGated')) reason = 'SchedulingGated';
  let initializing = false;
  const inits = recs(status.initContainerStatuses);
  for (const [i, c] of inits.entries()) {
    restarts += num(c.restartCount) ?? 0;
    lastRestart = later(lastRestart, rec(rec(c.lastState).terminated).finishedAt);
    const sidecar = isSidecar(initSpecs.get(str(c.name)));
    if (sidecar) sidecarRestarts += num(c.restartCount) ?? 0;
    const state = rec(c.state);
    const terminated = state.terminated === undefined ? undefined : rec(state.terminated);
    const waiting = rec(state.waiting);
    if (terminated !== undefined && (num(terminated.exitCode) ?? 0) === 0) continue;
    if (sidecar && c.started === true) {
      if (c.ready === true) ready++;
      continue;
    }
    initializing = true;
    if (terminated !== undefined) reason = terminatedReason(terminated, 'Init:');
    else if (str(waiting.reason) !== '' && waiting.reason !== 'PodInitializing') reason = `Init:${str(waiting.reason)}`;
    else reason = `Init:${i}/${initSpecs.size}`;
    break;
  }
  const initialized = recs(status.conditions).some((c) => c.type === 'Initialized' && c.status === 'True');
  if (!initializing || initialized) {
    restarts = sidecarRestarts;
    lastRestart = '';
    let running = false;
    for (const c of [...recs(status.containerStatuses)].reverse()) {
      restarts += num(c.restartCount) ?? 0;
      lastRestart = later(lastRestart, rec(rec(c.lastState).terminated).finishedAt);
      const state = rec(c.state);
      const waiting = rec(state.waiting);
      const terminated = state.terminated === undefined ? undefined : rec(state.terminated);
      if (str(waiting.reason) !== '') reason = str(waiting.reason);
      else if (terminated !== undefined) reason = terminatedReason(terminated, '');
      else if (c.ready === true && state.running !== undefined) {
        running = true;
        ready++;
      }
    }
    if (reason === 'Completed' && running) {
      reason = recs(status.conditions).some((c) => c.type === 'Ready' && c.status === 'True') ? 'Running' : 'NotReady';
    }
  }
  const phase = str(status.phase);
  if (str(metaOf(pod).deletionTimestamp) !== '') {
    if (status.reason === 'NodeLost') reason = 'Unknown';
    else if (phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';
  }
  const restartsText = restarts !== 0 && lastRestart !== '' ? `${restarts} (${age(lastRestart, now)} ago)` : String(restarts);
  return { ready: `${ready}/${total}`, reason, restarts: restartsText };
}

const orNone = (value: string): string => (value === '' ? '<none>' : value);

function readinessGates(pod: WireObject): string {
  const gates = recs(rec(pod.spec).readinessGates);
  if (gates.length === 0) return '<none>';
  const conditions = recs(rec(pod.status).conditions);
  const met = gates.filter((g) => conditions.find((c) => c.type === g.conditionType)?.status === 'True').length;
  return `${met}/${gates.length}`;
}

export const POD_COLUMNS: readonly TableColumn[] = [
  { name: 'Ready', type: 'string', description: 'The number of ready containers over the number of containers.', priority: 0, cell: (p, now) => summarize(p, now).ready },
  { name: 'Status', type: 'string', description: 'The aggregate status of the containers in this pod.', priority: 0, cell: (p, now) => summarize(p, now).reason },
  { name: 'Restarts', type: 'string', description: 'The number of container restarts, with the time since the last one.', priority: 0, cell: (p, now) => summarize(p, now).restarts },
  AGE_COLUMN,
  { name: 'IP', type: 'string', description: 'The IP address of the pod.', priority: 1, cell: (p) => orNone(str(recs(rec(p.status).podIPs)[0]?.ip ?? rec(p.status).podIP)) },
  { name: 'Node', type: 'string', description: 'The node the pod is bound to.', priority: 1, cell: (p) => orNone(str(rec(p.spec).nodeName)) },
  { name: 'Nominated Node', type: 'string', description: 'The node the scheduler nominated for the pod.', priority: 1, cell: (p) => orNone(str(rec(p.status).nominatedNodeName)) },
  { name: 'Readiness Gates', type: 'string', description: 'The readiness gates that are met, over all of them.', priority: 1, cell: readinessGates },
];
