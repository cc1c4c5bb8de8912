/**
 * The node parts a simulated node replaces: no pod cgroups, no volumes (a pod's volumes are
 * "prepared" as nothing), and machine facts taken from the simulation's flags instead of /proc.
 */
import type { NodeCapacity } from '../../api/node-capacity.js';
import type { ContainerVolumes } from '../kuberuntime/index.js';
import type { MachineInfo } from '../nodestatus/index.js';
import type { PodCgroupHandle, PodVolumeHandle } from '../podsync/index.js';

/** What a simulated node reports as its capacity. */
export interface SimulatedCapacity {
  readonly cores: number;
  readonly memoryBytes: bigint;
  readonly ephemeralStorageBytes: bigint;
}

/** The pod cgroups of the sync and of the sync loop's housekeeping: none. */
export const noCgroups: PodCgroupHandle & { listPodUIDs(): Promise<string[]> } = {
  ensure: () => Promise.resolve(''),
  remove: () => Promise.resolve(),
  listPodUIDs: () => Promise.resolve([]),
};

/** The volumes of the sync, the runtime manager and the housekeeping: none. */
export const noVolumes: PodVolumeHandle & ContainerVolumes & { listPodDirs(): Promise<string[]> } = {
  preparePodVolumes: () => Promise.resolve(new Map()),
  cleanupPodVolumes: () => Promise.resolve(),
  mountsFor: () => Promise.resolve([]),
  listPodDirs: () => Promise.resolve([]),
};

/** Machine facts of a simulated node named `name`. */
export function simulatedMachine(name: string, capacity: SimulatedCapacity): MachineInfo {
  const id = Buffer.from(name).toString('hex').padEnd(32, '0').slice(0, 32);
  return {
    cores: capacity.cores,
    memoryBytes: capacity.memoryBytes,
    ephemeralStorageBytes: capacity.ephemeralStorageBytes,
    hugepages: new Map(),
    machineID: id,
    systemUUID: id,
    bootID: id,
    kernelVersion: 'simulated',
    osImage: 'nodeagent simulated node',
    operatingSystem: 'linux',
    architecture: 'amd64',
  };
}

/** The capacity the runtime manager scales unset limits by. */
export function nodeCapacityOf(capacity: SimulatedCapacity): NodeCapacity {
  return { cpuMilli: capacity.cores * 1000, memoryBytes: Number(capacity.memoryBytes), ephemeralStorageBytes: Number(capacity.ephemeralStorageBytes) };
}
