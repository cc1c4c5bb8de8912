/**
 * Pod garbage collection (upstream's pod-garbage-collector-controller), every 20 s and when a
 * node is deleted: pods bound to a node that no longer exists (checked against the registry, not
 * only the cache) are set Failed with DisruptionTarget (reason DeletionByPodGC) and removed;
 * deleting pods bound to no node are removed; deleting pods on a node that is not Ready and
 * carries node.orch.io/out-of-service are removed (upstream's rule), and so are deleting pods on
 * an unreachable node (Ready Unknown) once their grace period is over (ours: nothing else would
 * finish them); terminated pods beyond --terminated-pod-gc-threshold are removed oldest first.
 * Removal is a delete with gracePeriodSeconds 0 and the pod's uid as precondition.
 */
import type { Clock, Timer } from '../../../api/clock.js';
import { isConflict, isNotFound, messageOf } from '../../../api/errors.js';
import { TAINT_NODE_OUT_OF_SERVICE } from '../../../api/taints.js';
import { metaOf, nameOf, namespaceOf, str, type WireObject } from '../../registry/index.js';
import { rec, recs } from '../../resources/common/index.js';
import { setPodCondition } from '../../resources/pods/index.js';
import { objectKey, updateObject, type Informer, type Log, type ResourceClient } from '../client/index.js';

export interface PodGcOptions {
  readonly pods: Informer;
  readonly nodes: Informer;
  readonly podsClient: ResourceClient;
  /** Reads a node the cache does not have, before its pods are taken as orphans. */
  readonly nodesClient: ResourceClient;
  readonly clock: Clock;
  readonly log: Log;
  /** --terminated-pod-gc-threshold: terminated pods kept (0 or less: no limit). */
  readonly terminatedThreshold: number;
  /** Between passes (default 20 s, upstream's gcCheckPeriod). */
  readonly periodMs?: number;
}

const TERMINAL = new Set(['Succeeded', 'Failed']);

const phaseOf = (pod: WireObject): string => str(rec(pod.status).phase);
const deleting = (pod: WireObject): boolean => str(metaOf(pod).deletionTimestamp) !== '';
const nodeNameOf = (pod: WireObject): string => str(rec(pod.spec).nodeName);

function readyStatus(node: WireObject): string {
  return str(recs(rec(node.status).conditions).find((c) => c.type === 'Ready')?.status);
}

export class PodGarbageCollector {
  private readonly options: PodGcOptions;
  private timer: Timer | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private started = false;

  constructor(options: PodGcOptions) {
    this.options = options;
    options.nodes.addHandler({ deleted: () => { this.request(); } });
  }

  start(): void {
    this.started = true;
    this.request();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.timer?.cancel();
    await this.running;
  }

  /** Runs a pass now (or right after the one running). */
  request(): void {
    if (!this.started || this.closed) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.timer?.cancel();
    this.running = this.pass().catch((err: unknown) => {
      this.options.log(`pod gc: a pass failed: ${messageOf(err)}`);
    }).finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.request();
      }
    });
  }

  private arm(delayMs: number): void {
    if (this.closed) return;
    this.timer?.cancel();
    this.timer = this.options.clock.setTimer(delayMs, () => { this.request(); });
  }

  private async pass(): Promise<void> {
    const pods = this.options.pods.list();
    const now = this.options.clock.now();
    let next = this.options.periodMs ?? 20_000;
    await this.gcTerminated(pods);
    for (const pod of pods) {
      const nodeName = nodeNameOf(pod);
      if (nodeName === '') {
        if (deleting(pod)) await this.remove(pod, 'deleting and bound to no node');
        continue;
      }
      const node = this.options.nodes.get('', nodeName);
      if (node === undefined) {
        if (await this.nodeGone(nodeName)) await this.remove(pod, `its node ${nodeName} no longer exists`, { reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists' });
        continue;
      }
      if (!deleting(pod) || readyStatus(node) === 'True') continue;
      if (recs(rec(node.spec).taints).some((t) => t.key === TAINT_NODE_OUT_OF_SERVICE)) {
        await this.remove(pod, `deleting on node ${nodeName}, which is out of service`);
        continue;
      }
      if (readyStatus(node) !== 'Unknown') continue;
      const due = Date.parse(str(metaOf(pod).deletionTimestamp));
      if (due <= now) await this.remove(pod, `deleting past its grace period on the unreachable node ${nodeName}`);
      else next = Math.min(next, due - now);
    }
    this.arm(next);
  }

  /** Oldest first, the terminated pods beyond the threshold. */
  private async gcTerminated(pods: readonly WireObject[]): Promise<void> {
    const threshold = this.options.terminatedThreshold;
    if (threshold <= 0) return;
    const terminated = pods.filter((p) => TERMINAL.has(phaseOf(p)));
    if (terminated.length <= threshold) return;
    terminated.sort((a, b) => str(metaOf(a).creationTimestamp).localeCompare(str(metaOf(b).creationTimestamp)) || objectKey(a).localeCompare(objectKey(b)));
    for (const pod of terminated.slice(0, terminated.length - threshold)) {
      await this.remove(pod, `terminated, beyond the ${threshold} terminated pods kept`);
    }
  }

  private async nodeGone(name: string): Promise<boolean> {
    try {
      await this.options.nodesClient.get('', name);
      return false;
    } catch (err) {
      if (isNotFound(err)) return true;
      throw err;
    }
  }

  /** Sets a running pod Failed (with the condition, if any), then removes it. */
  private async remove(pod: WireObject, why: string, condition?: { reason: string; message: string }): Promise<void> {
    const [namespace, name, uid] = [namespaceOf(pod), nameOf(pod), str(metaOf(pod).uid)];
    try {
      if (!TERMINAL.has(phaseOf(pod))) {
        await updateObject(this.options.podsClient, namespace, name, (p) => {
          if (str(metaOf(p).uid) !== uid || TERMINAL.has(phaseOf(p))) return false;
          rec(p.status).phase = 'Failed';
          if (condition !== undefined) setPodCondition(p, { type: 'DisruptionTarget', status: 'True', ...condition }, this.options.clock.now());
          return true;
        }, { subresource: 'status', current: pod });
      }
      await this.options.podsClient.delete(namespace, name, { gracePeriodSeconds: 0, uid });
      this.options.log(`pod gc: removed pod ${namespace}/${name}: ${why}`);
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return;
      this.options.log(`pod gc: removing pod ${namespace}/${name} failed (tried again on the next pass): ${messageOf(err)}`);
    }
  }
}
