/**
 * Part of nodeagent's composition root: the container manager (src/agent/cm) built from the
 * resolved configuration, with the runtime calls the CPU manager's reconcile makes and the node
 * events it records in API-server mode. Only wiring: every rule lives in src/agent/cm.
 */
import type { Clock } from '../api/clock.js';
import { durationToMs } from '../api/duration.js';
import type { ResolvedConfiguration } from '../agent/config/index.js';
import { cgroupConfigOf, createContainerManager, statusReservation, type ContainerManager, type DeviceHintProvider, type ReservationSettings } from '../agent/cm/index.js';
import { runningContainerRefs, updateContainerCpuset } from '../agent/kuberuntime/index.js';
import type { LogRoot } from '../agent/logging/index.js';
import type { CriClient } from '../agent/runtime/cri/index.js';
import type { ApiConnection } from './agent-api.js';

/** The reservation settings of node allocatable. */
export function reservationSettings(resolved: ResolvedConfiguration): ReservationSettings {
  const c = resolved.config;
  return {
    systemReserved: c.systemReserved,
    orchReserved: c.orchReserved,
    reservedSystemCPUs: c.reservedSystemCPUs,
    evictionHard: c.evictionHard,
    ignoreEviction: resolved.options.experimentalAllocatableIgnoreEviction,
  };
}

/** What node status subtracts from capacity. */
export function nodeStatusReservation(resolved: ResolvedConfiguration): ReturnType<typeof statusReservation> {
  return statusReservation(reservationSettings(resolved));
}

export function buildContainerManager(
  resolved: ResolvedConfiguration, logs: LogRoot, clock: Clock, cri: CriClient, api: ApiConnection | undefined, devices?: DeviceHintProvider,
): ContainerManager {
  const c = resolved.config;
  const o = resolved.options;
  return createContainerManager({
    ...cgroupConfigOf(c),
    enforceNodeAllocatable: c.enforceNodeAllocatable,
    systemReservedCgroup: c.systemReservedCgroup,
    orchReservedCgroup: c.orchReservedCgroup,
    reservation: reservationSettings(resolved),
    qosReserved: c.qosReserved,
    cpuManagerPolicy: c.cpuManagerPolicy,
    cpuManagerPolicyOptions: c.cpuManagerPolicyOptions,
    cpuManagerReconcilePeriodMs: durationToMs(c.cpuManagerReconcilePeriod),
    memoryManagerPolicy: c.memoryManagerPolicy,
    reservedMemory: c.reservedMemory,
    topologyManagerPolicy: c.topologyManagerPolicy,
    topologyManagerScope: c.topologyManagerScope,
    topologyManagerPolicyOptions: c.topologyManagerPolicyOptions,
    nodeagentCgroups: c.nodeagentCgroups,
    systemCgroups: c.systemCgroups,
    runtimeCgroups: o.runtimeCgroups,
    runtimeSocket: c.containerRuntimeEndpoint.replace(/^unix:\/\//, ''),
    memorySwapBehavior: c.memorySwap.swapBehavior,
    memoryThrottlingFactorSet: resolved.sources.has('memoryThrottlingFactor'),
    gates: resolved.gates,
    rootDir: o.rootDir,
  }, {
    clock,
    logger: logs.logger('cm'),
    ...(api === undefined ? {} : { onNodeEvent: (type: 'Normal' | 'Warning', reason: string, message: string) => { api.nodeEvent(type, reason, message); } }),
    runtime: {
      runningContainers: () => runningContainerRefs(cri),
      updateCpuset: (id, cpus) => updateContainerCpuset(cri, id, cpus),
    },
    devices,
  });
}
