/**
 * The CRI v1 client of nodeagent: gRPC to the container runtime (containerd) over a unix
 * socket, for the RuntimeService and the ImageService, described by our own
 * proto/cri-v1.proto.
 *
 * Owns: endpoint parsing (--container-runtime-endpoint, --image-service-endpoint), the gRPC
 * channels, per-call deadlines (runtimeRequestTimeout), and the mapping of gRPC failures to
 * OrchErrors (CRI_TIMEOUT, CRI_UNAVAILABLE, CRI_NOT_FOUND, CRI_CANCELLED, CRI_CLOSED,
 * CRI_ERROR, CRI_INVALID_ENDPOINT, CRI_INVALID_TIMEOUT, CRI_PROTO_MISSING), and, with a tracer, a
 * client span for every call (tracing.ts) with its trace context sent as gRPC metadata.
 * Must not: retry, cache, decide anything about pods (that is the runtime manager's job), or
 * crash the process when the runtime is down: every failure is a rejected promise of the call
 * that caused it.
 *
 * Also: MemoryRuntime, the in-memory runtime the CRI behaviour suite holds to containerd's
 * behaviour: the unit tests' fake (testing.ts) and the runtime of simulated nodes.
 */
export { CriClient, connectCri, DEFAULT_CRI_REQUEST_TIMEOUT_MS, type CriClientOptions } from './client.js';
export { parseCriEndpoint, type CriEndpoint } from './endpoint.js';
export { MemoryRuntime, type MemoryContainer, type MemorySandbox } from './memory-runtime.js';
export { CRI_ERROR_CODES, type CriErrorCode } from './errors.js';
export { findCriProto } from './proto.js';
export type {
  ContainerService,
  ContainerUpdateService,
  ImageService,
  RuntimeInfoService,
  RuntimeService,
  SandboxService,
  StatsService,
  StreamingService,
} from './services.js';
export * from './types-common.js';
export type * from './types-container.js';
export type * from './types-pod.js';
export type * from './types-stats-image.js';
