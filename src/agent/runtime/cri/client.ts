/**
 * CriClient: the CRI v1 RuntimeService and ImageService over gRPC on unix sockets. One channel
 * per distinct endpoint, created lazily by gRPC on the first call; nothing is sent before that,
 * so constructing a client never fails because the runtime is down.
 */
import {
  Client,
  Metadata,
  credentials,
  type CallOptions as GrpcCallOptions,
  type ChannelOptions,
  type ClientUnaryCall,
} from '@grpc/grpc-js';
import { OrchError } from '../../../api/errors.js';
import type { Tracer } from '../../../api/tracing/index.js';
import { parseCriEndpoint, type CriEndpoint } from './endpoint.js';
import { criCallError } from './errors.js';
import { cachingListDeserializer } from './list-cache.js';
import { criMethods, type CriMethod, type CriServiceName } from './proto.js';
import type { ImageService, RuntimeService } from './services.js';
import { tracedCriCall } from './tracing.js';
import type { CallOptions, ImageSpec } from './types-common.js';
import type {
  AttachRequest,
  Container,
  ContainerFilter,
  ContainerStatusRequest,
  ContainerStatusResponse,
  CreateContainerRequest,
  ExecRequest,
  ExecSyncRequest,
  ExecSyncResponse,
  PortForwardRequest,
  StopContainerRequest,
  UpdateContainerResourcesRequest,
  CheckpointContainerRequest,
} from './types-container.js';
import type {
  PodSandbox,
  PodSandboxFilter,
  PodSandboxStatusRequest,
  PodSandboxStatusResponse,
  RunPodSandboxRequest,
  RuntimeConfig,
  StatusResponse,
  VersionResponse,
} from './types-pod.js';
import type {
  ContainerStats,
  ContainerStatsFilter,
  Image,
  ImageFsInfoResponse,
  ImageStatusRequest,
  ImageStatusResponse,
  PodSandboxStats,
  PodSandboxStatsFilter,
  PullImageRequest,
} from './types-stats-image.js';

/** runtimeRequestTimeout's default. */
export const DEFAULT_CRI_REQUEST_TIMEOUT_MS = 120_000;
/** The largest message either side may send (as the kubelet: 16 MiB). */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export interface CriClientOptions {
  /** --container-runtime-endpoint: `unix:///path` or an absolute socket path. */
  readonly runtimeEndpoint: string;
  /** --image-service-endpoint; defaults to the runtime endpoint. */
  readonly imageEndpoint?: string;
  /** runtimeRequestTimeout in ms (default 2 minutes). */
  readonly requestTimeoutMs?: number;
  /** Overrides where proto/cri-v1.proto is (default: found from this module's location). */
  readonly protoPath?: string;
  /** Traces every call (a client span, its trace context sent as gRPC metadata); absent: no tracing. */
  readonly tracer?: Tracer;
}

interface Channel {
  readonly endpoint: CriEndpoint;
  readonly client: Client;
  readonly methods: ReadonlyMap<string, CriMethod>;
}

/** No deadline, the request timeout, or the request timeout plus extra ms. */
type Deadline = 'none' | 'request' | { readonly extraMs: number };

const channelOptions: ChannelOptions = {
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 3_000,
  // Channelz (gRPC's introspection service, never served here) keeps counters, timestamps and
  // traces for every call: a tenth of a call's client CPU, paid twice a second by the PLEG.
  'grpc.enable_channelz': 0,
};

/**
 * Implements every CRI call the agent makes. Safe to share; calls may run concurrently.
 * Throws from the constructor only for invalid endpoints (CRI_INVALID_ENDPOINT) or a missing
 * proto file (CRI_PROTO_MISSING).
 */
export class CriClient implements RuntimeService, ImageService {
  readonly requestTimeoutMs: number;
  private readonly runtime: Channel;
  private readonly image: Channel;
  /** Unfiltered list calls (the PLEG's, housekeeping's): see list-cache.ts. */
  private readonly listDecoders: ReadonlyMap<string, (buf: Buffer) => unknown>;
  private readonly tracer: Tracer | undefined;
  private closed = false;

  constructor(options: CriClientOptions) {
    const timeout = options.requestTimeoutMs ?? DEFAULT_CRI_REQUEST_TIMEOUT_MS;
    if (!Number.isFinite(timeout) || timeout <= 0) {
      throw new OrchError('CRI_INVALID_TIMEOUT', 'invalid', `runtimeRequestTimeout must be positive, got ${timeout} ms`, {
        subject: 'runtimeRequestTimeout',
      });
    }
    this.requestTimeoutMs = timeout;
    this.tracer = options.tracer;
    const runtimeEndpoint = parseCriEndpoint(options.runtimeEndpoint, '--container-runtime-endpoint');
    const imageEndpoint =
      options.imageEndpoint === undefined || options.imageEndpoint === ''
        ? runtimeEndpoint
        : parseCriEndpoint(options.imageEndpoint, '--image-service-endpoint');
    const protoPath = options.protoPath;
    const runtimeMethods = criMethods('RuntimeService', protoPath);
    const imageMethods = criMethods('ImageService', protoPath);
    const runtimeClient = new Client(runtimeEndpoint.target, credentials.createInsecure(), channelOptions);
    const imageClient =
      imageEndpoint.target === runtimeEndpoint.target
        ? runtimeClient
        : new Client(imageEndpoint.target, credentials.createInsecure(), channelOptions);
    this.runtime = { endpoint: runtimeEndpoint, client: runtimeClient, methods: runtimeMethods };
    this.image = { endpoint: imageEndpoint, client: imageClient, methods: imageMethods };
    const listDecoders = new Map<string, (buf: Buffer) => unknown>();
    // PodSandbox.state is field 3, Container.state field 6 (proto/cri-v1.proto).
    for (const [method, field, stateField] of [['ListPodSandbox', 'items', 3], ['ListContainers', 'containers', 6]] as const) {
      const definition = runtimeMethods.get(method);
      if (definition !== undefined) listDecoders.set(method, cachingListDeserializer(definition.responseDeserialize, field, stateField));
    }
    this.listDecoders = listDecoders;
  }

  /** Releases the channels; later calls reject with CRI_CLOSED. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.runtime.client.close();
    if (this.image.client !== this.runtime.client) this.image.client.close();
  }

  // ---- RuntimeInfoService ----

  version(apiVersion: string, options?: CallOptions): Promise<VersionResponse> {
    return this.call('runtime', 'Version', { version: apiVersion }, 'request', options);
  }

  status(request: { readonly verbose?: boolean } = {}, options?: CallOptions): Promise<StatusResponse> {
    return this.call('runtime', 'Status', request, 'request', options);
  }

  async updateRuntimeConfig(config: RuntimeConfig, options?: CallOptions): Promise<void> {
    await this.call('runtime', 'UpdateRuntimeConfig', { runtimeConfig: config }, 'request', options);
  }

  // ---- SandboxService ----

  async runPodSandbox(request: RunPodSandboxRequest, options?: CallOptions): Promise<string> {
    const res = await this.call<{ podSandboxId: string }>('runtime', 'RunPodSandbox', request, 'request', options);
    return res.podSandboxId;
  }

  async stopPodSandbox(podSandboxId: string, options?: CallOptions): Promise<void> {
    await this.call('runtime', 'StopPodSandbox', { podSandboxId }, 'request', options);
  }

  async removePodSandbox(podSandboxId: string, options?: CallOptions): Promise<void> {
    await this.call('runtime', 'RemovePodSandbox', { podSandboxId }, 'request', options);
  }

  podSandboxStatus(request: PodSandboxStatusRequest, options?: CallOptions): Promise<PodSandboxStatusResponse> {
    return this.call('runtime', 'PodSandboxStatus', request, 'request', options);
  }

  async listPodSandbox(filter?: PodSandboxFilter, options?: CallOptions): Promise<PodSandbox[]> {
    const res = await this.call<{ items: PodSandbox[] }>('runtime', 'ListPodSandbox', withFilter(filter), 'request', options, this.unfilteredDecoder('ListPodSandbox', filter));
    return res.items;
  }

  // ---- ContainerService ----

  async createContainer(request: CreateContainerRequest, options?: CallOptions): Promise<string> {
    const res = await this.call<{ containerId: string }>('runtime', 'CreateContainer', request, 'request', options);
    return res.containerId;
  }

  async startContainer(containerId: string, options?: CallOptions): Promise<void> {
    await this.call('runtime', 'StartContainer', { containerId }, 'request', options);
  }

  async stopContainer(request: StopContainerRequest, options?: CallOptions): Promise<void> {
    // The runtime waits up to `timeout` seconds before SIGKILL: the deadline must cover that.
    await this.call('runtime', 'StopContainer', request, { extraMs: Math.max(0, request.timeout) * 1000 }, options);
  }

  async removeContainer(containerId: string, options?: CallOptions): Promise<void> {
    await this.call('runtime', 'RemoveContainer', { containerId }, 'request', options);
  }

  async listContainers(filter?: ContainerFilter, options?: CallOptions): Promise<Container[]> {
    const res = await this.call<{ containers: Container[] }>('runtime', 'ListContainers', withFilter(filter), 'request', options, this.unfilteredDecoder('ListContainers', filter));
    return res.containers;
  }

  containerStatus(request: ContainerStatusRequest, options?: CallOptions): Promise<ContainerStatusResponse> {
    return this.call('runtime', 'ContainerStatus', request, 'request', options);
  }

  // ---- ContainerUpdateService ----

  async updateContainerResources(request: UpdateContainerResourcesRequest, options?: CallOptions): Promise<void> {
    await this.call('runtime', 'UpdateContainerResources', request, 'request', options);
  }

  async reopenContainerLog(containerId: string, options?: CallOptions): Promise<void> {
    await this.call('runtime', 'ReopenContainerLog', { containerId }, 'none', options);
  }

  async checkpointContainer(request: CheckpointContainerRequest, options?: CallOptions): Promise<void> {
    // The runtime may take up to `timeout` seconds to write the archive.
    await this.call('runtime', 'CheckpointContainer', request, { extraMs: Math.max(0, request.timeout ?? 0) * 1000 }, options);
  }

  // ---- StreamingService ----

  execSync(request: ExecSyncRequest, options?: CallOptions): Promise<ExecSyncResponse> {
    const extraMs = Math.max(0, request.timeout ?? 0) * 1000;
    return this.call('runtime', 'ExecSync', request, { extraMs }, options);
  }

  async exec(request: ExecRequest, options?: CallOptions): Promise<string> {
    return (await this.call<{ url: string }>('runtime', 'Exec', request, 'none', options)).url;
  }

  async attach(request: AttachRequest, options?: CallOptions): Promise<string> {
    return (await this.call<{ url: string }>('runtime', 'Attach', request, 'none', options)).url;
  }

  async portForward(request: PortForwardRequest, options?: CallOptions): Promise<string> {
    return (await this.call<{ url: string }>('runtime', 'PortForward', request, 'none', options)).url;
  }

  // ---- StatsService ----

  async containerStats(containerId: string, options?: CallOptions): Promise<ContainerStats> {
    const res = await this.call<{ stats: ContainerStats | null }>('runtime', 'ContainerStats', { containerId }, 'request', options);
    return this.required(res.stats, 'ContainerStats', containerId);
  }

  async listContainerStats(filter?: ContainerStatsFilter, options?: CallOptions): Promise<ContainerStats[]> {
    const res = await this.call<{ stats: ContainerStats[] }>('runtime', 'ListContainerStats', withFilter(filter), 'request', options);
    return res.stats;
  }

  async podSandboxStats(podSandboxId: string, options?: CallOptions): Promise<PodSandboxStats> {
    const res = await this.call<{ stats: PodSandboxStats | null }>('runtime', 'PodSandboxStats', { podSandboxId }, 'request', options);
    return this.required(res.stats, 'PodSandboxStats', podSandboxId);
  }

  async listPodSandboxStats(filter?: PodSandboxStatsFilter, options?: CallOptions): Promise<PodSandboxStats[]> {
    const res = await this.call<{ stats: PodSandboxStats[] }>('runtime', 'ListPodSandboxStats', withFilter(filter), 'request', options);
    return res.stats;
  }

  // ---- ImageService ----

  async listImages(filter?: ImageSpec, options?: CallOptions): Promise<Image[]> {
    const request = filter === undefined ? {} : { filter: { image: filter } };
    const res = await this.call<{ images: Image[] }>('image', 'ListImages', request, 'request', options);
    return res.images;
  }

  imageStatus(request: ImageStatusRequest, options?: CallOptions): Promise<ImageStatusResponse> {
    return this.call('image', 'ImageStatus', request, 'request', options);
  }

  async pullImage(request: PullImageRequest, options?: CallOptions): Promise<string> {
    return (await this.call<{ imageRef: string }>('image', 'PullImage', request, 'none', options)).imageRef;
  }

  async removeImage(image: ImageSpec, options?: CallOptions): Promise<void> {
    await this.call('image', 'RemoveImage', { image }, 'request', options);
  }

  imageFsInfo(options?: CallOptions): Promise<ImageFsInfoResponse> {
    return this.call('image', 'ImageFsInfo', {}, 'request', options);
  }

  // ---- the one gRPC call path ----

  private required<T>(value: T | null, method: string, id: string): T {
    if (value === null) {
      throw new OrchError('CRI_ERROR', 'internal', `CRI ${method}: the runtime returned no stats for ${id}`, {
        subject: `CRI ${method}`,
      });
    }
    return value;
  }

  private unfilteredDecoder(method: string, filter: object | undefined): ((buf: Buffer) => unknown) | undefined {
    return filter === undefined ? this.listDecoders.get(method) : undefined;
  }

  private call<Res>(
    which: 'runtime' | 'image',
    method: string,
    request: object,
    deadline: Deadline,
    options: CallOptions | undefined,
    deserialize?: (buf: Buffer) => unknown,
  ): Promise<Res> {
    const send = (metadata: Metadata): Promise<Res> => this.send(which, method, request, deadline, options, deserialize, metadata);
    return this.tracer === undefined ? send(new Metadata()) : tracedCriCall(this.tracer, serviceOf(which), method, request, send);
  }

  private send<Res>(
    which: 'runtime' | 'image',
    method: string,
    request: object,
    deadline: Deadline,
    options: CallOptions | undefined,
    deserialize: ((buf: Buffer) => unknown) | undefined,
    metadata: Metadata,
  ): Promise<Res> {
    const channel = which === 'runtime' ? this.runtime : this.image;
    const timeoutMs =
      deadline === 'none' ? undefined : deadline === 'request' ? this.requestTimeoutMs : this.requestTimeoutMs + deadline.extraMs;
    const signal = options?.signal;
    return new Promise<Res>((resolve, reject) => {
      let aborted = false;
      const startedAt = Date.now();
      const deadlineAt = timeoutMs === undefined ? undefined : startedAt + timeoutMs;
      const fail = (err: unknown): void => {
        const deadlinePassed = deadlineAt !== undefined && Date.now() >= deadlineAt;
        reject(criCallError(err, { method, endpoint: channel.endpoint.raw, timeoutMs, deadlinePassed, aborted }));
      };
      if (this.closed) {
        reject(new OrchError('CRI_CLOSED', 'unavailable', `CRI ${method}: the client was closed`, { subject: channel.endpoint.raw }));
        return;
      }
      const definition = channel.methods.get(method);
      if (definition === undefined) {
        fail(new Error(`the proto has no method ${serviceOf(which)}.${method}`));
        return;
      }
      if (signal?.aborted === true) {
        aborted = true;
        fail(signal.reason);
        return;
      }
      const onAbort = (): void => {
        aborted = true;
        call.cancel();
      };
      const grpcOptions: GrpcCallOptions = deadlineAt === undefined ? {} : { deadline: deadlineAt };
      let call: ClientUnaryCall;
      try {
        call = channel.client.makeUnaryRequest(
          definition.path,
          definition.requestSerialize,
          deserialize ?? definition.responseDeserialize,
          request,
          metadata,
          grpcOptions,
          (err, value) => {
            signal?.removeEventListener('abort', onAbort);
            if (err !== null) fail(err);
            else if (value === undefined) fail(new Error('empty response'));
            else resolve(value as Res);
          },
        );
      } catch (err) {
        // e.g. a request the proto cannot encode: no call was started
        fail(err);
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

function serviceOf(which: 'runtime' | 'image'): CriServiceName {
  return which === 'runtime' ? 'RuntimeService' : 'ImageService';
}

function withFilter(filter: object | undefined): object {
  return filter === undefined ? {} : { filter };
}

/** Creates a CriClient (see CriClientOptions); sends nothing until the first call. */
export function connectCri(options: CriClientOptions): CriClient {
  return new CriClient(options);
}
