/**
 * A sample device plugin (device plugin API v1beta1), written to be read by plugin authors: it
 * serves the `DevicePlugin` service on its own unix socket and registers with the node agent,
 * either on the agent's registration socket (`<root-dir>/device-plugins/nodeagent.sock`) or
 * through the plugin watcher (a `Registration` socket under `<root-dir>/plugins_registry/`).
 *
 * Its devices are scripted: a list of IDs with their health and NUMA nodes, changed at run time
 * with `setDevices` (every open ListAndWatch stream gets the new list). Each device is backed by
 * a real character device node the plugin makes with mknod (major 1, minor 3: what /dev/null
 * is), so that a container given the device can open it. Allocate answers with an environment
 * variable naming the devices, a read-only mount of a host directory, the device nodes and an
 * annotation. It re-registers by itself when the agent's registration socket is made again (an
 * agent restart), as real plugins do.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Metadata, Server, ServerCredentials, credentials, loadPackageDefinition, status,
  type GrpcObject, type ServerUnaryCall, type ServerWritableStream, type ServiceClientConstructor, type ServiceError, type sendUnaryData,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

export interface SampleDevice {
  readonly id: string;
  /** Default true. */
  readonly healthy?: boolean;
  /** NUMA nodes; absent: the device gives no topology. */
  readonly numa?: readonly number[];
}

export interface SamplePluginOptions {
  /** The extended resource, e.g. example.com/dev. */
  readonly resource: string;
  /** The agent's device-plugins directory (where this plugin's socket goes too). */
  readonly devicePluginsDir: string;
  /** The plugin's socket file name in that directory. */
  readonly socketName: string;
  /** Where the device nodes are made (one per device, named by its ID). */
  readonly nodeDir: string;
  /** A host directory every allocation mounts read-only at /run/example-devices. */
  readonly mountDir: string;
  readonly devices: readonly SampleDevice[];
  readonly preStartRequired?: boolean;
  readonly getPreferredAllocationAvailable?: boolean;
  /** CDI device names to return from Allocate (`vendor.com/class=<id>` per device when set to a kind). */
  readonly cdiKind?: string;
  /** Register through the plugin watcher: the Registration socket goes in this directory instead. */
  readonly pluginsRegistryDir?: string;
  /** Called with what the plugin does and is asked (for logs and tests). */
  readonly onEvent?: (event: Record<string, unknown>) => void;
}

/** proto/<name> of the repository, found from this file (dist/examples/device-plugin/ or the sources). */
function proto(name: string): GrpcObject {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'proto', name))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`proto/${name} not found above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  return loadPackageDefinition(loadSync(path.join(dir, 'proto', name), { keepCase: false, longs: Number, defaults: true }));
}

const api = proto('deviceplugin-v1beta1.proto')['v1beta1'] as GrpcObject;
const registrationApi = proto('pluginregistration-v1.proto')['pluginregistration'] as GrpcObject;

type Unary = (call: ServerUnaryCall<Record<string, unknown>, unknown>, callback: sendUnaryData<unknown>) => void;

export class SampleDevicePlugin {
  private devices: SampleDevice[];
  private server: Server | undefined;
  private registrationServer: Server | undefined;
  private registrationSocket: string | undefined;
  private readonly streams = new Set<ServerWritableStream<unknown, unknown>>();
  private watchTimer: NodeJS.Timeout | undefined;
  private agentSocketIdentity = '';

  constructor(private readonly o: SamplePluginOptions) {
    this.devices = [...o.devices];
  }

  get socketPath(): string {
    return path.join(this.o.devicePluginsDir, this.o.socketName);
  }

  private emit(event: Record<string, unknown>): void {
    this.o.onEvent?.(event);
  }

  /** A character device node per device (mknod needs root), so that containers can open them. */
  private makeDeviceNodes(): void {
    mkdirSync(this.o.nodeDir, { recursive: true });
    for (const d of this.devices) {
      const node = path.join(this.o.nodeDir, d.id);
      if (!existsSync(node)) execFileSync('mknod', ['-m', '666', node, 'c', '1', '3']);
    }
  }

  private listAndWatchAnswer(): object {
    return {
      devices: this.devices.map((d) => ({
        ID: d.id, health: d.healthy === false ? 'Unhealthy' : 'Healthy',
        ...(d.numa === undefined ? {} : { topology: { nodes: d.numa.map((ID) => ({ ID })) } }),
      })),
    };
  }

  /** Replaces the device list; every open ListAndWatch stream gets it. */
  setDevices(devices: readonly SampleDevice[]): void {
    this.devices = [...devices];
    this.makeDeviceNodes();
    for (const s of this.streams) s.write(this.listAndWatchAnswer());
    this.emit({ event: 'devices', devices: this.devices.map((d) => d.id) });
  }

  private readonly handlers: Record<string, Unary | ((call: ServerWritableStream<unknown, unknown>) => void)> = {
    GetDevicePluginOptions: ((_call, callback) => {
      callback(null, { preStartRequired: this.o.preStartRequired === true, getPreferredAllocationAvailable: this.o.getPreferredAllocationAvailable === true });
    }),
    ListAndWatch: (call: ServerWritableStream<unknown, unknown>) => {
      this.streams.add(call);
      call.on('cancelled', () => { this.streams.delete(call); });
      call.write(this.listAndWatchAnswer());
      this.emit({ event: 'listandwatch' });
    },
    // Prefers the devices listed last, keeping those it must include: a choice the agent's own order would not make.
    GetPreferredAllocation: ((call, callback) => {
      const responses = (call.request['containerRequests'] as { availableDeviceIDs: string[]; mustIncludeDeviceIDs: string[]; allocationSize: number }[]).map((r) => {
        const rest = r.availableDeviceIDs.filter((id) => !r.mustIncludeDeviceIDs.includes(id)).sort().reverse();
        return { deviceIDs: [...r.mustIncludeDeviceIDs, ...rest].slice(0, r.allocationSize) };
      });
      this.emit({ event: 'preferred', answer: responses.map((r) => r.deviceIDs) });
      callback(null, { containerResponses: responses });
    }),
    Allocate: ((call, callback) => {
      const requests = call.request['containerRequests'] as { devicesIds: string[] }[];
      const unknown = requests.flatMap((r) => r.devicesIds).filter((id) => !this.devices.some((d) => d.id === id));
      if (unknown.length > 0) {
        callback({ code: status.INVALID_ARGUMENT, details: `unknown devices ${unknown.join(',')}` });
        return;
      }
      const responses = requests.map((r) => ({
        envs: { EXAMPLE_DEVICES: r.devicesIds.join(',') },
        mounts: [{ containerPath: '/run/example-devices', hostPath: this.o.mountDir, readOnly: true }],
        devices: r.devicesIds.map((id) => ({ containerPath: `/dev/example-${id}`, hostPath: path.join(this.o.nodeDir, id), permissions: 'rw' })),
        annotations: { 'example.com/devices': r.devicesIds.join(',') },
        cdiDevices: this.o.cdiKind === undefined ? [] : r.devicesIds.map((id) => ({ name: `${this.o.cdiKind ?? ''}=${id}` })),
      }));
      this.emit({ event: 'allocate', ids: requests.map((r) => r.devicesIds) });
      callback(null, { containerResponses: responses });
    }),
    PreStartContainer: ((call, callback) => {
      this.emit({ event: 'prestart', ids: call.request['devicesIds'] });
      callback(null, {});
    }),
  };

  private static async serve(server: Server, socket: string): Promise<void> {
    rmSync(socket, { force: true });
    await new Promise<void>((resolve, reject) => {
      server.bindAsync(`unix:${socket}`, ServerCredentials.createInsecure(), (err) => { if (err === null) resolve(); else reject(err); });
    });
  }

  /** Serves the plugin's socket and registers with the agent. */
  async start(): Promise<void> {
    this.makeDeviceNodes();
    mkdirSync(this.o.mountDir, { recursive: true });
    await this.serveDevicePlugin();
    if (this.o.pluginsRegistryDir !== undefined) await this.serveRegistration(this.o.pluginsRegistryDir);
    else {
      await this.register();
      this.watchAgentSocket();
    }
  }

  /** (Re)makes the plugin's own socket: a starting agent removes every socket in its directory. */
  private async serveDevicePlugin(): Promise<void> {
    for (const s of this.streams) s.end();
    this.streams.clear();
    this.server?.forceShutdown();
    const server = new Server();
    server.addService((api['DevicePlugin'] as ServiceClientConstructor).service, this.handlers);
    await SampleDevicePlugin.serve(server, this.socketPath);
    this.server = server;
    this.emit({ event: 'listening', socket: this.socketPath });
  }

  /** Register on the agent's registration socket; the agent answers once it has connected back. */
  async register(): Promise<void> {
    const agentSocket = path.join(this.o.devicePluginsDir, 'nodeagent.sock');
    this.agentSocketIdentity = identity(agentSocket);
    const Registration = api['Registration'] as ServiceClientConstructor;
    const client = new Registration(`unix://${agentSocket}`, credentials.createInsecure());
    try {
      const call = Reflect.get(client, 'Register') as (request: object, metadata: Metadata, options: object, callback: (err: ServiceError | null) => void) => void;
      await new Promise<void>((resolve, reject) => {
        call.call(client, {
          version: 'v1beta1', endpoint: this.o.socketName, resourceName: this.o.resource,
          options: { preStartRequired: this.o.preStartRequired === true, getPreferredAllocationAvailable: this.o.getPreferredAllocationAvailable === true },
        }, new Metadata(), { deadline: new Date(Date.now() + 30_000) }, (err) => { if (err === null) resolve(); else reject(new Error(err.details)); });
      });
      this.emit({ event: 'registered' });
    } catch (err) {
      this.emit({ event: 'registration-failed', error: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      client.close();
    }
  }

  /**
   * An agent restart removes every socket of the directory and makes its own again: the plugin
   * then serves its socket again and registers again.
   */
  private watchAgentSocket(): void {
    this.watchTimer = setInterval(() => {
      const now = identity(path.join(this.o.devicePluginsDir, 'nodeagent.sock'));
      if (now === '' || now === this.agentSocketIdentity) return;
      this.agentSocketIdentity = now;
      this.emit({ event: 'agent-restarted' });
      this.serveDevicePlugin().then(() => this.register()).catch(() => { this.agentSocketIdentity = ''; });
    }, 500);
  }

  /** The plugin watcher's way: a Registration socket that answers GetInfo and hears the outcome. */
  private async serveRegistration(dir: string): Promise<void> {
    mkdirSync(dir, { recursive: true });
    const server = new Server();
    server.addService((registrationApi['Registration'] as ServiceClientConstructor).service, {
      GetInfo: ((_call, callback) => {
        callback(null, { type: 'DevicePlugin', name: this.o.resource, endpoint: this.socketPath, supportedVersions: ['v1beta1'] });
      }) as Unary,
      NotifyRegistrationStatus: ((call, callback) => {
        this.emit({ event: 'registration-status', registered: call.request['pluginRegistered'], error: call.request['error'] });
        callback(null, {});
      }) as Unary,
    });
    const socket = path.join(dir, `${this.o.resource.replace(/[^a-zA-Z0-9.-]/g, '_')}-reg.sock`);
    await SampleDevicePlugin.serve(server, socket);
    this.registrationServer = server;
    this.registrationSocket = socket;
    this.emit({ event: 'registration-socket', socket });
  }

  /** Stops serving: ListAndWatch streams end, the sockets go (the agent marks the devices unhealthy). */
  stop(): void {
    if (this.watchTimer !== undefined) clearInterval(this.watchTimer);
    for (const s of this.streams) s.end();
    this.streams.clear();
    this.server?.forceShutdown();
    this.registrationServer?.forceShutdown();
    this.server = undefined;
    this.registrationServer = undefined;
    rmSync(this.socketPath, { force: true });
    if (this.registrationSocket !== undefined) rmSync(this.registrationSocket, { force: true });
    this.registrationSocket = undefined;
    this.emit({ event: 'stopped' });
  }
}

function identity(file: string): string {
  try {
    const st = statSync(file);
    return `${st.ino}:${st.ctimeMs}`;
  } catch {
    return ''; // not there (yet): the agent is not running
  }
}
