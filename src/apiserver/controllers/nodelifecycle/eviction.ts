/**
 * Taint-based eviction (upstream's taint-eviction-controller): a pod bound to a node with
 * NoExecute taints is deleted at once when it does not tolerate one of them, and after the
 * shortest tolerationSeconds of the tolerations that match them otherwise (never when one of
 * those tolerates forever), counted from when this controller first saw it so tainted. The
 * eviction is cancelled when the taints go (or the pod goes). Before deleting (a graceful delete,
 * with the pod's uid as precondition) the pod gets the condition DisruptionTarget True (reason
 * DeletionByTaintManager) and a TaintManagerEviction event.
 */
import type { Pod, Taint, Toleration } from 'kubernetes-types/core/v1.js';
import type { Clock, Timer } from '../../../api/clock.js';
import { isConflict, isNotFound, messageOf } from '../../../api/errors.js';
import { toleratesTaint } from '../../../api/pod/index.js';
import { metaOf, nameOf, namespaceOf, str, type WireObject } from '../../registry/index.js';
import { rec, recs } from '../../resources/common/index.js';
import { setPodCondition } from '../../resources/pods/index.js';
import { objectKey, updateObject, type EventRecorder, type Informer, type Log, type ResourceClient } from '../client/index.js';

export interface TaintEvictionOptions {
  readonly nodes: Informer;
  readonly pods: Informer;
  readonly podsClient: ResourceClient;
  readonly recorder: EventRecorder;
  readonly clock: Clock;
  readonly log: Log;
}

interface Scheduled {
  readonly timer: Timer;
  readonly at: number;
  /** When the eviction was first planned: later plans count from it. */
  readonly since: number;
}

function noExecuteTaints(node: WireObject | undefined): Taint[] {
  return recs(rec(node?.spec).taints).filter((t) => t.effect === 'NoExecute') as unknown as Taint[];
}

/** Upstream getMinTolerationTime: -1 for forever, else the shortest tolerationSeconds (0 when any is not positive), in ms. */
export function minTolerationMs(tolerations: readonly Toleration[]): number {
  if (tolerations.length === 0) return 0;
  let min = Infinity;
  for (const t of tolerations) {
    if (t.tolerationSeconds === undefined) continue;
    if (t.tolerationSeconds <= 0) return 0;
    min = Math.min(min, t.tolerationSeconds);
  }
  return min === Infinity ? -1 : min * 1000;
}

/** When (ms from now) the pod must go: -1 never, 0 now. */
export function evictionDelayMs(pod: WireObject, taints: readonly Taint[]): number {
  if (taints.length === 0) return -1;
  const tolerations = (pod as Pod).spec?.tolerations ?? [];
  if (taints.some((taint) => !tolerations.some((t) => toleratesTaint(t, taint)))) return 0;
  return minTolerationMs(tolerations.filter((t) => taints.some((taint) => toleratesTaint(t, taint))));
}

export class TaintEvictionController {
  private readonly options: TaintEvictionOptions;
  private readonly scheduled = new Map<string, Scheduled>();
  private started = false;
  private closed = false;

  constructor(options: TaintEvictionOptions) {
    this.options = options;
    options.nodes.addHandler({
      added: (node) => { this.nodeChanged(node); },
      updated: (old, node) => {
        if (JSON.stringify(noExecuteTaints(old)) !== JSON.stringify(noExecuteTaints(node))) this.nodeChanged(node);
      },
      deleted: (node) => { this.nodeChanged(node); },
    });
    options.pods.addHandler({
      added: (pod) => { this.process(pod); },
      updated: (_old, pod) => { this.process(pod); },
      deleted: (pod) => { this.cancel(objectKey(pod), pod, false); },
    });
  }

  start(): void {
    this.started = true;
    for (const pod of this.options.pods.list()) this.process(pod);
  }

  close(): Promise<void> {
    this.closed = true;
    for (const s of this.scheduled.values()) s.timer.cancel();
    this.scheduled.clear();
    return Promise.resolve();
  }

  private nodeChanged(node: WireObject): void {
    const name = nameOf(node);
    for (const pod of this.options.pods.list()) if (str(rec(pod.spec).nodeName) === name) this.process(pod);
  }

  private process(pod: WireObject): void {
    if (!this.started || this.closed) return;
    const key = objectKey(pod);
    const nodeName = str(rec(pod.spec).nodeName);
    if (nodeName === '' || str(metaOf(pod).deletionTimestamp) !== '') {
      this.cancel(key, pod, false);
      return;
    }
    const delay = evictionDelayMs(pod, noExecuteTaints(this.options.nodes.get('', nodeName)));
    if (delay < 0) {
      this.cancel(key, pod, true);
      return;
    }
    const now = this.options.clock.now();
    const existing = this.scheduled.get(key);
    const since = existing?.since ?? now;
    const at = Math.max(now, since + delay);
    if (existing !== undefined && existing.at <= at) return;
    existing?.timer.cancel();
    const timer = this.options.clock.setTimer(at - now, () => {
      this.scheduled.delete(key);
      this.evict(pod).catch((err: unknown) => {
        this.options.log(`taint eviction: deleting pod ${key} failed: ${messageOf(err)}`);
      });
    });
    this.scheduled.set(key, { timer, at, since });
  }

  private cancel(key: string, pod: WireObject, event: boolean): void {
    const existing = this.scheduled.get(key);
    if (existing === undefined) return;
    existing.timer.cancel();
    this.scheduled.delete(key);
    if (event) this.options.recorder.record(pod, 'Normal', 'TaintManagerEviction', 'Deleting', `Cancelling deletion of Pod ${key}`);
  }

  private async evict(seen: WireObject): Promise<void> {
    const [namespace, name] = [namespaceOf(seen), nameOf(seen)];
    const pod = this.options.pods.get(namespace, name) ?? seen;
    if (str(metaOf(pod).uid) !== str(metaOf(seen).uid) || str(metaOf(pod).deletionTimestamp) !== '') return;
    this.options.recorder.record(pod, 'Normal', 'TaintManagerEviction', 'Deleting', `Marking for deletion Pod ${namespace}/${name}`);
    try {
      await updateObject(this.options.podsClient, namespace, name, (p) => str(metaOf(p).uid) === str(metaOf(pod).uid)
        && setPodCondition(p, { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager', message: 'Taint manager: deleting due to NoExecute taint' }, this.options.clock.now()),
      { subresource: 'status', current: pod });
      await this.options.podsClient.delete(namespace, name, { uid: str(metaOf(pod).uid) });
    } catch (err) {
      // Gone already, or another pod of that name now: nothing to evict.
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
  }
}
