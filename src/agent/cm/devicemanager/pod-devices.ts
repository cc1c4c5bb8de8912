/**
 * Which devices each container holds (upstream: pod_devices.go): by pod UID, container name and
 * resource, the device IDs grouped by NUMA node and the plugin's answer to Allocate (kept as it
 * came, in protobuf bytes, for the checkpoint). From it come the devices in use, the checkpoint
 * entries, what a container is started with, and what the pod resources API reports.
 */
import { encodeContainerAllocation, type AllocatedDeviceNode, type AllocatedMount, type ContainerAllocation } from './api.js';
import type { CheckpointEntry } from './checkpoint.js';
import { entryAllocation } from './checkpoint.js';

interface Held {
  /** Device IDs by NUMA node (-1: without topology). */
  readonly byNuma: ReadonlyMap<number, readonly string[]>;
  readonly allocation: ContainerAllocation;
  readonly allocResp: Uint8Array;
}

/** What a container is started with to use its devices (upstream DeviceRunContainerOptions). */
export interface DeviceRunOptions {
  readonly envs: readonly { readonly name: string; readonly value: string }[];
  readonly mounts: readonly AllocatedMount[];
  readonly devices: readonly AllocatedDeviceNode[];
  readonly annotations: readonly { readonly name: string; readonly value: string }[];
  readonly cdiDevices: readonly string[];
}

/** A conflict between two resources' answers for one container (the first one is kept). */
export interface RunOptionsConflict {
  readonly what: 'env' | 'device' | 'mount' | 'annotation';
  readonly key: string;
  readonly kept: string;
  readonly dropped: string;
}

function idsOf(byNuma: ReadonlyMap<number, readonly string[]>): Set<string> {
  const out = new Set<string>();
  for (const ids of byNuma.values()) for (const id of ids) out.add(id);
  return out;
}

export class PodDevices {
  private readonly byPod = new Map<string, Map<string, Map<string, Held>>>();

  podUIDs(): Set<string> {
    return new Set(this.byPod.keys());
  }

  hasPod(podUID: string): boolean {
    return this.byPod.has(podUID);
  }

  insert(podUID: string, container: string, resource: string, byNuma: ReadonlyMap<number, readonly string[]>, allocation: ContainerAllocation, allocResp?: Uint8Array): void {
    const containers = this.byPod.get(podUID) ?? new Map<string, Map<string, Held>>();
    const resources = containers.get(container) ?? new Map<string, Held>();
    resources.set(resource, { byNuma, allocation, allocResp: allocResp ?? encodeContainerAllocation(allocation) });
    containers.set(container, resources);
    this.byPod.set(podUID, containers);
  }

  delete(podUIDs: Iterable<string>): void {
    for (const uid of podUIDs) this.byPod.delete(uid);
  }

  /** The pod's devices of `resource` across its containers. */
  podDevices(podUID: string, resource: string): Set<string> {
    const out = new Set<string>();
    for (const resources of this.byPod.get(podUID)?.values() ?? []) {
      const held = resources.get(resource);
      if (held !== undefined) for (const id of idsOf(held.byNuma)) out.add(id);
    }
    return out;
  }

  /** The container's devices of `resource`; undefined when it holds none of it. */
  containerDevices(podUID: string, container: string, resource: string): Set<string> | undefined {
    const held = this.byPod.get(podUID)?.get(container)?.get(resource);
    return held === undefined ? undefined : idsOf(held.byNuma);
  }

  /** Adds the container's devices, by resource, to `into` (devices an init container leaves for the next ones). */
  addContainerDevices(podUID: string, container: string, into: Map<string, Set<string>>): void {
    for (const [resource, held] of this.byPod.get(podUID)?.get(container) ?? []) {
      const set = into.get(resource) ?? new Set<string>();
      for (const id of idsOf(held.byNuma)) set.add(id);
      into.set(resource, set);
    }
  }

  /** Removes the container's devices, by resource, from `from`. */
  removeContainerDevices(podUID: string, container: string, from: Map<string, Set<string>>): void {
    for (const [resource, held] of this.byPod.get(podUID)?.get(container) ?? []) {
      const set = from.get(resource);
      if (set !== undefined) for (const id of idsOf(held.byNuma)) set.delete(id);
    }
  }

  /** Every device held, by resource. */
  devices(): Map<string, Set<string>> {
    const out = new Map<string, Set<string>>();
    for (const containers of this.byPod.values()) {
      for (const resources of containers.values()) {
        for (const [resource, held] of resources) {
          const set = out.get(resource) ?? new Set<string>();
          for (const id of idsOf(held.byNuma)) set.add(id);
          out.set(resource, set);
        }
      }
    }
    return out;
  }

  /** The container's devices by resource with the NUMA nodes they were allocated on (the pod resources API). */
  containerDeviceInstances(podUID: string, container: string): Map<string, Map<string, number[]>> {
    const out = new Map<string, Map<string, number[]>>();
    for (const [resource, held] of this.byPod.get(podUID)?.get(container) ?? []) {
      const devices = new Map<string, number[]>();
      for (const [numa, ids] of held.byNuma) {
        for (const id of ids) {
          const nodes = devices.get(id) ?? [];
          if (numa >= 0) nodes.push(numa);
          devices.set(id, nodes);
        }
      }
      out.set(resource, devices);
    }
    return out;
  }

  /** Every entry, in a stable order; null when there are none (as Go writes an empty list). */
  checkpointEntries(): CheckpointEntry[] | null {
    const out: CheckpointEntry[] = [];
    for (const uid of [...this.byPod.keys()].sort()) {
      const containers = this.byPod.get(uid) ?? new Map<string, Map<string, Held>>();
      for (const name of [...containers.keys()].sort()) {
        const resources = containers.get(name) ?? new Map<string, Held>();
        for (const resource of [...resources.keys()].sort()) {
          const held = resources.get(resource);
          if (held !== undefined) out.push({ podUID: uid, containerName: name, resourceName: resource, deviceIds: held.byNuma, allocResp: held.allocResp });
        }
      }
    }
    return out.length === 0 ? null : out;
  }

  /** Loads the checkpoint's entries; an entry whose answer does not decode is skipped and reported (as upstream). */
  loadCheckpoint(entries: readonly CheckpointEntry[], onBadEntry: (entry: CheckpointEntry, err: unknown) => void): void {
    for (const entry of entries) {
      let allocation: ContainerAllocation;
      try {
        allocation = entryAllocation(entry);
      } catch (err) {
        onBadEntry(entry, err);
        continue;
      }
      this.insert(entry.podUID, entry.containerName, entry.resourceName, entry.deviceIds, allocation, entry.allocResp);
    }
  }

  /**
   * The container's run options merged over its resources (sorted by name): the first
   * resource's env, device node, mount or annotation of a key wins; each conflict is reported.
   * Undefined when the container holds no devices.
   */
  runOptions(podUID: string, container: string, onConflict: (c: RunOptionsConflict) => void): DeviceRunOptions | undefined {
    const resources = this.byPod.get(podUID)?.get(container);
    if (resources === undefined) return undefined;
    const envs = new Map<string, string>();
    const devices = new Map<string, AllocatedDeviceNode>();
    const mounts = new Map<string, AllocatedMount>();
    const annotations = new Map<string, string>();
    const cdi = new Set<string>();
    const keep = <T>(what: RunOptionsConflict['what'], map: Map<string, T>, key: string, value: T, show: (v: T) => string): void => {
      const kept = map.get(key);
      if (kept === undefined) map.set(key, value);
      else if (show(kept) !== show(value)) onConflict({ what, key, kept: show(kept), dropped: show(value) });
    };
    for (const resource of [...resources.keys()].sort()) {
      const a = resources.get(resource)?.allocation;
      if (a === undefined) continue;
      for (const [k, v] of Object.entries(a.envs)) keep('env', envs, k, v, (x) => x);
      for (const d of a.devices) keep('device', devices, d.containerPath, d, (x) => x.hostPath);
      for (const m of a.mounts) keep('mount', mounts, m.containerPath, m, (x) => x.hostPath);
      for (const [k, v] of Object.entries(a.annotations)) keep('annotation', annotations, k, v, (x) => x);
      for (const name of a.cdiDevices) cdi.add(name);
    }
    return {
      envs: [...envs].map(([name, value]) => ({ name, value })),
      mounts: [...mounts.values()],
      devices: [...devices.values()],
      annotations: [...annotations].map(([name, value]) => ({ name, value })),
      cdiDevices: [...cdi],
    };
  }
}
