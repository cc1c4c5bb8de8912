/**
 * The device manager's state and its plugins (upstream: manager.go): registrations (on the
 * registration socket or through the plugin watcher), one client per resource with its
 * ListAndWatch stream, the devices each plugin reports, the devices pods hold, and the
 * checkpoint written at each change. Allocation and the users' views are in allocation.ts and
 * views.ts over this state.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Clock, Timer } from '../../../api/clock.js';
import { OrchError, messageOf } from '../../../api/errors.js';
import type { Logger } from '../../logging/index.js';
import { readCheckpoint, writeCheckpoint } from '../checkpoint/index.js';
import { CHECKPOINT_FILE, SUPPORTED_VERSIONS } from './api.js';
import { decodeCheckpoint, encodeCheckpoint } from './checkpoint.js';
import { dialDevicePlugin, type DevicePluginClient, type PluginDialer } from './endpoint.js';
import { PodDevices } from './pod-devices.js';
import { ResourceRegistry } from './resources.js';
import { DEVICE_REGISTRATION_INVALID, createRegistrationServer, type RegisterRequest, type RegistrationServer } from './server.js';
import type { DeviceStartContext } from './types.js';
import { checkDevices, invalidResourceNameMessage, registrationProblem } from './validation.js';

/** The device manager was asked to take plugins before it started. */
export const DEVICE_MANAGER_NOT_STARTED = 'DEVICE_MANAGER_NOT_STARTED';

export interface DeviceManagerOptions {
  /** The device-plugins directory (`<root-dir>/device-plugins`). */
  readonly dir: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly gates: { enabled(name: string): boolean };
  /** CRI Version's runtime name and version, asked once when a container is given CDI devices. */
  readonly runtimeVersion: () => Promise<{ readonly name: string; readonly version: string }>;
  /** Default: plugins over their unix sockets. */
  readonly dial?: PluginDialer;
}

export class DeviceState {
  readonly registry = new ResourceRegistry();
  readonly podDevices = new PodDevices();
  /** Devices in use, by resource: podDevices' devices plus those being allocated. */
  readonly allocated = new Map<string, Set<string>>();
  readonly checkpointPath: string;
  readonly log: Logger;
  context: DeviceStartContext | undefined;
  private readonly server: RegistrationServer;
  private readonly listeners = new Set<() => void>();
  /** Resources removed after their plugin stayed away: the node status reports them as 0. */
  private readonly removed = new Set<string>();
  /** The last refusal logged for each resource's ListAndWatch (repeats are not logged again). */
  private readonly refusals = new Map<string, string>();
  private checkpointExisted = false;
  private expiryTimer: Timer | undefined;
  private stopping = false;

  constructor(readonly options: DeviceManagerOptions) {
    this.log = options.logger;
    this.checkpointPath = path.join(options.dir, CHECKPOINT_FILE);
    this.server = createRegistrationServer({
      dir: options.dir, keep: [CHECKPOINT_FILE], logger: options.logger,
      register: (request) => this.register(request),
    });
  }

  get numaNodes(): readonly number[] {
    return this.context?.numaNodes ?? [];
  }

  async start(context: DeviceStartContext): Promise<void> {
    this.context = context;
    this.checkpointExisted = existsSync(this.checkpointPath);
    this.restoreCheckpoint();
    await this.server.start();
    // As upstream: the marker telling plugins that registering through the plugin watcher is the way forward.
    try {
      writeFileSync(path.join(this.options.dir, 'DEPRECATION'), '');
    } catch (err) {
      this.log.warn('Cannot create the deprecation file in the device-plugins directory', { dir: this.options.dir, err: messageOf(err) });
    }
    this.scheduleExpiry();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.expiryTimer?.cancel();
    await this.server.stop();
    for (const c of this.registry.allConnected()) c.client.close();
  }

  /** The checkpoint's allocations and resources; a missing file is fine, a bad one is logged and left (as upstream). */
  private restoreCheckpoint(): void {
    let text: string | undefined;
    try {
      text = readCheckpoint(this.checkpointPath);
      if (text === undefined) return;
      const data = decodeCheckpoint(this.checkpointPath, text);
      this.podDevices.loadCheckpoint(data.entries ?? [], (entry, err) => {
        this.log.error('Cannot decode the allocation of a checkpoint entry; it is left out', { path: this.checkpointPath, podUID: entry.podUID, container: entry.containerName, resource: entry.resourceName, err: messageOf(err) });
      });
      this.resetAllocated();
      const now = this.options.clock.now();
      for (const resource of data.registered.keys()) this.registry.restore(resource, now);
      this.log.info('Read the device manager checkpoint', { path: this.checkpointPath, entries: data.entries?.length ?? 0, resources: data.registered.size });
    } catch (err) {
      this.log.error('Continuing without the device manager checkpoint: device allocations made before this start are not known', { path: this.checkpointPath, err: messageOf(err) });
    }
  }

  writeCheckpoint(): void {
    writeCheckpoint(this.checkpointPath, encodeCheckpoint({ entries: this.podDevices.checkpointEntries(), registered: this.registry.registered() }));
  }

  /** Writes the checkpoint, logging a failure (the state in memory stays right; the next change writes again). */
  saveCheckpoint(): void {
    try {
      this.writeCheckpoint();
    } catch (err) {
      this.log.error('Cannot write the device manager checkpoint', { path: this.checkpointPath, err: messageOf(err) });
    }
  }

  /** The in-use sets as the held devices say (after a failed allocation or freed pods). */
  resetAllocated(): void {
    this.allocated.clear();
    for (const [resource, ids] of this.podDevices.devices()) this.allocated.set(resource, ids);
  }

  isDeviceResource(resource: string): boolean {
    return this.registry.has(resource) || this.allocated.has(resource);
  }

  /** upstream UpdateAllocatedDevices: frees the devices of pods no longer active, once the sources are ready. */
  updateAllocated(): void {
    const ctx = this.context;
    if (ctx === undefined || !ctx.sourcesReady()) return;
    const active = new Set(ctx.activePods().map((p) => p.metadata.uid));
    const gone = [...this.podDevices.podUIDs()].filter((uid) => !active.has(uid));
    if (gone.length === 0) return;
    this.log.v(3, 'Freeing the devices of pods no longer active', { podUIDs: gone });
    this.podDevices.delete(gone);
    this.resetAllocated();
    this.saveCheckpoint();
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => { this.listeners.delete(listener); };
  }

  changed(): void {
    if (this.stopping) return;
    for (const listener of this.listeners) {
      try {
        listener();
      } catch (err) {
        this.log.error('A device capacity listener failed', { err: messageOf(err) });
      }
    }
  }

  shouldResetExtendedResources(): boolean {
    return this.context !== undefined && !this.checkpointExisted;
  }

  /** Removes the resources whose plugin stayed away for the grace period; true when some were. */
  expire(): boolean {
    const gone = this.registry.expire(this.options.clock.now());
    if (gone.length === 0) return false;
    for (const resource of gone) {
      this.removed.add(resource);
      this.log.info('Device plugin resource removed: its plugin did not come back', { resource });
    }
    this.saveCheckpoint();
    return true;
  }

  removedResources(): string[] {
    return [...this.removed].sort();
  }

  private scheduleExpiry(): void {
    this.expiryTimer?.cancel();
    this.expiryTimer = undefined;
    const next = this.registry.nextExpiry();
    if (next === undefined || this.stopping) return;
    this.expiryTimer = this.options.clock.setTimer(next - this.options.clock.now() + 1, () => {
      this.expiryTimer = undefined;
      if (this.expire()) this.changed();
      this.scheduleExpiry();
    });
  }

  /** A registration on the registration socket: checked, then the plugin is connected. */
  private async register(request: RegisterRequest): Promise<void> {
    const problem = registrationProblem(request);
    if (problem !== undefined) throw new OrchError(DEVICE_REGISTRATION_INVALID, 'invalid', problem, { subject: request.resourceName });
    await this.connect(request.resourceName, path.join(this.options.dir, request.endpoint));
  }

  /** The plugin watcher's checks of a DevicePlugin (upstream's texts). Throws DEVICE_REGISTRATION_INVALID. */
  validatePlugin(name: string, versions: readonly string[]): void {
    if (!versions.some((v) => SUPPORTED_VERSIONS.includes(v))) {
      throw new OrchError(DEVICE_REGISTRATION_INVALID, 'invalid', `manager version, ${SUPPORTED_VERSIONS.join(',')}, is not among plugin supported versions [${versions.join(' ')}]`, { subject: name });
    }
    const invalid = invalidResourceNameMessage(name);
    if (invalid !== undefined) throw new OrchError(DEVICE_REGISTRATION_INVALID, 'invalid', `invalid name of device plugin socket: ${invalid}`, { subject: name });
  }

  /** Dials the plugin, reads its options and opens ListAndWatch; a plugin already there for the resource is replaced. */
  async connect(resource: string, socketPath: string): Promise<void> {
    if (this.context === undefined || this.stopping) throw new OrchError(DEVICE_MANAGER_NOT_STARTED, 'unavailable', 'the device manager is not running', { subject: resource });
    const client = await (this.options.dial ?? dialDevicePlugin)(resource, socketPath);
    let options;
    try {
      options = await client.options();
    } catch (err) {
      client.close();
      throw err;
    }
    const previous = this.registry.connect(resource, { client, options });
    this.removed.delete(resource);
    this.refusals.delete(resource);
    this.scheduleExpiry();
    previous?.client.close();
    this.log.info('Device plugin connected', { resource, socket: socketPath, preStartRequired: options.preStartRequired, getPreferredAllocationAvailable: options.getPreferredAllocationAvailable });
    void this.run(resource, client);
  }

  /** Follows the plugin's ListAndWatch until it ends; then its devices turn unhealthy. */
  private async run(resource: string, client: DevicePluginClient): Promise<void> {
    const reason = await client.watch((answer) => { this.onAnswer(resource, client, answer); });
    client.close();
    if (this.stopping) return;
    if (this.registry.disconnect(resource, client, this.options.clock.now())) {
      this.log.warn('ListAndWatch ended; the devices of the resource are unhealthy until its plugin registers again', { resource, reason });
      this.scheduleExpiry();
      this.changed();
    }
  }

  private onAnswer(resource: string, client: DevicePluginClient, answer: unknown): void {
    if (this.registry.connected(resource)?.client !== client || this.stopping) return;
    const checked = checkDevices(answer, this.numaNodes);
    if ('problems' in checked) {
      const message = checked.problems.join('; ');
      if (this.refusals.get(resource) !== message) {
        this.refusals.set(resource, message);
        this.log.error('ListAndWatch answer refused; the previous devices stay', { resource, problems: message });
      }
      return;
    }
    this.refusals.delete(resource);
    const counts = this.registry.update(resource, checked.devices);
    this.saveCheckpoint();
    this.log.v(2, 'Processed device updates for resource', { resource, totalCount: counts.total, healthyCount: counts.healthy });
    this.changed();
  }

  /** The plugin watcher's deregistration: the plugin at `endpoint` is disconnected (its devices turn unhealthy). */
  deregister(resource: string, endpoint: string): void {
    const connected = this.registry.connected(resource);
    if (connected?.client.socketPath === endpoint) connected.client.close();
  }
}
