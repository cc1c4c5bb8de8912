/**
 * The node lifecycle controller (upstream's node-lifecycle-controller, without zones): it notes
 * when it last saw each node's agent alive — a new lastHeartbeatTime of the Ready condition, or
 * a renewal of the node's Lease in orch-node-lease — on its own clock. Every monitor period, a
 * node not seen alive for the grace period (--node-monitor-grace-period, 40 s; a node that never
 * posted a Ready condition: --node-startup-grace-period, 60 s) gets its Ready, MemoryPressure,
 * DiskPressure and PIDPressure conditions set to Unknown (reason NodeStatusUnknown, message
 * "Nodeagent stopped posting node status."; NodeStatusNeverUpdated and "Nodeagent never posted
 * node status." for a condition it never posted). On every change of a node its managed taints
 * follow its conditions (taints.ts); when its Ready condition leaves True, its pods get Ready
 * False and events say so (NodeNotReady).
 */
import type { Clock, Timer } from '../../../api/clock.js';
import { messageOf } from '../../../api/errors.js';
import { formatTime } from '../../../api/time.js';
import { metaOf, nameOf, namespaceOf, str, type WireObject } from '../../registry/index.js';
import { rec, recs } from '../../resources/common/index.js';
import { podCondition, setPodCondition } from '../../resources/pods/index.js';
import { updateObject, type EventRecorder, type Informer, type Log, type ResourceClient } from '../client/index.js';
import { conditionStatus, reconciledTaints } from './taints.js';

const WATCHED_CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];

export interface NodeLifecycleOptions {
  readonly nodes: Informer;
  /** Leases of orch-node-lease (one per node, named after it). */
  readonly leases: Informer;
  readonly pods: Informer;
  readonly nodesClient: ResourceClient;
  readonly podsClient: ResourceClient;
  readonly recorder: EventRecorder;
  readonly clock: Clock;
  readonly log: Log;
  /** --node-monitor-period (default 5 s). */
  readonly monitorPeriodMs?: number;
  /** --node-monitor-grace-period (default 40 s). */
  readonly gracePeriodMs?: number;
  /** --node-startup-grace-period (default 60 s). */
  readonly startupGracePeriodMs?: number;
}

interface Health {
  /** When the agent was last seen alive (this controller's clock). */
  probeMs: number;
  heartbeat: string;
  renew: string;
}

function readyHeartbeat(node: WireObject): string {
  return str(recs(rec(node.status).conditions).find((c) => c.type === 'Ready')?.lastHeartbeatTime);
}

export class NodeLifecycleController {
  private readonly options: NodeLifecycleOptions;
  private readonly health = new Map<string, Health>();
  /** The Ready status each node had when last reconciled. */
  private readonly lastReady = new Map<string, string>();
  private readonly dirty = new Set<string>();
  private timer: Timer | undefined;
  private started = false;
  private closed = false;
  private working: Promise<void> | undefined;

  constructor(options: NodeLifecycleOptions) {
    this.options = options;
    options.nodes.addHandler({
      added: (node) => { this.observeNode(node); },
      updated: (_old, node) => { this.observeNode(node); },
      deleted: (node) => {
        this.health.delete(nameOf(node));
        this.lastReady.delete(nameOf(node));
      },
    });
    options.leases.addHandler({
      added: (lease) => { this.observeLease(lease); },
      updated: (_old, lease) => { this.observeLease(lease); },
    });
  }

  /** Starts the monitor (call once the informers listed). */
  start(): void {
    this.started = true;
    for (const node of this.options.nodes.list()) this.dirty.add(nameOf(node));
    this.kick();
    this.arm();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.timer?.cancel();
    await this.working;
  }

  private now(): number {
    return this.options.clock.now();
  }

  private healthOf(name: string): Health {
    let h = this.health.get(name);
    if (h === undefined) {
      // First seen: a full grace period from now (as upstream after a restart of the controller).
      h = { probeMs: this.now(), heartbeat: '', renew: '' };
      this.health.set(name, h);
    }
    return h;
  }

  private observeNode(node: WireObject): void {
    const h = this.healthOf(nameOf(node));
    const heartbeat = readyHeartbeat(node);
    if (heartbeat !== h.heartbeat) {
      h.heartbeat = heartbeat;
      h.probeMs = this.now();
    }
    this.dirty.add(nameOf(node));
    this.kick();
  }

  private observeLease(lease: WireObject): void {
    const renew = str(rec(lease.spec).renewTime);
    const h = this.healthOf(nameOf(lease));
    if (renew !== '' && renew > h.renew) {
      h.renew = renew;
      h.probeMs = this.now();
    }
  }

  private arm(): void {
    if (this.closed) return;
    this.timer = this.options.clock.setTimer(this.options.monitorPeriodMs ?? 5_000, () => {
      this.monitor();
      this.arm();
    });
  }

  /** One monitor pass: nodes not seen alive for their grace period become Unknown; every node is reconciled. */
  private monitor(): void {
    const now = this.now();
    for (const node of this.options.nodes.list()) {
      this.dirty.add(nameOf(node));
      const h = this.healthOf(nameOf(node));
      const hasReady = conditionStatus(node, 'Ready') !== '';
      const grace = hasReady ? (this.options.gracePeriodMs ?? 40_000) : (this.options.startupGracePeriodMs ?? 60_000);
      if (now <= h.probeMs + grace) continue;
      if (WATCHED_CONDITIONS.every((type) => conditionStatus(node, type) === 'Unknown')) continue;
      this.markUnknown(node).catch((err: unknown) => {
        this.options.log(`node lifecycle: setting the conditions of node ${nameOf(node)} to Unknown failed (will retry): ${messageOf(err)}`);
      });
    }
    this.kick();
  }

  private async markUnknown(node: WireObject): Promise<void> {
    const now = formatTime(this.now());
    const written = await updateObject(this.options.nodesClient, '', nameOf(node), (n) => {
      const status = rec(n.status);
      n.status = status;
      const conditions = recs(status.conditions);
      let changed = false;
      for (const type of WATCHED_CONDITIONS) {
        const c = conditions.find((x) => x.type === type);
        if (c === undefined) {
          conditions.push({
            type, status: 'Unknown', reason: 'NodeStatusNeverUpdated', message: 'Nodeagent never posted node status.',
            lastHeartbeatTime: str(metaOf(n).creationTimestamp), lastTransitionTime: now,
          });
          changed = true;
        } else if (c.status !== 'Unknown') {
          Object.assign(c, { status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Nodeagent stopped posting node status.', lastTransitionTime: now });
          changed = true;
        }
      }
      status.conditions = conditions;
      return changed;
    }, { subresource: 'status', current: node });
    if (written !== undefined) this.options.log(`node lifecycle: node ${nameOf(node)} stopped posting its status: its conditions are Unknown`);
  }

  private kick(): void {
    if (!this.started || this.closed || this.working !== undefined) return;
    this.working = this.reconcileDirty().finally(() => {
      this.working = undefined;
      if (this.dirty.size > 0) this.kick();
    });
  }

  private async reconcileDirty(): Promise<void> {
    while (this.dirty.size > 0 && !this.closed) {
      const [name = ''] = this.dirty;
      this.dirty.delete(name);
      const node = this.options.nodes.get('', name);
      if (node === undefined) continue;
      try {
        await this.reconcile(node);
      } catch (err) {
        this.options.log(`node lifecycle: reconciling node ${name} failed (tried again on the next pass): ${messageOf(err)}`);
      }
    }
  }

  /** Taints from the conditions; pods not ready when the node's Ready condition left True. */
  private async reconcile(node: WireObject): Promise<void> {
    const name = nameOf(node);
    const ready = conditionStatus(node, 'Ready');
    const before = this.lastReady.get(name);
    if (before === 'True' && ready !== 'True') {
      this.options.recorder.record(node, 'Normal', 'NodeNotReady', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
      await this.markPodsNotReady(name);
    }
    // Noted once the pods are marked: a failure is tried again on the next pass.
    this.lastReady.set(name, ready);
    if (reconciledTaints(node, this.now()) === undefined) return;
    await updateObject(this.options.nodesClient, '', name, (n) => {
      const taints = reconciledTaints(n, this.now());
      if (taints === undefined) return false;
      const spec = rec(n.spec);
      n.spec = spec;
      if (taints.length === 0) delete spec.taints;
      else spec.taints = taints;
      return true;
    }, { current: node });
  }

  private async markPodsNotReady(nodeName: string): Promise<void> {
    for (const pod of this.options.pods.list()) {
      if (str(rec(pod.spec).nodeName) !== nodeName || podCondition(pod, 'Ready')?.status !== 'True') continue;
      await updateObject(this.options.podsClient, namespaceOf(pod), nameOf(pod), (p) =>
        podCondition(p, 'Ready') !== undefined && setPodCondition(p, { type: 'Ready', status: 'False' }, this.now()), { subresource: 'status', current: pod });
      this.options.recorder.record(pod, 'Warning', 'NodeNotReady', 'NodeNotReady', 'Node is not ready');
    }
  }
}
