/**
 * Test doubles of this module's inputs: an in-memory RestClient with the API server's patch
 * semantics, resourceVersions, conflicts and injected failures, and NodeFacts whose answers
 * tests change. Used by the unit tests only (time: src/api/fake-clock.ts).
 */
import { OrchError, type ErrorCategory } from '../../api/errors.js';
import { applyPatch } from '../../apiserver/patch/index.js';
import { nodeSchema } from '../../apiserver/resources/nodes/schema.js';
import type { ObjectList, PatchType, RestCallOptions, RestClient, WatchEvent, WatchHandle } from '../orchclient/rest-types.js';
import type { MachineInfo } from './machine.js';
import type { NodeIdentity } from './node-object.js';
import type { NodeFacts, NodeImage, NodePressure, RuntimeStatus } from './types.js';

type Verb = 'get' | 'create' | 'update' | 'patch' | 'delete';
type Obj = Record<string, unknown>;

export interface Call {
  readonly verb: Verb;
  readonly path: string;
  readonly body?: unknown;
  readonly patchType?: PatchType;
  readonly options?: RestCallOptions;
}

const meta = (o: Obj): Obj => (o.metadata ??= {}) as Obj;

function fail(category: ErrorCategory, message: string): OrchError {
  return new OrchError('ORCHCLIENT_REQUEST_FAILED', category, message);
}

/** An in-memory API server: objects by path, resourceVersions, strategic patches of Nodes. */
export class FakeRest implements RestClient {
  readonly objects = new Map<string, Obj>();
  readonly calls: Call[] = [];
  private failures: { verb: Verb; path: string; category: ErrorCategory; times: number }[] = [];
  private rv = 100;
  private uid = 0;

  /** The next `times` calls of `verb` on a path containing `path` fail with `category`. */
  failNext(verb: Verb, path: string, category: ErrorCategory, times = 1): void {
    this.failures.push({ verb, path, category, times });
  }

  /** Stores an object as if someone else created it. */
  put(path: string, object: Obj): Obj {
    const copy = structuredClone(object);
    meta(copy).resourceVersion = String(++this.rv);
    meta(copy).uid ??= `uid-${++this.uid}`;
    this.objects.set(path, copy);
    return structuredClone(copy);
  }

  callsOf(verb: Verb, path?: string): Call[] {
    return this.calls.filter((c) => c.verb === verb && (path === undefined || c.path === path));
  }

  private enter(call: Call): void {
    this.calls.push(call);
    const f = this.failures.find((x) => x.verb === call.verb && call.path.includes(x.path) && x.times > 0);
    if (f !== undefined) {
      f.times -= 1;
      throw fail(f.category, `injected ${f.category} on ${call.verb} ${call.path}`);
    }
  }

  private existing(path: string): Obj {
    const found = this.objects.get(path);
    if (found === undefined) throw fail('not-found', `${path} not found`);
    return found;
  }

  get<T>(path: string, options?: RestCallOptions): Promise<T> {
    return Promise.resolve().then(() => {
      this.enter({ verb: 'get', path, ...(options === undefined ? {} : { options }) });
      return structuredClone(this.existing(path)) as T;
    });
  }

  list<T>(): Promise<ObjectList<T>> {
    return Promise.reject(fail('internal', 'list is not faked'));
  }

  create<T>(path: string, body: unknown, options?: RestCallOptions): Promise<T> {
    return Promise.resolve().then(() => {
      this.enter({ verb: 'create', path, body: structuredClone(body), ...(options === undefined ? {} : { options }) });
      const object = structuredClone(body) as Obj;
      const key = `${path}/${String(meta(object).name)}`;
      if (this.objects.has(key)) throw fail('already-exists', `${key} already exists`);
      return this.put(key, object) as T;
    });
  }

  update<T>(path: string, body: unknown, options?: RestCallOptions): Promise<T> {
    return Promise.resolve().then(() => {
      this.enter({ verb: 'update', path, body: structuredClone(body), ...(options === undefined ? {} : { options }) });
      const old = this.existing(path);
      const object = structuredClone(body) as Obj;
      const rv = meta(object).resourceVersion;
      if (rv !== undefined && rv !== meta(old).resourceVersion) throw fail('conflict', `${path}: the object has been modified`);
      meta(object).uid = meta(old).uid;
      return this.put(path, object) as T;
    });
  }

  patch<T>(path: string, type: PatchType, patch: unknown, options?: RestCallOptions): Promise<T> {
    return Promise.resolve().then(() => {
      this.enter({ verb: 'patch', path, body: structuredClone(patch), patchType: type, ...(options === undefined ? {} : { options }) });
      const status = path.endsWith('/status');
      const key = status ? path.slice(0, -'/status'.length) : path;
      const old = this.existing(key);
      const patched = applyPatch(type, old, patch, nodeSchema);
      const next = status ? { ...old, status: patched.status } : { ...patched, status: old.status };
      if (next.status === undefined) delete next.status;
      return this.put(key, next) as T;
    });
  }

  delete<T>(path: string): Promise<T> {
    return Promise.resolve().then(() => {
      this.enter({ verb: 'delete', path });
      const old = this.existing(path);
      this.objects.delete(path);
      return old as T;
    });
  }

  watch<T>(_path: string, _onEvent: (event: WatchEvent<T>) => void): WatchHandle {
    throw fail('internal', 'watch is not faked');
  }

  close(): void {
    // nothing to close
  }
}

/** NodeFacts whose answers are fields the test changes; `runtimeDown` makes Status reject. */
export class FakeFacts implements NodeFacts {
  status: RuntimeStatus = { runtime: { ready: true }, network: { ready: true } };
  runtimeDown = false;
  version = { name: 'containerd', version: 'v1.7.2' };
  imageList: NodeImage[] = [{ names: ['registry.example/pause:3.9', 'registry.example/pause@sha256:aa'], sizeBytes: 300_000 }];
  imagesFail = false;
  problem: string | undefined;
  pressures: NodePressure = { memory: false, disk: false, pid: false };

  runtimeStatus(): Promise<RuntimeStatus> {
    return this.runtimeDown ? Promise.reject(new Error('connection refused')) : Promise.resolve(this.status);
  }

  runtimeVersion(): Promise<{ name: string; version: string }> {
    return Promise.resolve(this.version);
  }

  images(): Promise<readonly NodeImage[]> {
    return this.imagesFail ? Promise.reject(new Error('images unavailable')) : Promise.resolve(this.imageList);
  }

  health(): string | undefined {
    return this.problem;
  }

  pressure(): NodePressure {
    return this.pressures;
  }
}

export const GiB = 1024n ** 3n;

export function fakeMachine(overrides: Partial<MachineInfo> = {}): MachineInfo {
  return {
    cores: 4,
    memoryBytes: 8n * GiB,
    ephemeralStorageBytes: 100n * GiB,
    hugepages: new Map(),
    machineID: 'm-1',
    systemUUID: 'u-1',
    bootID: 'b-1',
    kernelVersion: '6.1.0',
    osImage: 'Debian GNU/Linux 12 (bookworm)',
    operatingSystem: 'linux',
    architecture: 'amd64',
    ...overrides,
  };
}

export const testIdentity: NodeIdentity = {
  nodeName: 'node-a',
  hostname: 'node-a',
  nodeLabels: { 'node.orch.io/pool': 'blue', team: 'x' },
  registerWithTaints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }, { key: 'only-key', value: '', effect: 'NoExecute' }],
  registerSchedulable: true,
  providerID: '',
  enableControllerAttachDetach: true,
  operatingSystem: 'linux',
  architecture: 'arm64',
};

/** A logger that keeps its lines, for assertions. */
export class MemoryLogger {
  readonly lines: { level: string; msg: string }[] = [];
  info(msg: string): void {
    this.lines.push({ level: 'info', msg });
  }
  warn(msg: string): void {
    this.lines.push({ level: 'warn', msg });
  }
  error(msg: string): void {
    this.lines.push({ level: 'error', msg });
  }
}

export const silent = new MemoryLogger();
