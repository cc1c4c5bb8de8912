/**
 * MemoryRuntime: an in-memory CRI runtime and image service (RuntimeService and ImageService of
 * services.ts) for the unit tests of the modules that call the runtime. It behaves as
 * containerd does in what the agent relies on; the CRI behaviour suite (behaviour.ts) runs
 * against both. Sandboxes and containers keep their configs, states and timestamps; a
 * container runs until `exit` is called, StopContainer kills it (exit code 137) or its sandbox
 * stops. Nothing runs: ExecSync answers from `execResults`, the streaming calls hand out URLs
 * under `streamingUrl` that nothing serves, and stats come from `usage`.
 *
 * Test controls: `calls` and `callsOf` (every call in order), `failNext(method, error)`,
 * `exit(id, code)`, `execResults`, `usage`, `conditions`, and the image controls of
 * MemoryImageService (`images`, `registry`, `imageFs`). Tests import it from testing.ts (as FakeRuntime), the simulated nodes from index.ts.
 */
import { MemoryImageService } from './memory-images.js';
import { matchesLabels, notFound, runtimeError } from './memory-calls.js';
import { containerStats, podSandboxStats, type UsageSetting } from './memory-stats.js';
import type { RuntimeService } from './services.js';
import type { LinuxContainerResources, LinuxContainerResourcesStatus, StringMap } from './types-common.js';
import type {
  AttachRequest, Container, ContainerConfig, ContainerFilter, ContainerState, ContainerStatusRequest, ContainerStatusResponse,
  CreateContainerRequest, ExecRequest, ExecSyncRequest, ExecSyncResponse, PortForwardRequest, StopContainerRequest, UpdateContainerResourcesRequest, CheckpointContainerRequest,
} from './types-container.js';
import type {
  PodSandbox, PodSandboxConfig, PodSandboxFilter, PodSandboxState, PodSandboxStatusRequest, PodSandboxStatusResponse, RunPodSandboxRequest,
  RuntimeCondition, RuntimeConfig, StatusResponse, VersionResponse,
} from './types-pod.js';
import type { ContainerStats, ContainerStatsFilter, PodSandboxStats, PodSandboxStatsFilter } from './types-stats-image.js';

export type { UsageSetting } from './memory-stats.js';

export interface MemorySandbox {
  readonly id: string;
  readonly config: PodSandboxConfig;
  state: PodSandboxState;
  readonly createdAt: bigint;
  /** The pod IP while the sandbox is ready ('' on the host network). */
  ip: string;
}

export interface MemoryContainer {
  readonly id: string;
  readonly sandboxId: string;
  readonly config: ContainerConfig;
  readonly sandboxConfig: PodSandboxConfig;
  /** The ID of its image. */
  readonly imageId: string;
  state: ContainerState;
  readonly createdAt: bigint;
  startedAt: bigint;
  finishedAt: bigint;
  exitCode: number;
  reason: string;
  message: string;
  resources: LinuxContainerResources | undefined;
}

export interface MemoryExecResult {
  readonly exitCode: number;
  readonly stdout?: string;
  readonly stderr?: string;
}

/** What the fake reports of a container that SIGKILL ended. */
const KILLED = { state: 'CONTAINER_EXITED', exitCode: 137, reason: 'Error' } as const;

/** True when the object `id` with `labels` passes the id and label selector of `filter`. */
function selected(filter: { readonly id?: string; readonly labelSelector?: StringMap } | undefined, id: string, labels: StringMap | undefined): boolean {
  return (filter?.id === undefined || filter.id === id) && matchesLabels(labels ?? {}, filter?.labelSelector);
}

export class MemoryRuntime extends MemoryImageService implements RuntimeService {
  readonly sandboxes = new Map<string, MemorySandbox>();
  readonly containers = new Map<string, MemoryContainer>();
  /** ExecSync results by the command joined with spaces (default: exit code 0, no output). */
  readonly execResults = new Map<string, MemoryExecResult>();
  /** CPU and memory usage by container ID (default: none used). */
  readonly usage = new Map<string, UsageSetting>();
  /** What Status reports. */
  conditions: RuntimeCondition[] = [
    { type: 'RuntimeReady', status: true, reason: '', message: '' },
    { type: 'NetworkReady', status: true, reason: '', message: '' },
  ];
  /** The base of the URLs Exec, Attach and PortForward hand out. */
  streamingUrl = 'http://127.0.0.1:0';
  /** The pod CIDR UpdateRuntimeConfig was last given. */
  podCidr = '';

  /** The container exits now with `exitCode` (reason Completed for 0, Error otherwise, as containerd). */
  exit(id: string, exitCode: number, reason = exitCode === 0 ? 'Completed' : 'Error'): void {
    const c = this.mustContainer(id);
    Object.assign(c, { state: 'CONTAINER_EXITED', finishedAt: this.tick(), exitCode, reason });
  }

  private mustContainer(id: string): MemoryContainer {
    const c = this.containers.get(id);
    if (c === undefined) throw notFound(`container "${id}"`);
    return c;
  }

  private mustSandbox(id: string): MemorySandbox {
    const s = this.sandboxes.get(id);
    if (s === undefined) throw notFound(`sandbox "${id}"`);
    return s;
  }

  private mustRun(id: string): MemoryContainer {
    const c = this.mustContainer(id);
    if (c.state !== 'CONTAINER_RUNNING') throw runtimeError(`container ${id} is in ${c.state} state`);
    return c;
  }

  private kill(c: MemoryContainer): void {
    if (c.state === 'CONTAINER_RUNNING') Object.assign(c, KILLED, { finishedAt: this.tick() });
  }

  // ---- runtime ----

  version(apiVersion: string): Promise<VersionResponse> {
    return this.answer('version', apiVersion, () => ({ version: '0.1.0', runtimeName: 'fake', runtimeVersion: '0.0.0', runtimeApiVersion: 'v1' }));
  }

  status(request?: { readonly verbose?: boolean }): Promise<StatusResponse> {
    return this.answer('status', request, () => ({ status: { conditions: [...this.conditions] }, info: {}, runtimeHandlers: [], features: null }));
  }

  updateRuntimeConfig(config: RuntimeConfig): Promise<void> {
    return this.answer('updateRuntimeConfig', config, () => {
      this.podCidr = config.networkConfig?.podCidr ?? '';
    });
  }

  // ---- sandboxes ----

  runPodSandbox(request: RunPodSandboxRequest): Promise<string> {
    return this.answer('runPodSandbox', request, () => {
      const id = `sandbox-${this.next()}`;
      const hostNetwork = request.config.linux?.securityContext?.namespaceOptions?.network === 'NODE';
      this.sandboxes.set(id, { id, config: request.config, state: 'SANDBOX_READY', createdAt: this.tick(), ip: hostNetwork ? '' : `10.88.0.${this.sandboxes.size + 2}` });
      return id;
    });
  }

  /** Kills its containers and releases its network (the IP). */
  stopPodSandbox(id: string): Promise<void> {
    return this.answer('stopPodSandbox', id, () => {
      const sandbox = this.mustSandbox(id);
      Object.assign(sandbox, { state: 'SANDBOX_NOTREADY', ip: '' });
      for (const c of this.containers.values()) if (c.sandboxId === id) this.kill(c);
    });
  }

  /** Stops it if needed and removes it with its containers. */
  removePodSandbox(id: string): Promise<void> {
    return this.answer('removePodSandbox', id, () => {
      this.sandboxes.delete(id);
      for (const c of [...this.containers.values()]) if (c.sandboxId === id) this.containers.delete(c.id);
    });
  }

  podSandboxStatus(request: PodSandboxStatusRequest): Promise<PodSandboxStatusResponse> {
    return this.answer('podSandboxStatus', request, () => {
      const s = this.mustSandbox(request.podSandboxId);
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
    return this.answer('listPodSandbox', filter, () =>
      [...this.sandboxes.values()]
        .filter((s) => selected(filter, s.id, s.config.labels) && (filter?.state === undefined || filter.state.state === s.state))
        .map((s) => ({ id: s.id, metadata: s.config.metadata, state: s.state, createdAt: String(s.createdAt), labels: s.config.labels ?? {}, annotations: s.config.annotations ?? {}, runtimeHandler: '' })),
    );
  }

  // ---- containers ----

  /** Needs the sandbox and the image to be present. */
  createContainer(request: CreateContainerRequest): Promise<string> {
    return this.answer('createContainer', request, () => {
      this.mustSandbox(request.podSandboxId);
      const imageId = this.imageIdOf(request.config.image.image);
      if (imageId === undefined) throw notFound(`image "${request.config.image.image}"`);
      const id = `ctr-${this.next()}`;
      this.containers.set(id, {
        id, sandboxId: request.podSandboxId, config: request.config, sandboxConfig: request.sandboxConfig, imageId, state: 'CONTAINER_CREATED',
        createdAt: this.tick(), startedAt: 0n, finishedAt: 0n, exitCode: 0, reason: '', message: '', resources: request.config.linux?.resources,
      });
      return id;
    });
  }

  /** Starts a created container; a start that fails (failNext) leaves it exited with reason StartError, as containerd. */
  startContainer(id: string): Promise<void> {
    return Promise.resolve().then(() => {
      const c = this.mustContainer(id);
      if (c.state !== 'CONTAINER_CREATED') {
        this.calls.push({ method: 'startContainer', arg: id });
        throw runtimeError(`container ${id} is in ${c.state} state`);
      }
      try {
        this.record('startContainer', id);
        if (this.sandboxes.get(c.sandboxId)?.state !== 'SANDBOX_READY') throw runtimeError(`sandbox container "${c.sandboxId}" is not running`);
      } catch (err) {
        Object.assign(c, { state: 'CONTAINER_EXITED', finishedAt: this.tick(), exitCode: 128, reason: 'StartError', message: err instanceof Error ? err.message : String(err) });
        throw err;
      }
      Object.assign(c, { state: 'CONTAINER_RUNNING', startedAt: this.tick() });
    });
  }

  /** Kills a running container (it ignores SIGTERM here: 137); a created or exited one is left as it is. */
  stopContainer(request: StopContainerRequest): Promise<void> {
    return this.answer('stopContainer', request, () => {
      this.kill(this.mustContainer(request.containerId));
    });
  }

  /** Kills it if needed and removes it; an unknown container is no error. */
  removeContainer(id: string): Promise<void> {
    return this.answer('removeContainer', id, () => {
      this.containers.delete(id);
    });
  }

  listContainers(filter?: ContainerFilter): Promise<Container[]> {
    return this.answer('listContainers', filter, () =>
      [...this.containers.values()]
        .filter((c) => selected(filter, c.id, c.config.labels))
        .filter((c) => (filter?.podSandboxId === undefined || filter.podSandboxId === c.sandboxId) && (filter?.state === undefined || filter.state.state === c.state))
        .map((c) => ({
          id: c.id, podSandboxId: c.sandboxId, metadata: c.config.metadata, image: c.config.image, imageRef: c.imageId, state: c.state,
          createdAt: String(c.createdAt), labels: c.config.labels ?? {}, annotations: c.config.annotations ?? {}, imageId: '',
        })),
    );
  }

  containerStatus(request: ContainerStatusRequest): Promise<ContainerStatusResponse> {
    return this.answer('containerStatus', request, () => {
      const c = this.mustContainer(request.containerId);
      const logPath = c.config.logPath === undefined || c.config.logPath === '' ? '' : `${c.sandboxConfig.logDirectory ?? ''}/${c.config.logPath}`;
      return {
        status: {
          id: c.id, metadata: c.config.metadata, state: c.state, createdAt: String(c.createdAt), startedAt: String(c.startedAt), finishedAt: String(c.finishedAt),
          exitCode: c.exitCode, image: { image: this.tagsOf(c.imageId)[0] ?? c.config.image.image }, imageRef: c.imageId, reason: c.reason, message: c.message,
          labels: c.config.labels ?? {}, annotations: c.config.annotations ?? {}, mounts: c.config.mounts ?? [], logPath,
          resources: c.resources === undefined ? null : { linux: resourcesStatus(c.resources) }, imageId: '', user: null, imageSource: '',
        },
        info: {},
      };
    });
  }

  updateContainerResources(request: UpdateContainerResourcesRequest): Promise<void> {
    return this.answer('updateContainerResources', request, () => {
      const c = this.mustContainer(request.containerId);
      if (request.linux !== undefined) c.resources = { ...c.resources, ...request.linux };
    });
  }

  /** Records the request for a running container and writes no archive (failNext makes it fail as a runtime without checkpointing does). */
  checkpointContainer(request: CheckpointContainerRequest): Promise<void> {
    return this.answer('checkpointContainer', request, () => {
      this.mustRun(request.containerId);
    });
  }

  reopenContainerLog(id: string): Promise<void> {
    return this.answer('reopenContainerLog', id, () => {
      this.mustRun(id);
    });
  }

  // ---- exec and streaming ----

  /** Answers from `execResults`; the container must be running. */
  execSync(request: ExecSyncRequest): Promise<ExecSyncResponse> {
    return this.answer('execSync', request, () => {
      this.mustRun(request.containerId);
      const r = this.execResults.get(request.cmd.join(' ')) ?? { exitCode: 0 };
      return { exitCode: r.exitCode, stdout: Buffer.from(r.stdout ?? ''), stderr: Buffer.from(r.stderr ?? '') };
    });
  }

  exec(request: ExecRequest): Promise<string> {
    return this.answer('exec', request, () => `${this.streamingUrl}/exec/${this.mustRun(request.containerId).id}-${this.next()}`);
  }

  attach(request: AttachRequest): Promise<string> {
    return this.answer('attach', request, () => `${this.streamingUrl}/attach/${this.mustRun(request.containerId).id}-${this.next()}`);
  }

  portForward(request: PortForwardRequest): Promise<string> {
    return this.answer('portForward', request, () => `${this.streamingUrl}/portforward/${this.mustSandbox(request.podSandboxId).id}-${this.next()}`);
  }

  // ---- stats (of running containers, from `usage`) ----

  containerStats(id: string): Promise<ContainerStats> {
    return this.answer('containerStats', id, () => containerStats(this.mustContainer(id), this.usage.get(id), this.tick()));
  }

  listContainerStats(filter?: ContainerStatsFilter): Promise<ContainerStats[]> {
    return this.answer('listContainerStats', filter, () =>
      [...this.containers.values()]
        .filter((c) => c.state === 'CONTAINER_RUNNING' && selected(filter, c.id, c.config.labels))
        .filter((c) => filter?.podSandboxId === undefined || filter.podSandboxId === c.sandboxId)
        .map((c) => containerStats(c, this.usage.get(c.id), this.tick())),
    );
  }

  podSandboxStats(id: string): Promise<PodSandboxStats> {
    return this.answer('podSandboxStats', id, () => this.sandboxStats(this.mustSandbox(id)));
  }

  listPodSandboxStats(filter?: PodSandboxStatsFilter): Promise<PodSandboxStats[]> {
    return this.answer('listPodSandboxStats', filter, () =>
      [...this.sandboxes.values()].filter((s) => s.state === 'SANDBOX_READY' && selected(filter, s.id, s.config.labels)).map((s) => this.sandboxStats(s)),
    );
  }

  private sandboxStats(s: MemorySandbox): PodSandboxStats {
    const running = [...this.containers.values()].filter((c) => c.sandboxId === s.id && c.state === 'CONTAINER_RUNNING');
    return podSandboxStats(s, running.map((c) => ({ container: c, usage: this.usage.get(c.id) })), this.tick());
  }
}

function resourcesStatus(r: LinuxContainerResources): LinuxContainerResourcesStatus {
  const n = (v: number | undefined): string => String(v ?? 0);
  return {
    cpuPeriod: n(r.cpuPeriod), cpuQuota: n(r.cpuQuota), cpuShares: n(r.cpuShares), memoryLimitInBytes: n(r.memoryLimitInBytes), oomScoreAdj: n(r.oomScoreAdj),
    cpusetCpus: r.cpusetCpus ?? '', cpusetMems: r.cpusetMems ?? '', unified: r.unified ?? {}, memorySwapLimitInBytes: n(r.memorySwapLimitInBytes),
  };
}
