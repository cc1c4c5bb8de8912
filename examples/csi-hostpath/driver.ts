/**
 * The sample hostpath CSI driver (see README.md): the CSI spec's Identity and Node services
 * (proto/csi-v1.proto) on a unix socket, and a registration socket in the agent's
 * plugins_registry directory (pluginregistration v1, type CSIPlugin). A volume is the directory
 * `<dataDir>/<volume handle>` (made on first use); staging bind-mounts it at the staging path,
 * publishing bind-mounts it (or the staging path) at the target, read-only when asked;
 * NodeGetVolumeStats reports a published volume's usage (du) and its file system; with `expand`,
 * NodeExpandVolume records the size asked for. Methods may require secrets (`requireSecrets`).
 * Every call (secrets' values redacted) and every answer is reported through `onEvent`, and any
 * method can be made to fail or to answer late.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { lstat, readdir, statfs } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Server, ServerCredentials, loadPackageDefinition, status, type GrpcObject, type ServerUnaryCall, type ServiceClientConstructor, type sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

const run = promisify(execFile);

function proto(name: string): GrpcObject {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'proto', name))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`proto/${name} not found above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  return loadPackageDefinition(loadSync(path.join(dir, 'proto', name), { keepCase: false, longs: Number, enums: String, defaults: true, oneofs: true }));
}

const csi = (proto('csi-v1.proto')['csi'] as GrpcObject)['v1'] as GrpcObject;
const registration = proto('pluginregistration-v1.proto')['pluginregistration'] as GrpcObject;

export interface HostPathDriverOptions {
  /** The driver's name (a DNS subdomain), e.g. hostpath.csi.example.com. */
  readonly name: string;
  readonly nodeId: string;
  /** Where volumes live: `<dataDir>/<handle>`. */
  readonly dataDir: string;
  /** The CSI socket (Identity and Node services). */
  readonly socket: string;
  /** The agent's `<root-dir>/plugins_registry`: the registration socket goes here. */
  readonly pluginsRegistryDir: string;
  /** Offer STAGE_UNSTAGE_VOLUME (default true). */
  readonly stage?: boolean;
  readonly topology?: Readonly<Record<string, string>>;
  readonly maxVolumesPerNode?: number;
  /** Offer EXPAND_VOLUME: NodeExpandVolume records the required size in `<dataDir>/<handle>.size` (default false). */
  readonly expand?: boolean;
  /**
   * Secrets a method requires (method → key → value), as a driver whose storage needs
   * credentials: a call without them answers INVALID_ARGUMENT naming the missing key.
   */
  readonly requireSecrets?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Methods answering INTERNAL errors (for testing the agent's handling). */
  readonly failing?: readonly string[];
  /** Methods that answer only after this many milliseconds (a slow or hanging driver). */
  readonly delays?: Readonly<Record<string, number>>;
  readonly onEvent: (event: Record<string, unknown>) => void;
}

type Request = Record<string, unknown>;

/** A string field of a request ('' when absent or not a string). */
function text(request: Request, field: string): string {
  const value = request[field];
  return typeof value === 'string' ? value : '';
}
type Unary = (call: ServerUnaryCall<Request, unknown>, callback: sendUnaryData<unknown>) => void;

function isMountPoint(target: string): boolean {
  if (!existsSync(target)) return false;
  return readFileSync('/proc/self/mountinfo', 'utf8').split('\n').some((line) => line.split(' ')[4] === target);
}

async function bind(source: string, target: string, readonly: boolean): Promise<void> {
  if (isMountPoint(target)) return;
  await run('mount', ['--bind', source, target]);
  if (readonly) await run('mount', ['-o', 'remount,bind,ro', target]);
}

/** The blocks (as bytes) and inodes below `dir`, as du counts them. */
async function usage(dir: string): Promise<{ bytes: number; inodes: number }> {
  const top = await lstat(dir);
  let bytes = top.blocks * 512;
  let inodes = 1;
  if (top.isDirectory()) {
    for (const name of await readdir(dir)) {
      const u = await usage(path.join(dir, name));
      bytes += u.bytes;
      inodes += u.inodes;
    }
  }
  return { bytes, inodes };
}

async function unbind(target: string): Promise<void> {
  if (isMountPoint(target)) await run('umount', [target]);
}

export class HostPathDriver {
  private failing: Set<string>;
  private delays: Map<string, number>;
  private servers: Server[] = [];
  private registrationSocket = '';

  constructor(private readonly o: HostPathDriverOptions) {
    this.failing = new Set(o.failing ?? []);
    this.delays = new Map(Object.entries(o.delays ?? {}));
  }

  setFailing(methods: readonly string[]): void {
    this.failing = new Set(methods);
  }

  /** Makes `methods` answer only after `ms` milliseconds (0: at once again). */
  setDelay(methods: readonly string[], ms: number): void {
    for (const m of methods) {
      if (ms > 0) this.delays.set(m, ms);
      else this.delays.delete(m);
    }
  }

  private handler(method: string, work: (request: Request) => Promise<unknown>): Unary {
    return (call, callback) => {
      // Secrets are never printed: their keys only.
      const secrets = call.request['secrets'];
      const shown = typeof secrets === 'object' && secrets !== null ? { ...call.request, secrets: Object.fromEntries(Object.keys(secrets).map((k) => [k, '<redacted>'])) } : call.request;
      this.o.onEvent({ event: 'call', method, request: shown });
      const answer = (): void => {
        const missing = this.missingSecret(method, secrets);
        if (missing !== undefined) {
          this.o.onEvent({ event: 'reply', method, ok: false });
          callback({ code: status.INVALID_ARGUMENT, details: `${method} needs the secret key ${missing} (sample driver's requireSecrets)` });
          return;
        }
        if (this.failing.has(method)) {
          this.o.onEvent({ event: 'reply', method, ok: false });
          callback({ code: status.INTERNAL, details: `${method} fails on purpose (sample driver)` });
          return;
        }
        work(call.request).then((reply) => {
          this.o.onEvent({ event: 'reply', method, ok: true });
          callback(null, reply);
        }, (err: unknown) => {
          this.o.onEvent({ event: 'reply', method, ok: false });
          callback({ code: status.INTERNAL, details: err instanceof Error ? err.message : String(err) });
        });
      };
      const delay = this.delays.get(method) ?? 0;
      if (delay > 0) setTimeout(answer, delay).unref();
      else answer();
    };
  }

  /** The first required secret key the request lacks or has with another value. */
  private missingSecret(method: string, secrets: unknown): string | undefined {
    const given = typeof secrets === 'object' && secrets !== null ? secrets as Record<string, unknown> : {};
    for (const [key, value] of Object.entries(this.o.requireSecrets?.[method] ?? {})) if (given[key] !== value) return key;
    return undefined;
  }

  private volumeDir(request: Request): string {
    const id = text(request, 'volumeId');
    if (id === '' || id.includes('/') || id.startsWith('.')) throw new Error(`volume_id ${JSON.stringify(id)} is not a plain name`);
    const dir = path.join(this.o.dataDir, id);
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  async start(): Promise<void> {
    const stage = this.o.stage ?? true;
    const server = new Server();
    server.addService((csi['Identity'] as ServiceClientConstructor).service, {
      GetPluginInfo: this.handler('GetPluginInfo', () => Promise.resolve({ name: this.o.name, vendorVersion: '0.1.0' })),
      GetPluginCapabilities: this.handler('GetPluginCapabilities', () => Promise.resolve({ capabilities: [] })),
      Probe: this.handler('Probe', () => Promise.resolve({ ready: { value: true } })),
    });
    server.addService((csi['Node'] as ServiceClientConstructor).service, {
      NodeGetInfo: this.handler('NodeGetInfo', () => Promise.resolve({
        nodeId: this.o.nodeId, maxVolumesPerNode: this.o.maxVolumesPerNode ?? 0,
        ...(this.o.topology === undefined ? {} : { accessibleTopology: { segments: this.o.topology } }),
      })),
      NodeGetCapabilities: this.handler('NodeGetCapabilities', () => Promise.resolve({
        capabilities: [
          ...(stage ? [{ rpc: { type: 'STAGE_UNSTAGE_VOLUME' } }] : []), { rpc: { type: 'GET_VOLUME_STATS' } }, ...(this.o.expand === true ? [{ rpc: { type: 'EXPAND_VOLUME' } }] : []),
        ],
      })),
      NodeExpandVolume: this.handler('NodeExpandVolume', (r) => {
        const target = text(r, 'volumePath');
        if (!isMountPoint(target)) return Promise.reject(new Error(`volume path ${target} is not published`));
        const range = r['capacityRange'] as { requiredBytes?: number } | null;
        const bytes = range?.requiredBytes ?? 0;
        // A directory has no size to grow: the sample records what it was asked for.
        writeFileSync(`${this.volumeDir(r)}.size`, `${bytes}\n`);
        return Promise.resolve({ capacityBytes: bytes });
      }),
      NodeGetVolumeStats: this.handler('NodeGetVolumeStats', async (r) => {
        const target = text(r, 'volumePath');
        if (!isMountPoint(target)) throw new Error(`volume path ${target} is not published`);
        const fs = await statfs(target);
        const used = await usage(target);
        return {
          usage: [
            { unit: 'BYTES', total: fs.blocks * fs.bsize, available: fs.bavail * fs.bsize, used: used.bytes },
            { unit: 'INODES', total: fs.files, available: fs.ffree, used: used.inodes },
          ],
        };
      }),
      NodeStageVolume: this.handler('NodeStageVolume', async (r) => {
        const staging = text(r, 'stagingTargetPath');
        mkdirSync(staging, { recursive: true });
        await bind(this.volumeDir(r), staging, false);
        return {};
      }),
      NodeUnstageVolume: this.handler('NodeUnstageVolume', async (r) => {
        const staging = text(r, 'stagingTargetPath');
        await unbind(staging);
        rmSync(staging, { recursive: true, force: true });
        return {};
      }),
      NodePublishVolume: this.handler('NodePublishVolume', async (r) => {
        const target = text(r, 'targetPath');
        const staging = text(r, 'stagingTargetPath');
        // An inline (ephemeral) volume is never staged: published straight from its directory.
        const staged = stage && staging !== '';
        const source = staged ? staging : this.volumeDir(r);
        if (staged && !isMountPoint(staging)) throw new Error(`staging path ${staging} is not staged`);
        mkdirSync(target, { recursive: true });
        await bind(source, target, r['readonly'] === true);
        return {};
      }),
      NodeUnpublishVolume: this.handler('NodeUnpublishVolume', async (r) => {
        const target = text(r, 'targetPath');
        await unbind(target);
        rmSync(target, { recursive: true, force: true });
        return {};
      }),
    });
    await HostPathDriver.serve(server, this.o.socket);
    this.servers.push(server);

    const reg = new Server();
    reg.addService((registration['Registration'] as ServiceClientConstructor).service, {
      GetInfo: this.handler('GetInfo', () => Promise.resolve({ type: 'CSIPlugin', name: this.o.name, endpoint: this.o.socket, supportedVersions: ['1.0.0'] })),
      NotifyRegistrationStatus: this.handler('NotifyRegistrationStatus', (r) => {
        this.o.onEvent({ event: 'registration-status', registered: r['pluginRegistered'], error: r['error'] });
        return Promise.resolve({});
      }),
    });
    mkdirSync(this.o.pluginsRegistryDir, { recursive: true });
    this.registrationSocket = path.join(this.o.pluginsRegistryDir, `${this.o.name}-reg.sock`);
    await HostPathDriver.serve(reg, this.registrationSocket);
    this.servers.push(reg);
    this.o.onEvent({ event: 'started', socket: this.o.socket, registration: this.registrationSocket });
  }

  stop(): void {
    for (const s of this.servers) s.forceShutdown();
    this.servers = [];
    rmSync(this.o.socket, { force: true });
    if (this.registrationSocket !== '') rmSync(this.registrationSocket, { force: true });
  }

  private static serve(server: Server, socket: string): Promise<void> {
    mkdirSync(path.dirname(socket), { recursive: true });
    rmSync(socket, { force: true });
    return new Promise((resolve, reject) => {
      server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (err) => { if (err === null) resolve(); else reject(err); });
    });
  }
}
