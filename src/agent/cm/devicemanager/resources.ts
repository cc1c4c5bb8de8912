/**
 * The resources plugins registered (upstream: the device manager's endpoints, allDevices,
 * healthyDevices and unhealthyDevices): per resource, the connected plugin and its options, its
 * devices as last reported, and when its plugin went away.
 *
 *   | event                                  | devices                  | capacity / allocatable |
 *   |----------------------------------------|--------------------------|------------------------|
 *   | plugin connected                       | kept until it reports    | unchanged              |
 *   | ListAndWatch answer                    | replaced by the answer   | all / healthy          |
 *   | stream ended, plugin gone              | all turn unhealthy       | all / 0                |
 *   | gone for 5 minutes, not back           | resource removed         | reported 0, then left  |
 *   | agent start with a checkpoint          | none, plugin gone "now"  | 0 / 0 until it returns |
 */
import type { DevicePluginClient } from './endpoint.js';
import type { PluginDevice, PluginOptions } from './api.js';

/** How long a resource whose plugin went away is kept (upstream's endpointStopGracePeriod). */
export const ENDPOINT_STOP_GRACE_MS = 5 * 60_000;

export interface Connected {
  readonly client: DevicePluginClient;
  readonly options: PluginOptions;
}

interface ResourceState {
  readonly devices: Map<string, PluginDevice>;
  readonly healthy: Set<string>;
  readonly unhealthy: Set<string>;
  connected: Connected | undefined;
  /** The options of the last plugin connected (kept after it went away; undefined for a resource restored from the checkpoint). */
  lastOptions: PluginOptions | undefined;
  /** When the plugin went away (undefined while it is connected). */
  stoppedAt: number | undefined;
}

export interface Capacity {
  /** Devices of each resource (healthy and not). */
  readonly capacity: ReadonlyMap<string, number>;
  /** Healthy devices of each resource. */
  readonly allocatable: ReadonlyMap<string, number>;
}

export class ResourceRegistry {
  private readonly states = new Map<string, ResourceState>();

  private state(resource: string): ResourceState {
    let s = this.states.get(resource);
    if (s === undefined) {
      s = { devices: new Map(), healthy: new Set(), unhealthy: new Set(), connected: undefined, lastOptions: undefined, stoppedAt: undefined };
      this.states.set(resource, s);
    }
    return s;
  }

  /** A plugin is connected for `resource`; returns the one it replaces, if any. */
  connect(resource: string, connected: Connected): Connected | undefined {
    const s = this.state(resource);
    const previous = s.connected;
    s.connected = connected;
    s.lastOptions = connected.options;
    s.stoppedAt = undefined;
    return previous;
  }

  /** The plugin `client` went away at `now` (a client already replaced changes nothing): every device turns unhealthy. */
  disconnect(resource: string, client: DevicePluginClient, now: number): boolean {
    const s = this.states.get(resource);
    if (s?.connected?.client !== client) return false;
    s.connected = undefined;
    s.stoppedAt = now;
    for (const id of s.healthy) s.unhealthy.add(id);
    s.healthy.clear();
    return true;
  }

  /** A resource known from the checkpoint: no devices and no plugin until one registers (upstream newStoppedEndpointImpl). */
  restore(resource: string, now: number): void {
    const s = this.state(resource);
    s.stoppedAt = now;
  }

  /** The devices of a ListAndWatch answer replace the resource's. */
  update(resource: string, devices: readonly PluginDevice[]): { readonly healthy: number; readonly total: number } {
    const s = this.state(resource);
    s.devices.clear();
    s.healthy.clear();
    s.unhealthy.clear();
    for (const d of devices) {
      s.devices.set(d.id, d);
      (d.healthy ? s.healthy : s.unhealthy).add(d.id);
    }
    return { healthy: s.healthy.size, total: devices.length };
  }

  /** Whether the resource is one plugins registered (now or before the agent started). */
  has(resource: string): boolean {
    return this.states.has(resource);
  }

  connected(resource: string): Connected | undefined {
    return this.states.get(resource)?.connected;
  }

  /** The options of the resource's plugin, connected or gone (undefined: none connected since the agent started). */
  options(resource: string): PluginOptions | undefined {
    return this.states.get(resource)?.lastOptions;
  }

  /** Every connected plugin (to close them at stop). */
  allConnected(): Connected[] {
    return [...this.states.values()].flatMap((s) => (s.connected === undefined ? [] : [s.connected]));
  }

  healthy(resource: string): ReadonlySet<string> | undefined {
    return this.states.get(resource)?.healthy;
  }

  /** The device as last reported (undefined when the plugin no longer reports it). */
  device(resource: string, id: string): PluginDevice | undefined {
    return this.states.get(resource)?.devices.get(id);
  }

  devices(resource: string): Iterable<PluginDevice> {
    return this.states.get(resource)?.devices.values() ?? [];
  }

  /** Whether any device of the resource gave a topology (upstream deviceHasTopologyAlignment). */
  hasTopology(resource: string): boolean {
    for (const d of this.devices(resource)) if (d.numaNodes !== undefined) return true;
    return false;
  }

  /** The healthy devices of every resource (the checkpoint's RegisteredDevices, the allocatable devices). */
  registered(): Map<string, string[]> {
    return new Map([...this.states].map(([resource, s]) => [resource, [...s.healthy].sort()]));
  }

  /** Resources whose plugin has been gone for the grace period at `now`: they are removed and returned. */
  expire(now: number): string[] {
    const gone: string[] = [];
    for (const [resource, s] of this.states) {
      if (s.stoppedAt !== undefined && now - s.stoppedAt > ENDPOINT_STOP_GRACE_MS) {
        this.states.delete(resource);
        gone.push(resource);
      }
    }
    return gone;
  }

  /** The earliest time a resource expires (undefined: none is waiting). */
  nextExpiry(): number | undefined {
    let next: number | undefined;
    for (const s of this.states.values()) {
      if (s.stoppedAt !== undefined) next = Math.min(next ?? Infinity, s.stoppedAt + ENDPOINT_STOP_GRACE_MS);
    }
    return next;
  }

  capacity(): Capacity {
    const capacity = new Map<string, number>();
    const allocatable = new Map<string, number>();
    for (const [resource, s] of this.states) {
      capacity.set(resource, s.healthy.size + s.unhealthy.size);
      allocatable.set(resource, s.healthy.size);
    }
    return { capacity, allocatable };
  }
}
