/**
 * The container log manager (upstream's containerLogManager): every monitor period it lists
 * the running containers that carry the agent's pod label, looks at the size of each one's log
 * and rotates those past containerLogMaxSize (rotate.ts), at most `maxWorkers` at a time. A
 * log that is gone (removed by hand) is reopened by the runtime, as upstream does.
 *
 * A pass costs one ListContainers and one stat per running container: the log path of a
 * container never changes, so ContainerStatus is asked once per container, not per pass.
 * Failures (the runtime down, a reopen refused, a file gone) are logged and tried again at the
 * next pass; passes never overlap and never block anything else.
 */
import { statSync } from 'node:fs';
import type { Clock, Timer } from '../../api/clock.js';
import { OrchError, isUnavailable, messageOf } from '../../api/errors.js';
import { POD_UID_LABEL } from '../kuberuntime/index.js';
import type { Logger } from '../logging/index.js';
import type { ContainerService, ContainerUpdateService } from '../runtime/cri/index.js';
import { rotateLog } from './rotate.js';

/** createContainerLogManager's options are out of range. */
export const CONTAINERLOGS_INVALID_OPTIONS = 'CONTAINERLOGS_INVALID_OPTIONS';

/** The runtime calls the manager makes. */
export type LogRuntime = Pick<ContainerService, 'listContainers' | 'containerStatus'> & Pick<ContainerUpdateService, 'reopenContainerLog'>;

export interface ContainerLogManagerOptions {
  readonly runtime: LogRuntime;
  readonly clock: Clock;
  readonly logger: Logger;
  /** containerLogMaxSize in bytes: a log this large or larger is rotated. */
  readonly maxSizeBytes: number;
  /** containerLogMaxFiles: the log and its rotated files together, at most (2 or more). */
  readonly maxFiles: number;
  /** containerLogMaxWorkers: rotations at once (default 1). */
  readonly maxWorkers?: number;
  /** containerLogMonitorInterval in ms (default 10 s). */
  readonly monitorPeriodMs?: number;
}

/** What one pass did. */
export interface LogCheckResult {
  /** Running containers whose log was looked at. */
  readonly checked: number;
  readonly rotated: number;
  /** Containers whose check or rotation failed (each logged). */
  readonly failed: number;
}

export interface ContainerLogManager {
  /** Starts the periodic passes (the first one at once). Idempotent. */
  start(): void;
  /** Stops them, after the pass under way ended. */
  stop(): Promise<void>;
  /** One pass now. Rejects only when the runtime cannot list containers. */
  check(): Promise<LogCheckResult>;
}

/** Runs `work` over `items`, `limit` at a time. */
async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++];
      if (item !== undefined) await work(item);
    }
  });
  await Promise.all(lanes);
}

class Manager implements ContainerLogManager {
  private readonly logPaths = new Map<string, string>();
  private readonly maxWorkers: number;
  private readonly periodMs: number;
  private timer: Timer | undefined;
  private running: Promise<unknown> | undefined;
  private started = false;

  constructor(private readonly o: ContainerLogManagerOptions) {
    this.maxWorkers = o.maxWorkers ?? 1;
    this.periodMs = o.monitorPeriodMs ?? 10_000;
    const problems = [
      ...(Number.isSafeInteger(o.maxSizeBytes) && o.maxSizeBytes > 0 ? [] : [`maxSizeBytes must be a positive integer, got ${o.maxSizeBytes}`]),
      ...(Number.isInteger(o.maxFiles) && o.maxFiles >= 2 ? [] : [`maxFiles must be 2 or more, got ${o.maxFiles}`]),
      ...(Number.isInteger(this.maxWorkers) && this.maxWorkers >= 1 ? [] : [`maxWorkers must be 1 or more, got ${this.maxWorkers}`]),
      ...(this.periodMs > 0 ? [] : [`monitorPeriodMs must be positive, got ${this.periodMs}`]),
    ];
    if (problems.length > 0) throw new OrchError(CONTAINERLOGS_INVALID_OPTIONS, 'invalid', `container log manager: ${problems.join('; ')}`);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.o.logger.v(2, 'Container log rotation starts', { maxSizeBytes: this.o.maxSizeBytes, maxFiles: this.o.maxFiles, workers: this.maxWorkers, periodMs: this.periodMs });
    this.tick();
  }

  private tick(): void {
    this.running = this.check()
      .catch((err: unknown) => {
        // An unreachable runtime is the PLEG's to report, once.
        if (isUnavailable(err)) this.o.logger.v(4, 'Container log rotation waits for the runtime', { err: messageOf(err) });
        else this.o.logger.error('Failed to rotate container logs; trying again at the next check', { err: messageOf(err) });
      })
      .finally(() => {
        this.running = undefined;
        if (this.started) this.timer = this.o.clock.setTimer(this.periodMs, () => { this.tick(); });
      });
  }

  async stop(): Promise<void> {
    this.started = false;
    this.timer?.cancel();
    this.timer = undefined;
    await this.running;
  }

  async check(): Promise<LogCheckResult> {
    const listed = await this.o.runtime.listContainers({ state: { state: 'CONTAINER_RUNNING' } });
    const running = listed.filter((c) => c.labels[POD_UID_LABEL] !== undefined);
    const ids = new Set(running.map((c) => c.id));
    for (const id of this.logPaths.keys()) if (!ids.has(id)) this.logPaths.delete(id);
    let rotated = 0;
    let failed = 0;
    await pool(running, this.maxWorkers, async (c) => {
      try {
        if (await this.checkOne(c.id)) rotated++;
      } catch (err) {
        failed++;
        this.o.logger.warn('Failed to rotate the log of a container; trying again at the next check', { containerID: c.id, err: messageOf(err) });
      }
    });
    return { checked: running.length, rotated, failed };
  }

  /** The container's log path ('' when the runtime has none): asked once per container. */
  private async logPathOf(id: string): Promise<string> {
    let known = this.logPaths.get(id);
    if (known === undefined) {
      known = (await this.o.runtime.containerStatus({ containerId: id })).status?.logPath ?? '';
      this.logPaths.set(id, known);
    }
    return known;
  }

  /** Rotates the container's log when it is due; true when it did. */
  private async checkOne(id: string): Promise<boolean> {
    const log = await this.logPathOf(id);
    if (log === '') return false;
    // Synchronous: one local system call per running container, where a promise round trip
    // through libuv's thread pool costs ten times its CPU (the gc bench's rotation row).
    let size = statSync(log, { throwIfNoEntry: false })?.size;
    if (size === undefined) {
      // Removed behind the runtime's back: it writes into nothing until it reopens the log.
      await this.o.runtime.reopenContainerLog(id);
      size = statSync(log).size;
    }
    if (size < this.o.maxSizeBytes) return false;
    const to = await rotateLog({ reopenContainerLog: (cid) => this.o.runtime.reopenContainerLog(cid), now: () => this.o.clock.now(), maxFiles: this.o.maxFiles }, id, log);
    this.o.logger.v(2, 'Rotated a container log', { containerID: id, log, to, size });
    return true;
  }
}

/** The manager; nothing runs until start() or check(). Throws CONTAINERLOGS_INVALID_OPTIONS. */
export function createContainerLogManager(options: ContainerLogManagerOptions): ContainerLogManager {
  return new Manager(options);
}
