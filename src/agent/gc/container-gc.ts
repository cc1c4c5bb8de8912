/**
 * One container GC pass (upstream's containerGC.GarbageCollect): two list calls, the plan of
 * container-plan.ts, then the removals in upstream's order: containers (each one's log files
 * first, as upstream's removeContainer does; one in an unknown state is stopped first), then
 * sandboxes left without containers, then the log directories of pods that are gone
 * (`<podLogsDir>/<namespace>_<name>_<uid>`; never one whose pod the runtime still holds). Every
 * removal is tried; the failures are reported together as GC_CONTAINER_FAILED.
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { OrchError, isNotFound, messageOf } from '../../api/errors.js';
import { removeContainerLogFiles } from '../containerlogs/index.js';
import { CONTAINER_NAME_LABEL, POD_UID_LABEL, parsePodLogsDirectoryName } from '../kuberuntime/index.js';
import type { Logger } from '../logging/index.js';
import type { ContainerService, SandboxService } from '../runtime/cri/index.js';
import type { GcObject } from './metrics.js';
import { planContainerRemovals, planSandboxRemovals, type ContainerGCPolicy, type GcContainer, type GcSandbox, type PodStates } from './container-plan.js';

/** Some containers, sandboxes or log directories could not be removed; the message names each. */
export const GC_CONTAINER_FAILED = 'GC_CONTAINER_FAILED';

/** The grace period given to a container in an unknown state before it is removed (upstream's minimum). */
const UNKNOWN_STOP_SECONDS = 2;

/** The runtime calls a pass makes. */
export type GcRuntime = Pick<ContainerService, 'listContainers' | 'containerStatus' | 'stopContainer' | 'removeContainer'> & Pick<SandboxService, 'listPodSandbox' | 'removePodSandbox'>;

export interface ContainerGCOptions {
  readonly runtime: GcRuntime;
  readonly pods: PodStates;
  readonly policy: ContainerGCPolicy;
  /** podLogsDir: where the pods' log directories are. */
  readonly podLogsDir: string;
  readonly now: () => number;
  readonly logger: Logger;
  /** Told the pod whose runtime objects a pass removed (the pod status cache forgets it). */
  readonly onPodChanged?: (uid: string) => void;
  /** Told each object removed, as it goes (metrics). */
  readonly onRemoved?: (object: GcObject) => void;
}

/** What one pass removed. */
export interface ContainerGCResult {
  readonly containers: number;
  readonly sandboxes: number;
  readonly logDirectories: number;
}

export interface ContainerGCPassOptions {
  /**
   * Also every dead container and sandbox of terminated pods still wanted by a source
   * (upstream's evictNonDeletedPods, set by DeleteAllUnusedContainers under disk pressure).
   */
  readonly evictTerminatedPods?: boolean;
}

export interface ContainerGC {
  /** One pass. Rejects with GC_CONTAINER_FAILED (after trying every removal) or the runtime's error when it cannot list. */
  collect(options?: ContainerGCPassOptions): Promise<ContainerGCResult>;
}

const nsToMs = (ns: string): number => Number(BigInt(ns === '' ? '0' : ns) / 1_000_000n);

function stateOf(state: string): GcContainer['state'] {
  switch (state) {
    case 'CONTAINER_CREATED': return 'created';
    case 'CONTAINER_RUNNING': return 'running';
    case 'CONTAINER_EXITED': return 'exited';
    default: return 'unknown';
  }
}

class Collector implements ContainerGC {
  constructor(private readonly o: ContainerGCOptions) {}

  async collect(options: ContainerGCPassOptions = {}): Promise<ContainerGCResult> {
    const { runtime, logger } = this.o;
    const own = this.o.pods;
    // Log directories follow the pod's removability alone: a terminated pod still wanted keeps its logs.
    const pods: PodStates = options.evictTerminatedPods === true
      ? { sourcesReady: () => own.sourcesReady(), isRemovable: (uid) => own.isRemovable(uid) || own.isTerminated?.(uid) === true }
      : own;
    const [containerList, sandboxList] = await Promise.all([runtime.listContainers(), runtime.listPodSandbox()]);
    const containers: GcContainer[] = containerList.flatMap((c) => {
      const podUid = c.labels[POD_UID_LABEL];
      return podUid === undefined ? [] : [{
        id: c.id, podUid, name: c.labels[CONTAINER_NAME_LABEL] ?? c.metadata?.name ?? '', sandboxId: c.podSandboxId,
        state: stateOf(c.state), createdAt: nsToMs(c.createdAt),
      }];
    });
    const sandboxes: GcSandbox[] = sandboxList.flatMap((s) => {
      const podUid = s.labels[POD_UID_LABEL];
      return podUid === undefined ? [] : [{ id: s.id, podUid, ready: s.state === 'SANDBOX_READY', createdAt: nsToMs(s.createdAt) }];
    });
    const failures: string[] = [];
    const changed = new Set<string>();

    const doomed = planContainerRemovals(containers, this.o.policy, this.o.now(), pods);
    const removedContainers = new Set<string>();
    for (const c of doomed) {
      try {
        await this.removeContainer(c);
        removedContainers.add(c.id);
        changed.add(c.podUid);
        this.o.onRemoved?.('container');
      } catch (err) {
        failures.push(`container ${c.id} (${c.name} of pod ${c.podUid}): ${messageOf(err)}`);
      }
    }
    const remaining = containers.filter((c) => !removedContainers.has(c.id));
    const removedSandboxes = new Set<string>();
    for (const s of planSandboxRemovals(sandboxes, remaining, pods)) {
      try {
        logger.v(2, 'Removing a dead pod sandbox', { sandbox: s.id, podUID: s.podUid });
        await runtime.removePodSandbox(s.id);
        removedSandboxes.add(s.id);
        changed.add(s.podUid);
        this.o.onRemoved?.('sandbox');
      } catch (err) {
        failures.push(`sandbox ${s.id} of pod ${s.podUid}: ${messageOf(err)}`);
      }
    }
    for (const uid of changed) this.o.onPodChanged?.(uid);
    // Any sandbox left counts, with the agent's label or not (by its metadata's UID): another
    // client of the runtime may write into the same directory.
    const held = new Set([
      ...remaining.map((c) => c.podUid),
      ...sandboxList.filter((s) => !removedSandboxes.has(s.id)).flatMap((s) => [s.labels[POD_UID_LABEL] ?? '', s.metadata?.uid ?? '']),
    ]);
    const logDirectories = pods.sourcesReady() ? await this.removeLogDirectories(held, failures) : 0;
    if (failures.length > 0) {
      throw new OrchError(GC_CONTAINER_FAILED, 'internal', `container garbage collection: ${failures.length} removal(s) failed: ${failures.join('; ')}`, { subject: 'container GC' });
    }
    return { containers: removedContainers.size, sandboxes: removedSandboxes.size, logDirectories };
  }

  /** The container's log files, then the container (stopped first when its state is unknown). */
  private async removeContainer(c: GcContainer): Promise<void> {
    const { runtime, logger } = this.o;
    logger.v(2, 'Removing a dead container', { containerID: c.id, container: c.name, podUID: c.podUid });
    if (c.state === 'unknown') await runtime.stopContainer({ containerId: c.id, timeout: UNKNOWN_STOP_SECONDS });
    let logPath = '';
    try {
      logPath = (await runtime.containerStatus({ containerId: c.id })).status?.logPath ?? '';
    } catch (err) {
      if (isNotFound(err)) return; // removed meanwhile (by the pod's own removal)
      throw err;
    }
    await removeContainerLogFiles(logPath);
    await runtime.removeContainer(c.id);
  }

  /** Removes `<podLogsDir>/<ns>_<name>_<uid>` of the pods that are gone and that the runtime holds nothing of. */
  private async removeLogDirectories(held: ReadonlySet<string>, failures: string[]): Promise<number> {
    let entries;
    try {
      entries = await readdir(this.o.podLogsDir, { withFileTypes: true });
    } catch (err) {
      if (typeof err === 'object' && err !== null && Reflect.get(err, 'code') === 'ENOENT') return 0;
      failures.push(`pod log directory ${this.o.podLogsDir}: ${messageOf(err)}`);
      return 0;
    }
    let removed = 0;
    for (const entry of entries) {
      const pod = entry.isDirectory() ? parsePodLogsDirectoryName(entry.name) : undefined;
      if (pod === undefined || held.has(pod.uid) || !this.o.pods.isRemovable(pod.uid)) continue;
      const dir = path.join(this.o.podLogsDir, entry.name);
      try {
        this.o.logger.v(2, 'Removing the log directory of a pod that is gone', { dir });
        await rm(dir, { recursive: true, force: true });
        removed++;
        this.o.onRemoved?.('log_directory');
      } catch (err) {
        failures.push(`log directory ${dir}: ${messageOf(err)}`);
      }
    }
    return removed;
  }
}

export function createContainerGC(options: ContainerGCOptions): ContainerGC {
  return new Collector(options);
}
