/**
 * FakeRuntime: an in-memory CRI runtime and image service for unit tests of the runtime
 * manager and its consumers. Sandboxes and containers keep their configs, states and
 * timestamps; every call is recorded; failures can be queued per method; images are a set of
 * references. Containers run until `exit` is called (or StopContainer, exit code 137).
 */
import { OrchError } from '../../api/errors.js';
import type {
  Container,
  ContainerConfig,
  ContainerFilter,
  ContainerState,
  ContainerStatusResponse,
  CreateContainerRequest,
  ExecSyncRequest,
  ExecSyncResponse,
  Image,
  ImageStatusRequest,
  ImageStatusResponse,
  PodSandbox,
  PodSandboxConfig,
  PodSandboxFilter,
  PodSandboxState,
  PodSandboxStatusResponse,
  PullImageRequest,
  RunPodSandboxRequest,
  StopContainerRequest,
} from '../runtime/cri/index.js';
import type { ManagerImages, ManagerRuntime } from './options.js';

export interface FakeSandbox {
  readonly id: string;
  readonly config: PodSandboxConfig;
  state: PodSandboxState;
  readonly createdAt: bigint;
  readonly ip: string;
}

export interface FakeContainer {
  readonly id: string;
  readonly sandboxId: string;
  readonly config: ContainerConfig;
  readonly sandboxConfig: PodSandboxConfig;
  state: ContainerState;
  readonly createdAt: bigint;
  startedAt: bigint;
  finishedAt: bigint;
  exitCode: number;
  reason: string;
  message: string;
}

export interface FakeCall {
  readonly method: string;
  readonly arg: unknown;
}

function matches(labels: Readonly<Record<string, string>>, selector: Readonly<Record<string, string>> | undefined): boolean {
  return Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
}

export class FakeRuntime implements ManagerRuntime, ManagerImages {
  readonly sandboxes = new Map<string, FakeSandbox>();
  readonly containers = new Map<string, FakeContainer>();
  /** Image references present, mapped to their IDs. */
  readonly images = new Map<string, string>();
  /** References that PullImage can fetch, mapped to their IDs. */
  readonly registry = new Map<string, string>();
  readonly calls: FakeCall[] = [];
  /** ExecSync results by the command joined with spaces (default: exit code 0, no output). */
  readonly execResults = new Map<string, { readonly exitCode: number; readonly stdout?: string; readonly stderr?: string }>();
  private readonly failures = new Map<string, Error[]>();
  private clockNs = 1_700_000_000_000_000_000n;
  private seq = 0;

  constructor(private readonly nowMs: () => number = Date.now) {}

  /** Makes the next call of `method` reject with `error`. */
  failNext(method: string, error: Error): void {
    this.failures.set(method, [...(this.failures.get(method) ?? []), error]);
  }

  /** Calls of `method`, in order. */
  callsOf(method: string): unknown[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.arg);
  }

  /** The container exits now with `exitCode`. */
  exit(id: string, exitCode: number, reason = exitCode === 0 ? 'Completed' : 'Error'): void {
    const c = this.mustContainer(id);
    Object.assign(c, { state: 'CONTAINER_EXITED', finishedAt: this.tick(), exitCode, reason });
  }

  private tick(): bigint {
    this.clockNs = BigInt(this.nowMs()) * 1_000_000n + BigInt(++this.seq);
    return this.clockNs;
  }

  private record(method: string, arg: unknown): void {
    this.calls.push({ method, arg });
    const queued = this.failures.get(method);
    const failure = queued?.shift();
    if (failure !== undefined) throw failure;
  }

  private mustContainer(id: string): FakeContainer {
    const c = this.containers.get(id);
    if (c === undefined) throw new OrchError('CRI_NOT_FOUND', 'not-found', `container ${id} not found`);
    return c;
  }

  // ---- sandboxes ----

  runPodSandbox(request: RunPodSandboxRequest): Promise<string> {
    return Promise.resolve().then(() => {
      this.record('runPodSandbox', request);
      const id = `sandbox-${++this.seq}`;
      const hostNetwork = request.config.linux?.securityContext?.namespaceOptions?.network === 'NODE';
      this.sandboxes.set(id, { id, config: request.config, state: 'SANDBOX_READY', createdAt: this.tick(), ip: hostNetwork ? '' : `10.88.0.${this.sandboxes.size + 2}` });
      return id;
    });
  }

  stopPodSandbox(id: string): Promise<void> {
    return Promise.resolve().then(() => {
      this.record('stopPodSandbox', id);
      const sandbox = this.sandboxes.get(id);
      if (sandbox === undefined) return;
      sandbox.state = 'SANDBOX_NOTREADY';
      for (const c of this.containers.values()) {
        if (c.sandboxId === id && c.state === 'CONTAINER_RUNNING') Object.assign(c, { state: 'CONTAINER_EXITED', finishedAt: this.tick(), exitCode: 137, reason: 'Error' });
      }
    });
  }

  removePodSandbox(id: string): Promise<void> {
    return Promise.resolve().then(() => {
      this.record('removePodSandbox', id);
      this.sandboxes.delete(id);
      for (const c of [...this.containers.values()]) if (c.sandboxId === id) this.containers.delete(c.id);
    });
  }

  podSandboxStatus(request: { readonly podSandboxId: string }): Promise<PodSandboxStatusResponse> {
    return Promise.resolve().then(() => {
      this.record('podSandboxStatus', request);
      const s = this.sandboxes.get(request.podSandboxId);
      if (s === undefined) throw new OrchError('CRI_NOT_FOUND', 'not-found', `sandbox ${request.podSandboxId} not found`);
      return {
        status: {
          id: s.id, metadata: s.config.metadata, state: s.state, createdAt: String(s.createdAt),
          network: { ip: s.ip, additionalIps: [] },
          linux: { namespaces: { options: s.config.linux?.securityContext?.namespaceOptions ?? null } },
          labels: s.config.labels ?? {}, annotations: s.config.annotations ?? {}, runtimeHandler: '',
        },
        info: {}, containersStatuses: [], timestamp: '0',
      };
    });
  }

  listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]> {
    return Promise.resolve().then(() => {
      this.record('listPodSandbox', filter);
      return [...this.sandboxes.values()]
        .filter((s) => matches(s.config.labels ?? {}, filter?.labelSelector) && (filter?.id === undefined || filter.id === s.id))
        .map((s) => ({ id: s.id, metadata: s.config.metadata, state: s.state, createdAt: String(s.createdAt), labels: s.config.labels ?? {}, annotations: s.config.annotations ?? {}, runtimeHandler: '' }));
    });
  }

  // ---- containers ----

  createContainer(request: CreateContainerRequest): Promise<string> {
    return Promise.resolve().then(() => {
      this.record('createContainer', request);
      if (!this.sandboxes.has(request.podSandboxId)) throw new OrchError('CRI_NOT_FOUND', 'not-found', `sandbox ${request.podSandboxId} not found`);
      const id = `ctr-${++this.seq}`;
      this.containers.set(id, {
        id, sandboxId: request.podSandboxId, config: request.config, sandboxConfig: request.sandboxConfig, state: 'CONTAINER_CREATED',
        createdAt: this.tick(), startedAt: 0n, finishedAt: 0n, exitCode: 0, reason: '', message: '',
      });
      return id;
    });
  }

  startContainer(id: string): Promise<void> {
    return Promise.resolve().then(() => {
      const c = this.mustContainer(id);
      try {
        this.record('startContainer', id);
      } catch (err) {
        Object.assign(c, { state: 'CONTAINER_EXITED', finishedAt: this.tick(), exitCode: 128, reason: 'StartError', message: err instanceof Error ? err.message : String(err) });
        throw err;
      }
      Object.assign(c, { state: 'CONTAINER_RUNNING', startedAt: this.tick() });
    });
  }

  stopContainer(request: StopContainerRequest): Promise<void> {
    return Promise.resolve().then(() => {
      this.record('stopContainer', request);
      const c = this.containers.get(request.containerId);
      if (c?.state === 'CONTAINER_RUNNING') Object.assign(c, { state: 'CONTAINER_EXITED', finishedAt: this.tick(), exitCode: 137, reason: 'Error' });
    });
  }

  removeContainer(id: string): Promise<void> {
    return Promise.resolve().then(() => {
      this.record('removeContainer', id);
      this.containers.delete(id);
    });
  }

  listContainers(filter?: ContainerFilter): Promise<Container[]> {
    return Promise.resolve().then(() => {
      this.record('listContainers', filter);
      return [...this.containers.values()]
        .filter((c) => matches(c.config.labels ?? {}, filter?.labelSelector) && (filter?.podSandboxId === undefined || filter.podSandboxId === c.sandboxId))
        .map((c) => ({
          id: c.id, podSandboxId: c.sandboxId, metadata: c.config.metadata, image: c.config.image, imageRef: c.config.image.image, state: c.state,
          createdAt: String(c.createdAt), labels: c.config.labels ?? {}, annotations: c.config.annotations ?? {}, imageId: '',
        }));
    });
  }

  containerStatus(request: { readonly containerId: string }): Promise<ContainerStatusResponse> {
    return Promise.resolve().then(() => {
      this.record('containerStatus', request);
      const c = this.mustContainer(request.containerId);
      return {
        status: {
          id: c.id, metadata: c.config.metadata, state: c.state, createdAt: String(c.createdAt), startedAt: String(c.startedAt), finishedAt: String(c.finishedAt),
          exitCode: c.exitCode, image: c.config.image, imageRef: c.config.image.image, reason: c.reason, message: c.message, labels: c.config.labels ?? {},
          annotations: c.config.annotations ?? {}, mounts: c.config.mounts ?? [], logPath: `${c.sandboxConfig.logDirectory ?? ''}/${c.config.logPath ?? ''}`,
          resources: null, imageId: '', user: null, imageSource: '',
        },
        info: {},
      };
    });
  }

  // ---- exec ----

  execSync(request: ExecSyncRequest): Promise<ExecSyncResponse> {
    return Promise.resolve().then(() => {
      this.record('execSync', request);
      const c = this.mustContainer(request.containerId);
      if (c.state !== 'CONTAINER_RUNNING') throw new OrchError('CRI_ERROR', 'internal', `container ${c.id} is not running`);
      const r = this.execResults.get(request.cmd.join(' ')) ?? { exitCode: 0 };
      return { exitCode: r.exitCode, stdout: Buffer.from(r.stdout ?? ''), stderr: Buffer.from(r.stderr ?? '') };
    });
  }

  // ---- images ----

  imageStatus(request: ImageStatusRequest): Promise<ImageStatusResponse> {
    return Promise.resolve().then(() => {
      this.record('imageStatus', request);
      const id = this.images.get(request.image.image) ?? ([...this.images.values()].includes(request.image.image) ? request.image.image : undefined);
      const image: Image | null =
        id === undefined ? null : { id, repoTags: [request.image.image], repoDigests: [], size: '1', uid: { value: '0' }, username: '', spec: null, pinned: false, imageSource: '' };
      return { image, info: {} };
    });
  }

  pullImage(request: PullImageRequest): Promise<string> {
    return Promise.resolve().then(() => {
      this.record('pullImage', request);
      const id = this.registry.get(request.image.image);
      if (id === undefined) throw new OrchError('CRI_ERROR', 'internal', `failed to resolve reference "${request.image.image}": not found`);
      this.images.set(request.image.image, id);
      return id;
    });
  }
}
