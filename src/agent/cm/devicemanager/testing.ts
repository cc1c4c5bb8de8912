/**
 * The device manager's test-only entry: FakeDevicePlugins, device plugins answered in memory
 * (their dialler stands in for the unix sockets): scripted ListAndWatch answers, options,
 * preferred allocations, Allocate answers or failures, and the calls recorded.
 */
import type { ContainerAllocation, PluginOptions } from './api.js';
import type { DevicePluginClient, PluginDialer } from './endpoint.js';

export interface FakeDeviceSpec {
  readonly id: string;
  readonly health?: string;
  /** NUMA nodes; absent: no topology. */
  readonly numa?: readonly number[];
}

export class FakeDevicePlugin {
  options: PluginOptions = { preStartRequired: false, getPreferredAllocationAvailable: false };
  /** GetPreferredAllocation's answer (default: the first `size` available). */
  preferred: ((available: readonly string[], mustInclude: readonly string[], size: number) => string[]) | undefined;
  /** Allocate fails with this message. */
  allocateError: string | undefined;
  preStartError: string | undefined;
  /** CDI device names each Allocate answer carries. */
  cdiDevices: string[] = [];
  readonly calls: string[] = [];
  /** The open ListAndWatch streams, newest last (a re-registration opens another). */
  private readonly streams: { readonly onAnswer: (answer: unknown) => void; readonly end: (reason: string) => void }[] = [];
  /** Whether the newest client was closed. */
  closed = false;

  constructor(readonly resource: string, readonly socketPath: string) {}

  /** Sends a ListAndWatch answer (as the loader decodes one). */
  send(devices: readonly FakeDeviceSpec[]): void {
    this.sendRaw({ devices: devices.map((d) => ({ ID: d.id, health: d.health ?? 'Healthy', topology: d.numa === undefined ? null : { nodes: d.numa.map((ID) => ({ ID })) } })) });
  }

  sendRaw(answer: unknown): void {
    const stream = this.streams.at(-1);
    if (stream === undefined) throw new Error(`${this.resource}: ListAndWatch is not open`);
    stream.onAnswer(answer);
  }

  /** Ends every ListAndWatch stream (the plugin stopped). */
  stop(reason = 'the plugin ended the stream'): void {
    for (const s of this.streams.splice(0)) s.end(reason);
  }

  client(): DevicePluginClient {
    let mine: (typeof this.streams)[number] | undefined;
    this.closed = false;
    return {
      resource: this.resource,
      socketPath: this.socketPath,
      options: () => Promise.resolve(this.options),
      watch: (onAnswer) => new Promise<string>((resolve) => {
        mine = { onAnswer, end: resolve };
        this.streams.push(mine);
      }),
      allocate: (ids) => {
        this.calls.push(`Allocate ${ids.join(',')}`);
        if (this.allocateError !== undefined) return Promise.reject(new Error(this.allocateError));
        const allocation: ContainerAllocation = {
          envs: { DEVICES: ids.join(',') }, mounts: [{ containerPath: '/opt/dev', hostPath: '/var/lib/dev', readOnly: true }],
          devices: ids.map((id) => ({ containerPath: `/dev/${id}`, hostPath: '/dev/null', permissions: 'rw' })), annotations: { 'example.com/devices': ids.join(',') }, cdiDevices: this.cdiDevices,
        };
        return Promise.resolve(allocation);
      },
      preferredAllocation: (available, mustInclude, size) => {
        this.calls.push(`GetPreferredAllocation ${available.join(',')} must=${mustInclude.join(',')} size=${size}`);
        return Promise.resolve(this.preferred?.(available, mustInclude, size) ?? available.slice(0, size));
      },
      preStartContainer: (ids) => {
        this.calls.push(`PreStartContainer ${ids.join(',')}`);
        return this.preStartError === undefined ? Promise.resolve() : Promise.reject(new Error(this.preStartError));
      },
      close: () => {
        this.closed = true;
        const i = mine === undefined ? -1 : this.streams.indexOf(mine);
        if (i >= 0) this.streams.splice(i, 1);
        mine?.end('the client is closed');
      },
    };
  }
}

/** Plugins by socket path; dialling an unknown path fails as an unreachable socket does. */
export class FakeDevicePlugins {
  readonly bySocket = new Map<string, FakeDevicePlugin>();

  add(resource: string, socketPath: string): FakeDevicePlugin {
    const plugin = new FakeDevicePlugin(resource, socketPath);
    this.bySocket.set(socketPath, plugin);
    return plugin;
  }

  readonly dial: PluginDialer = (resource, socketPath) => {
    const plugin = this.bySocket.get(socketPath);
    if (plugin?.resource !== resource) return Promise.reject(new Error(`failed to dial device plugin ${resource} at ${socketPath}: connection refused`));
    return Promise.resolve(plugin.client());
  };
}
