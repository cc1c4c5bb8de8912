/**
 * The container manager (upstream: container_manager_linux.go): everything node-level the agent
 * does with cgroups and resources besides the pod cgroups themselves.
 *
 * - prepare (every mode, before the runtime manager is built): the host's cgroup layout and
 *   topology are read, settings that need cgroup v2 are refused, and what the pod cgroups and
 *   the runtime manager need is worked out (qosReserved limits, container swap);
 * - start (the daemon, before the sync loop admits pods): the CPU, memory and topology managers
 *   open their state files, node allocatable is enforced on the pods cgroup and the reserved
 *   cgroups, the agent, runtime and system processes are moved into their cgroups, the device
 *   manager reads its checkpoint and serves plugin registrations, and the reconcile loop runs
 *   every cpuManagerReconcilePeriod (stale state released once the pod sources delivered their
 *   first snapshots, the CPU sets of running containers kept current);
 * - admit: the topology manager's admission (the sync loop's admit handler), which waits for
 *   device plugins' answers;
 * - cpuset: each new container's cpuset.cpus and cpuset.mems;
 * - assignments: the exclusive CPUs and memory handed out (the pod resources API).
 *
 * Before start (and with --runonce) every pod is admitted and no cpuset is set.
 */
import type { Container } from 'kubernetes-types/core/v1.js';
import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import type { NodePod } from '../../api/pod/index.js';

import type { Clock, Timer } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import { ADMIT, type AdmitResult } from './admission.js';
import { driverName, fsComponents, qosCgroupName, type CgroupConfig } from './cgroup-name.js';
import { CPUSet } from './cpuset.js';
import type { RunningContainer } from './cpumanager/index.js';
import { enforceNodeAllocatable, type NodeEventSink, type ReservedCgroup } from './enforce-allocatable.js';
import { discoverCgroupHierarchies, type CgroupHierarchy } from './hierarchies.js';
import { containerSwap, hostCgroupFacts, refuseCgroupV2Settings, type ContainerSwap, type HostCgroupFacts } from './host-cgroups.js';
import { readMachineTopology, type MachineTopology } from './machine/index.js';
import type { MemoryReservation } from './memorymanager/index.js';
import {
  allocatableAbsolute, allocatableReservation, effectiveReserved, podsCgroupConfig, reservedCgroupConfig, type NodeResources, type ReservationSettings,
} from './node-allocatable.js';
import type { DeviceHintProvider } from './devicemanager/index.js';
import { qosReservedPercent, type QosMemoryReserve } from './qos-reserve.js';
import { NO_ASSIGNMENTS, createResourceManagers, type ResourceAssignments, type ResourceManagers } from './resource-managers.js';
import { procProcessTable, startSystemCgroups, type ProcessTable } from './system-cgroups.js';
import type { PolicyName, ScopeName } from './topologymanager/index.js';

/** Node allocatable: what is reserved, and which cgroups enforce it. */
export interface NodeAllocatableSettings {
  readonly enforceNodeAllocatable: readonly string[];
  readonly systemReservedCgroup: string;
  readonly orchReservedCgroup: string;
  readonly reservation: ReservationSettings;
  /** The QoS memory reserve (qosReserved, the QOSReserved gate). */
  readonly qosReserved: Readonly<Record<string, string>>;
}

/** The resource managers: CPU, memory and topology policies. */
export interface ResourceManagerSettings {
  readonly cpuManagerPolicy: string;
  readonly cpuManagerPolicyOptions: Readonly<Record<string, string>>;
  readonly cpuManagerReconcilePeriodMs: number;
  readonly memoryManagerPolicy: string;
  readonly reservedMemory: readonly MemoryReservation[];
  readonly topologyManagerPolicy: string;
  readonly topologyManagerScope: string;
  readonly topologyManagerPolicyOptions: Readonly<Record<string, string>>;
}

/** The system cgroups the agent and the runtime are moved into. */
export interface SystemCgroupSettings {
  readonly nodeagentCgroups: string;
  readonly systemCgroups: string;
  readonly runtimeCgroups: string;
  /** The CRI endpoint's socket path (the runtime's processes listen on it). */
  readonly runtimeSocket: string;
}

/** Memory swap and throttling, checked against the host at prepare(). */
export interface MemorySettings {
  readonly memorySwapBehavior: string;
  readonly memoryThrottlingFactorSet: boolean;
}

/**
 * What createContainerManager is configured with, by concern: the pod cgroups (CgroupConfig),
 * node allocatable, the resource managers, the system cgroups, memory; and the feature gates
 * and the directory of the managers' state files.
 */
export interface ContainerManagerSettings
  extends CgroupConfig, NodeAllocatableSettings, ResourceManagerSettings, SystemCgroupSettings, MemorySettings {
  readonly gates: { enabled(name: string): boolean };
  /** The agent's root directory: the managers' state files. */
  readonly rootDir: string;
}

export interface ContainerManagerDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Node events (NodeAllocatableEnforced); absent: logged only. */
  readonly onNodeEvent?: NodeEventSink;
  /** The runtime's running containers and the cpuset update (the CPU manager's reconcile). */
  readonly runtime: {
    runningContainers(): Promise<readonly RunningContainer[]>;
    updateCpuset(id: string, cpus: string): Promise<void>;
  };
  /** The device manager (started with the others, the first hint provider of the topology manager); absent: no devices. */
  readonly devices?: DeviceHintProvider | undefined;
  /** Default: the hierarchies in /proc/self/mountinfo. */
  readonly hierarchies?: readonly CgroupHierarchy[];
  /** Default /sys (the topology) and /proc (pid limits, processes). */
  readonly sysRoot?: string;
  readonly procRoot?: string;
  readonly processes?: ProcessTable;
  readonly selfPid?: number;
}

export interface Prepared {
  readonly memorySwap: ContainerSwap;
  readonly qosMemoryReserve: QosMemoryReserve | undefined;
}

export interface Activity {
  /** The active pods and those waiting for admission (the sync loop's, from the pod manager's definition). */
  activePods(): readonly NodePod[];
  /** Every pod source delivered its first snapshot. */
  sourcesReady(): boolean;
}

export interface ContainerManager {
  /** Reads the host and refuses what it cannot honour. Throws CM_CGROUP_V2_REQUIRED and the readers' errors. */
  prepare(): Promise<Prepared>;
  /** Starts the managers and the enforcement (after prepare). Throws the managers' start errors. */
  start(activity: Activity): Promise<void>;
  /** Admits or refuses the pod (never rejects); the admission may wait for device plugins. */
  admit(pod: NodePod, admitted: readonly NodePod[]): Promise<AdmitResult>;
  cpuset(pod: NodePod, container: Container): { readonly cpus?: string; readonly mems?: string };
  /** The exclusive CPUs and memory handed out (empty before start). */
  assignments(): ResourceAssignments;
  stop(): Promise<void>;
}

/** min(kernel.pid_max, kernel.threads-max), as upstream's pid limit stats. */
function readPidLimit(procRoot: string, log: Logger): number | undefined {
  let limit: number | undefined;
  for (const file of ['sys/kernel/pid_max', 'sys/kernel/threads-max']) {
    try {
      const value = Number(readFileSync(join(procRoot, file), 'utf8').trim());
      if (Number.isInteger(value) && (limit === undefined || value < limit)) limit = value;
    } catch (err) {
      // One of the two is enough; neither: no pids limit on the pods cgroup.
      log.warn('Cannot read a process limit of the kernel', { file: join(procRoot, file), err: messageOf(err) });
    }
  }
  return limit;
}

export function nodeResourcesOf(machine: MachineTopology, memoryBytes: number, pids: number | undefined): NodeResources {
  const hugepages = new Map<number, number>();
  for (const n of machine.numaNodes) for (const h of n.hugepages) hugepages.set(h.pageSizeBytes, (hugepages.get(h.pageSizeBytes) ?? 0) + h.pages * h.pageSizeBytes);
  return {
    cpuMilli: machine.cpus.length * 1000,
    memoryBytes,
    pids,
    hugepages: [...hugepages].filter(([, bytes]) => bytes > 0).map(([pageSizeBytes, bytes]) => ({ pageSizeBytes, bytes })),
  };
}

export function createContainerManager(s: ContainerManagerSettings, deps: ContainerManagerDeps): ContainerManager {
  const log = deps.logger;
  let host: { hierarchies: readonly CgroupHierarchy[]; facts: HostCgroupFacts; machine: MachineTopology; capacity: NodeResources } | undefined;
  let managers: ResourceManagers | undefined;
  let activity: Activity | undefined;
  /** Stale state is released only once a periodic pass saw the sources ready (the first snapshot fully admitted). */
  let sweepReady = false;
  let timer: Timer | undefined;
  let running: Promise<void> | undefined;
  const stops: (() => void)[] = [];
  const onEvent: NodeEventSink = (type, reason, message) => {
    log.info('Node event', { type, reason, message });
    deps.onNodeEvent?.(type, reason, message);
  };

  async function reconcile(): Promise<void> {
    if (managers === undefined || activity === undefined) return;
    if (!activity.sourcesReady()) return;
    sweepReady = true;
    const active = activity.activePods();
    managers.sweep(active);
    if (managers.cpuPolicy !== 'static') return;
    try {
      await managers.reconcile(active, await deps.runtime.runningContainers(), (id, cpus) => deps.runtime.updateCpuset(id, cpus));
    } catch (err) {
      log.warn('CPU manager reconcile failed; trying again at the next period', { err: messageOf(err) });
    }
  }

  function tick(): void {
    timer = undefined;
    running = reconcile().finally(() => {
      running = undefined;
      if (activity !== undefined) timer = deps.clock.setTimer(s.cpuManagerReconcilePeriodMs, tick);
    });
  }

  return {
    async prepare() {
      const hierarchies = deps.hierarchies ?? await discoverCgroupHierarchies();
      const facts = hostCgroupFacts(hierarchies);
      refuseCgroupV2Settings({
        nodeSwapGate: s.gates.enabled('NodeSwap'), swapBehavior: s.memorySwapBehavior,
        memoryQoSGate: s.gates.enabled('MemoryQoS'), memoryThrottlingFactorSet: s.memoryThrottlingFactorSet,
      }, facts);
      const machine = await readMachineTopology({ ...(deps.sysRoot === undefined ? {} : { sysRoot: deps.sysRoot }) });
      const capacity = nodeResourcesOf(machine, totalmem(), readPidLimit(deps.procRoot ?? '/proc', log));
      host = { hierarchies, facts, machine, capacity };
      const percent = s.gates.enabled('QOSReserved') ? qosReservedPercent(s.qosReserved) : undefined;
      return {
        memorySwap: containerSwap({ nodeSwapGate: s.gates.enabled('NodeSwap'), swapBehavior: s.memorySwapBehavior }, facts),
        qosMemoryReserve: percent === undefined ? undefined : { percent, allocatableBytes: allocatableAbsolute(s.reservation, capacity).memoryBytes },
      };
    },

    async start(a) {
      const h = host;
      if (h === undefined) throw new Error('the container manager was started before prepare()');
      managers = createResourceManagers({
        cpuManagerPolicy: s.cpuManagerPolicy === 'static' ? 'static' : 'none',
        cpuManagerPolicyOptions: s.cpuManagerPolicyOptions,
        reservedSystemCPUs: CPUSet.parse(s.reservation.reservedSystemCPUs, 'reservedSystemCPUs'),
        memoryManagerPolicy: s.memoryManagerPolicy === 'Static' ? 'Static' : 'None',
        reservedMemory: s.reservedMemory,
        topologyManagerPolicy: s.topologyManagerPolicy as PolicyName,
        topologyManagerScope: s.topologyManagerScope as ScopeName,
        topologyManagerPolicyOptions: s.topologyManagerPolicyOptions,
        gates: s.gates,
        stateDir: s.rootDir,
        devices: deps.devices,
      }, h.machine, allocatableReservation(s.reservation, h.capacity), log);

      const levels = new Set(s.enforceNodeAllocatable);
      const reserved = effectiveReserved(s.reservation);
      const reservedCgroups: ReservedCgroup[] = [];
      if (levels.has('system-reserved')) reservedCgroups.push({ level: 'system-reserved', name: s.systemReservedCgroup, config: reservedCgroupConfig(reserved.systemReserved) });
      if (levels.has('orch-reserved')) reservedCgroups.push({ level: 'orch-reserved', name: s.orchReservedCgroup, config: reservedCgroupConfig(reserved.orchReserved) });
      try {
        await startEnforcement(h, reservedCgroups, levels);
        await startDevices(h.machine, a);
      } catch (err) {
        for (const stop of stops.splice(0)) stop();
        throw err;
      }
      activity = a;
      timer = deps.clock.setTimer(s.cpuManagerReconcilePeriodMs, tick);
    },

    admit(pod, admitted) {
      return managers === undefined ? Promise.resolve(ADMIT) : managers.admit(pod, admitted, sweepReady);
    },

    cpuset(pod, container) {
      if (managers === undefined) return {};
      const { cpus, mems } = managers.cpuset(pod, container);
      return { ...(cpus === '' ? {} : { cpus }), ...(mems === '' ? {} : { mems }) };
    },

    assignments: () => managers?.assignments ?? NO_ASSIGNMENTS,

    async stop() {
      activity = undefined;
      timer?.cancel();
      timer = undefined;
      for (const stop of stops.splice(0)) stop();
      await running;
      await deps.devices?.stop();
    },
  };

  /** The device manager, over the machine's NUMA nodes and the containers running now. */
  async function startDevices(machine: MachineTopology, a: Activity): Promise<void> {
    const devices = deps.devices;
    const m = managers;
    if (devices === undefined || m === undefined) return;
    let running: readonly RunningContainer[] = [];
    try {
      running = await deps.runtime.runningContainers();
    } catch (err) {
      // As upstream with the runtime down: containers are then not known to run, and their devices are checked again.
      log.warn('Cannot list the running containers for the device manager', { err: messageOf(err) });
    }
    await devices.start({
      activePods: () => a.activePods(),
      sourcesReady: () => a.sourcesReady(),
      numaNodes: machine.numaNodes.map((n) => n.id),
      running,
      affinity: (podUID, container) => m.topology.affinity(podUID, container),
    });
  }

  /** Node allocatable and the system cgroups; each started part's stop goes on `stops`. */
  async function startEnforcement(h: NonNullable<typeof host>, reservedCgroups: readonly ReservedCgroup[], levels: ReadonlySet<string>): Promise<void> {
    const podsName = qosCgroupName('Guaranteed', s);
    const enforcement = await enforceNodeAllocatable({
      hierarchies: h.hierarchies,
      podsCgroup: fsComponents(podsName, s.cgroupDriver),
      podsCgroupName: driverName(podsName, s.cgroupDriver),
      podsConfig: podsCgroupConfig(s.reservation, h.capacity, s.cgroupsPerQOS && levels.has('pods')),
      reserved: reservedCgroups,
      clock: deps.clock,
      logger: log,
      onEvent,
    });
    stops.push(() => { enforcement.stop(); });
    const system = await startSystemCgroups({
      hierarchies: h.hierarchies,
      nodeagentCgroups: s.nodeagentCgroups,
      systemCgroups: s.systemCgroups,
      runtimeCgroups: s.runtimeCgroups,
      runtimeSocket: s.runtimeSocket,
      selfPid: deps.selfPid ?? process.pid,
      processes: deps.processes ?? procProcessTable(deps.procRoot),
      clock: deps.clock,
      logger: log,
    });
    stops.push(() => { system.stop(); });
  }
}
