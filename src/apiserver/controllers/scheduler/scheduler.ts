/**
 * The scheduling loop (upstream's kube-scheduler with its default profile, reduced): the pods
 * informer feeds the queue with unbound pods of the default scheduler name (not deleting, not
 * terminal, without scheduling gates) and the cache with bound ones; the nodes informer feeds
 * the cache. Each popped pod is filtered against the known nodes until enough feasible ones are
 * found (all of a small cluster; sampling.ts), those scored, and
 * the pod assumed on a random one among the best while its binding is written (up to 16 in
 * flight). A pod that fits nowhere gets PodScheduled False (reason Unschedulable, the fit error
 * as message) and a FailedScheduling event, and waits in the queue for a change of nodes or of
 * bound pods. A bound pod gets a Scheduled event. With InPlacePodVerticalScaling a bound pod
 * counts at the larger of its requests and allocatedResources, and one that holds less after a
 * resize is such a change.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock } from '../../../api/clock.js';
import { isNotFound, messageOf } from '../../../api/errors.js';
import { DEFAULT_SCHEDULER_NAME, type PodRequestOptions } from '../../../api/pod/index.js';
import { jsonEqual } from '../../patch/index.js';
import { metaOf, nameOf, namespaceOf, str, type WireObject } from '../../registry/index.js';
import { rec, recs } from '../../resources/common/index.js';
import { podCondition, setPodCondition } from '../../resources/pods/index.js';
import { updateObject, type EventRecorder, type Informer, type Log, type ResourceClient } from '../client/index.js';
import { SchedulerCache } from './cache.js';
import { filterNode, fitErrorMessage, NO_NODES_AVAILABLE, preFilterFitErrorMessage, scoreNode, type FilterFailure } from './framework.js';
import { podInfo, type PodInfo } from './pod-info.js';
import { SchedulingQueue } from './queue.js';
import { feasibleNodesToFind } from './sampling.js';
import type { SchedulerVolumes, VolumeReservation } from './volumes.js';

export interface Binder {
  /** Binds the pod (pods/binding); throws the registry's StatusError. */
  bind(namespace: string, name: string, uid: string, node: string): Promise<void>;
}

export interface SchedulerOptions {
  readonly pods: Informer;
  readonly nodes: Informer;
  /** Writes PodScheduled False on pods that fit nowhere. */
  readonly podsClient: ResourceClient;
  readonly binder: Binder;
  /** The volume plugins (claims, volumes, attach limits). */
  readonly volumes: SchedulerVolumes;
  readonly recorder: EventRecorder;
  readonly clock: Clock;
  readonly log: Log;
  /** The pods' spec.schedulerName this scheduler takes (default `default-scheduler`). */
  readonly schedulerName?: string;
  /** [0, 1): the pick among equally scored nodes (default Math.random). */
  readonly random?: () => number;
  readonly maxBindsInFlight?: number;
  /** The queue's back-off (default 1 s doubling to 10 s). */
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /**
   * The InPlacePodVerticalScaling gate: a pod counts on its node at the larger of its containers'
   * requests and allocatedResources (pod-info.ts), and a bound pod whose count went down lets
   * waiting pods try again (upstream: an assigned pod resized down moves them all).
   */
  readonly inPlacePodVerticalScaling?: boolean;
}

const TERMINAL = new Set(['Succeeded', 'Failed']);

function terminal(pod: WireObject): boolean {
  return TERMINAL.has(str(rec(pod.status).phase));
}

function assignedNode(pod: WireObject): string {
  return terminal(pod) ? '' : str(rec(pod.spec).nodeName);
}

/** What the scheduler writes on a node change that may let waiting pods fit. */
function schedulingFacts(node: WireObject): unknown {
  return { labels: metaOf(node).labels, spec: node.spec, allocatable: rec(node.status).allocatable, capacity: rec(node.status).capacity };
}

/** The pod now holds less of some resource than it did (requests, or the non-zero amounts the scores use). */
function holdsLess(now: PodInfo, before: PodInfo): boolean {
  if (now.nonZeroCpu < before.nonZeroCpu || now.nonZeroMemory < before.nonZeroMemory) return true;
  return [...before.requests].some(([resource, amount]) => (now.requests.get(resource) ?? 0) < amount);
}

export class Scheduler {
  private readonly options: SchedulerOptions;
  private readonly cache = new SchedulerCache();
  private readonly queue: SchedulingQueue;
  private readonly schedulerName: string;
  private started = false;
  private closed = false;
  private draining = false;
  private kickAgain = false;
  private inFlight = 0;
  /** Where the next cycle starts filtering (sampling.ts). */
  private nextStartNode = 0;
  private readonly binds = new Set<Promise<void>>();
  private readonly podOptions: PodRequestOptions;

  constructor(options: SchedulerOptions) {
    this.options = options;
    this.podOptions = { inPlacePodVerticalScaling: options.inPlacePodVerticalScaling === true };
    this.schedulerName = options.schedulerName ?? DEFAULT_SCHEDULER_NAME;
    this.queue = new SchedulingQueue({
      clock: options.clock,
      onReady: () => { this.kick(); },
      ...(options.initialBackoffMs === undefined ? {} : { initialBackoffMs: options.initialBackoffMs }),
      ...(options.maxBackoffMs === undefined ? {} : { maxBackoffMs: options.maxBackoffMs }),
    });
    options.nodes.addHandler({
      added: (node) => {
        this.cache.setNode(node);
        this.queue.moveAll();
      },
      updated: (old, node) => {
        this.cache.setNode(node);
        if (!jsonEqual(schedulingFacts(old), schedulingFacts(node))) this.queue.moveAll();
      },
      deleted: (node) => { this.cache.removeNode(nameOf(node)); },
    });
    options.volumes.onChange(() => { this.queue.moveAll(); });
    options.pods.addHandler({
      added: (pod) => { this.observe(pod, undefined); },
      updated: (old, pod) => { this.observe(pod, old); },
      deleted: (pod) => {
        const info = podInfo(pod, this.podOptions);
        this.queue.delete(info.key);
        if (this.cache.removePod(info.key)) this.queue.moveAll();
      },
    });
  }

  /** Pods the queue holds (waiting, backing off or being scheduled). */
  get pending(): number {
    return this.queue.size;
  }

  /** Starts scheduling (call once the informers listed: decisions need the nodes). */
  start(): void {
    this.started = true;
    this.kick();
  }

  /** Stops; bindings in flight finish. */
  async close(): Promise<void> {
    this.closed = true;
    this.queue.close();
    await Promise.allSettled([...this.binds]);
  }

  private responsible(pod: WireObject): boolean {
    const spec = rec(pod.spec);
    const name = str(spec.schedulerName);
    return str(spec.nodeName) === '' && (name === '' ? DEFAULT_SCHEDULER_NAME : name) === this.schedulerName
      && str(metaOf(pod).deletionTimestamp) === '' && !terminal(pod) && recs(spec.schedulingGates).length === 0;
  }

  private observe(pod: WireObject, old: WireObject | undefined): void {
    const info = podInfo(pod, this.podOptions);
    const node = assignedNode(pod);
    if (node !== '') {
      this.queue.delete(info.key);
      const before = this.cache.counted(info.key);
      this.cache.addPod(info, node);
      // A resize (spec or allocatedResources) that lowered what the pod holds frees room on its node.
      if (before !== undefined && this.podOptions.inPlacePodVerticalScaling === true && holdsLess(info, before)) this.queue.moveAll();
      return;
    }
    // Finished (frees its node), or neither ours nor bound.
    if (this.cache.removePod(info.key)) this.queue.moveAll();
    if (!this.responsible(pod)) {
      this.queue.delete(info.key);
      return;
    }
    // A change of the status only (ours: PodScheduled False) gives a waiting pod no new chance.
    const relevant = old === undefined || !jsonEqual(old.spec, pod.spec) || !jsonEqual(metaOf(old).labels, metaOf(pod).labels);
    this.queue.addOrUpdate(info, relevant);
  }

  private kick(): void {
    if (!this.started || this.closed) return;
    if (this.draining) {
      // A pod may become ready after the loop found the queue empty but before it ended.
      this.kickAgain = true;
      return;
    }
    this.draining = true;
    this.drain().catch((err: unknown) => {
      this.options.log(`scheduler: the scheduling loop failed: ${messageOf(err)}`);
    }).finally(() => {
      this.draining = false;
      if (this.kickAgain) {
        this.kickAgain = false;
        this.kick();
      }
    });
  }

  private async drain(): Promise<void> {
    const max = this.options.maxBindsInFlight ?? 16;
    let count = 0;
    while (!this.closed && this.inFlight < max) {
      const pod = this.queue.pop();
      if (pod === undefined) return;
      this.scheduleOne(pod);
      // Let the watches deliver (bindings, new nodes) between decisions.
      if (++count % 8 === 0) await nextTurn();
    }
  }

  private scheduleOne(queued: PodInfo): void {
    const [namespace, name] = [namespaceOf(queued.object), nameOf(queued.object)];
    const current = this.options.pods.get(namespace, name);
    if (current === undefined || !this.responsible(current)) {
      this.queue.done(queued.key);
      return;
    }
    const pod = current === queued.object ? queued : podInfo(current, this.podOptions);
    const nodes = this.cache.candidates();
    if (nodes.length === 0) {
      this.unschedulable(pod, NO_NODES_AVAILABLE);
      return;
    }
    const volumes = this.options.volumes.cycle(pod, (claim) => this.cache.usersOfClaim(claim));
    if (volumes.kind === 'unresolvable') {
      this.unschedulable(pod, preFilterFitErrorMessage(pod, nodes.length, volumes.message));
      return;
    }
    if (volumes.kind === 'error') {
      this.schedulingError(pod, volumes.message);
      return;
    }
    const failures: FilterFailure[] = [];
    let best: string[] = [];
    let bestScore = -1;
    const toFind = feasibleNodesToFind(nodes.length);
    let feasible = 0;
    let processed = 0;
    for (; processed < nodes.length && feasible < toFind; processed++) {
      const node = nodes[(this.nextStartNode + processed) % nodes.length];
      if (node === undefined) continue;
      const failure = filterNode(pod, node) ?? (volumes.kind === 'check' ? volumes.filter(node) : undefined);
      if (failure !== undefined) {
        failures.push(failure);
        continue;
      }
      feasible++;
      const score = scoreNode(pod, node);
      if (score > bestScore) {
        bestScore = score;
        best = [node.name];
      } else if (score === bestScore) {
        best.push(node.name);
      }
    }
    this.nextStartNode = (this.nextStartNode + processed) % nodes.length;
    if (best.length === 0) {
      this.unschedulable(pod, fitErrorMessage(pod, nodes.length, failures));
      return;
    }
    const chosen = best[Math.min(best.length - 1, Math.floor((this.options.random ?? Math.random)() * best.length))] ?? '';
    const reservation = volumes.kind === 'check' ? volumes.reserve(chosen) : undefined;
    this.cache.assume(pod, chosen);
    this.inFlight++;
    const bind = this.bind(pod, chosen, reservation).finally(() => {
      this.inFlight--;
      this.binds.delete(bind);
      this.kick();
    });
    this.binds.add(bind);
  }

  private async bind(pod: PodInfo, node: string, volumes: VolumeReservation | undefined): Promise<void> {
    const [namespace, name] = [namespaceOf(pod.object), nameOf(pod.object)];
    let stage = 'running PreBind plugin "VolumeBinding"';
    try {
      await volumes?.preBind();
      stage = 'binding rejected';
      await this.options.binder.bind(namespace, name, pod.uid, node);
      this.queue.done(pod.key);
      this.options.recorder.record(pod.object, 'Normal', 'Scheduled', 'Binding', `Successfully assigned ${namespace}/${name} to ${node}`);
    } catch (err) {
      volumes?.unreserve();
      this.cache.forget(pod.key);
      if (isNotFound(err)) {
        this.queue.delete(pod.key);
        return;
      }
      this.options.log(`scheduler: binding ${namespace}/${name} to ${node} failed (will retry): ${messageOf(err)}`);
      this.options.recorder.record(pod.object, 'Warning', 'FailedScheduling', 'Scheduling', `${stage}: ${messageOf(err)}`);
      this.queue.retry(pod.key);
    }
  }

  /** A scheduling error (not a fit error): FailedScheduling, PodScheduled False with reason SchedulerError, tried again after its back-off. */
  private schedulingError(pod: PodInfo, message: string): void {
    this.queue.retry(pod.key);
    this.options.recorder.record(pod.object, 'Warning', 'FailedScheduling', 'Scheduling', message);
    this.writeCondition(pod, 'SchedulerError', message);
  }

  private writeCondition(pod: PodInfo, reason: string, message: string): void {
    const condition = podCondition(pod.object, 'PodScheduled');
    if (condition?.status === 'False' && condition.reason === reason && condition.message === message) return;
    const [namespace, name] = [namespaceOf(pod.object), nameOf(pod.object)];
    updateObject(this.options.podsClient, namespace, name, (p) => this.responsible(p)
      && setPodCondition(p, { type: 'PodScheduled', status: 'False', reason, message }, this.options.clock.now()), { subresource: 'status', current: pod.object })
      .catch((err: unknown) => {
        this.options.log(`scheduler: writing PodScheduled False on ${namespace}/${name} failed: ${messageOf(err)}`);
      });
  }

  private unschedulable(pod: PodInfo, message: string): void {
    this.queue.unschedulable(pod.key);
    this.options.recorder.record(pod.object, 'Warning', 'FailedScheduling', 'Scheduling', message);
    this.writeCondition(pod, 'Unschedulable', message);
  }
}
