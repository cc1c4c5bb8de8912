/**
 * The scheduling queue (upstream's PriorityQueue, reduced): pods to schedule now (highest
 * spec.priority first, then the oldest), pods that failed and wait for a change of the cluster
 * (unschedulable), and pods waiting out their back-off (1 s doubling to 10 s per attempt). A
 * change of nodes or pods moves the unschedulable pods to the back-off, so they are tried again
 * once it ends; a pod left unschedulable for 5 minutes is tried again anyway. A change that
 * happens while a pod is being scheduled sends that pod to the back-off rather than to the
 * unschedulable ones, so that the change is not missed.
 */
import type { Clock, Timer } from '../../../api/clock.js';
import type { PodInfo } from './pod-info.js';

export interface SchedulingQueueOptions {
  readonly clock: Clock;
  /** Called when pods become ready to schedule (the loop pops them). */
  readonly onReady: () => void;
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** How long a pod stays unschedulable without a cluster change before it is tried again (default 5 min). */
  readonly maxUnschedulableMs?: number;
}

interface Entry {
  info: PodInfo;
  attempts: number;
  /** Where it is: active (ready), backoff (until `readyAt`), unschedulable (since `since`). */
  state: 'active' | 'backoff' | 'unschedulable' | 'in-flight';
  readyAt: number;
  since: number;
  /** The scheduling cycle it was popped in. */
  cycle: number;
}

function before(a: PodInfo, b: PodInfo): boolean {
  if (a.priority !== b.priority) return a.priority > b.priority;
  if (a.createdMs !== b.createdMs) return a.createdMs < b.createdMs;
  return a.key < b.key;
}

export class SchedulingQueue {
  private readonly options: SchedulingQueueOptions;
  private readonly entries = new Map<string, Entry>();
  /** A binary heap of the keys of active entries (stale keys are skipped on pop). */
  private heap: string[] = [];
  private cycle = 0;
  private moveRequestCycle = -1;
  private timer: Timer | undefined;
  private timerAt = Infinity;

  constructor(options: SchedulingQueueOptions) {
    this.options = options;
  }

  get size(): number {
    return this.entries.size;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /**
   * A new or changed pod to schedule. A pod waiting for the cluster is tried again (after its
   * back-off) when `retry` says its change may let it fit.
   */
  addOrUpdate(info: PodInfo, retry = true): void {
    const entry = this.entries.get(info.key);
    if (entry === undefined) {
      this.entries.set(info.key, { info, attempts: 0, state: 'active', readyAt: 0, since: 0, cycle: 0 });
      this.push(info.key);
      this.options.onReady();
      return;
    }
    entry.info = info;
    if (retry && entry.state === 'unschedulable') this.toBackoff(entry);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** The next pod to schedule, or undefined; it stays known (in flight) until done() or a failure. */
  pop(): PodInfo | undefined {
    if (this.options.clock.now() >= this.timerAt) this.promote();
    while (this.heap.length > 0) {
      const key = this.take();
      const entry = this.entries.get(key);
      if (entry?.state !== 'active') continue;
      entry.state = 'in-flight';
      entry.cycle = ++this.cycle;
      entry.attempts++;
      return entry.info;
    }
    return undefined;
  }

  /** Scheduled (bound or assumed): the queue forgets it. */
  done(key: string): void {
    this.entries.delete(key);
  }

  /** It fits nowhere now: wait for a cluster change (or its back-off, if one came meanwhile). */
  unschedulable(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    if (this.moveRequestCycle >= entry.cycle) {
      this.toBackoff(entry);
      return;
    }
    entry.state = 'unschedulable';
    entry.since = this.options.clock.now();
    this.arm(entry.since + (this.options.maxUnschedulableMs ?? 300_000));
  }

  /** An error (e.g. binding refused): try again after the back-off. */
  retry(key: string): void {
    const entry = this.entries.get(key);
    if (entry !== undefined) this.toBackoff(entry);
  }

  /** A node or pod changed in a way that may let pods fit: the unschedulable ones are tried again. */
  moveAll(): void {
    this.moveRequestCycle = this.cycle;
    for (const entry of this.entries.values()) if (entry.state === 'unschedulable') this.toBackoff(entry);
  }

  close(): void {
    this.timer?.cancel();
    this.entries.clear();
    this.heap = [];
  }

  private toBackoff(entry: Entry): void {
    const initial = this.options.initialBackoffMs ?? 1000;
    const duration = Math.min(this.options.maxBackoffMs ?? 10_000, initial * 2 ** Math.max(0, entry.attempts - 1));
    entry.state = 'backoff';
    entry.readyAt = this.options.clock.now() + duration;
    this.arm(entry.readyAt);
  }

  /** Moves the pods whose back-off ended, and the long-unschedulable ones, to active. */
  private promote(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.options.clock.now();
    const maxUnschedulable = this.options.maxUnschedulableMs ?? 300_000;
    let next = Infinity;
    for (const [key, entry] of this.entries) {
      const due = entry.state === 'backoff' ? entry.readyAt : entry.state === 'unschedulable' ? entry.since + maxUnschedulable : Infinity;
      if (due === Infinity) continue;
      if (due <= now) {
        entry.state = 'active';
        this.push(key);
      } else {
        next = Math.min(next, due);
      }
    }
    if (next !== Infinity) this.arm(next);
  }

  private arm(at: number): void {
    if (at >= this.timerAt) return;
    this.timer?.cancel();
    this.timerAt = at;
    this.timer = this.options.clock.setTimer(at - this.options.clock.now(), () => {
      this.promote();
      if (this.heap.length > 0) this.options.onReady();
    });
  }

  private less(i: number, j: number): boolean {
    const a = this.entries.get(this.heap[i] ?? '');
    const b = this.entries.get(this.heap[j] ?? '');
    if (a === undefined) return true;
    if (b === undefined) return false;
    return before(a.info, b.info);
  }

  private swap(i: number, j: number): void {
    const t = this.heap[i] ?? '';
    this.heap[i] = this.heap[j] ?? '';
    this.heap[j] = t;
  }

  private push(key: string): void {
    this.heap.push(key);
    let i = this.heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  private take(): string {
    const top = this.heap[0] ?? '';
    const last = this.heap.pop() ?? '';
    if (this.heap.length > 0) {
      this.heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < this.heap.length && this.less(l, m)) m = l;
        if (r < this.heap.length && this.less(r, m)) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    return top;
  }
}
