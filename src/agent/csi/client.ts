/**
 * The node's gRPC client of one CSI driver (csi.v1 Identity and Node services of the CSI spec,
 * proto/csi-v1.proto, v1.8.0 as upstream v1.28 vendors), on the unix socket the driver gave at
 * registration. Every call has a deadline; errors carry the driver's gRPC code and details.
 */
import { Metadata, credentials, status, type Client, type GrpcObject, type ServiceClientConstructor } from '@grpc/grpc-js';
import { durationToMs, parseDurationField } from '../../api/duration.js';
import { OrchError } from '../../api/errors.js';
import { grpcErrorText, grpcPackage, unaryCall } from '../../api/grpc-proto.js';
import { CSI_INVALID_TIMEOUT } from './errors.js';

export const CSI_PROTO = 'csi-v1.proto';
/** Upstream's csiTimeout for node calls (2 min); the pod sync retries after it. */
export const CSI_CALL_TIMEOUT_MS = 120_000;
/** Shortens CSI_CALL_TIMEOUT_MS (a Go duration) for tests and experiments. */
export const CSI_TIMEOUT_ENV = 'NODEAGENT_CSI_TIMEOUT';

/** The node calls' deadline: `NODEAGENT_CSI_TIMEOUT` when set, else upstream's. Throws CSI_INVALID_TIMEOUT naming the variable. */
export function csiTimeoutFromEnv(env: Readonly<Record<string, string | undefined>>): number {
  const text = env[CSI_TIMEOUT_ENV];
  if (text === undefined || text === '') return CSI_CALL_TIMEOUT_MS;
  const ms = durationToMs(parseDurationField(text, CSI_TIMEOUT_ENV));
  if (!(ms > 0)) throw new OrchError(CSI_INVALID_TIMEOUT, 'invalid', `${CSI_TIMEOUT_ENV}=${text}: the timeout must be a positive duration such as 30s`, { subject: CSI_TIMEOUT_ENV });
  return ms;
}

/**
 * False for the gRPC codes after which the driver may still be working on the call (upstream's
 * isFinalError: Canceled, DeadlineExceeded, Unavailable, ResourceExhausted, Aborted) and for
 * errors that are not gRPC statuses; true for the rest, which say the call did nothing.
 */
export function isFinalCsiError(err: unknown): boolean {
  const code: unknown = typeof err === 'object' && err !== null ? Reflect.get(err, 'code') : undefined;
  if (typeof code !== 'number') return false;
  const maybeRunning: readonly number[] = [status.CANCELLED, status.DEADLINE_EXCEEDED, status.UNAVAILABLE, status.RESOURCE_EXHAUSTED, status.ABORTED];
  return !maybeRunning.includes(code);
}

/** A volume capability as the loader takes it (camelCase fields). */
export interface VolumeCapability {
  /** volumeMountGroup: the pod's fsGroup, for drivers with VOLUME_MOUNT_GROUP (they apply it themselves). */
  readonly mount: { readonly fsType: string; readonly mountFlags: readonly string[]; readonly volumeMountGroup?: string };
  readonly accessMode: { readonly mode: 'SINGLE_NODE_WRITER' | 'SINGLE_NODE_READER_ONLY' | 'MULTI_NODE_READER_ONLY' | 'MULTI_NODE_SINGLE_WRITER' | 'MULTI_NODE_MULTI_WRITER' };
}

export interface NodeInfo {
  readonly nodeId: string;
  readonly maxVolumesPerNode: number;
  readonly topology: Readonly<Record<string, string>>;
}

export interface StageRequest {
  readonly volumeId: string;
  readonly stagingTargetPath: string;
  readonly volumeCapability: VolumeCapability;
  readonly publishContext: Readonly<Record<string, string>>;
  readonly volumeContext: Readonly<Record<string, string>>;
  /** The data of the volume's nodeStageSecretRef (stage) or nodePublishSecretRef (publish) secret. */
  readonly secrets: Readonly<Record<string, string>>;
}

export interface PublishRequest extends StageRequest {
  readonly targetPath: string;
  readonly readonly: boolean;
}

export interface ExpandRequest {
  readonly volumeId: string;
  /** The published target path. */
  readonly volumePath: string;
  /** The staging path when the driver stages, else ''. */
  readonly stagingTargetPath: string;
  readonly requiredBytes: number;
  readonly volumeCapability: VolumeCapability;
  /** The data of the volume's nodeExpandSecretRef secret. */
  readonly secrets: Readonly<Record<string, string>>;
}

/** NodeGetVolumeStats's answer, in bytes and inodes (each undefined when the driver did not say). */
export interface VolumeStats {
  readonly bytes?: { readonly available: number; readonly total: number; readonly used: number };
  readonly inodes?: { readonly available: number; readonly total: number; readonly used: number };
  /** The driver's VolumeCondition, when it reports one. */
  readonly condition?: { readonly abnormal: boolean; readonly message: string };
}

export interface CsiNodeClient {
  nodeGetInfo(): Promise<NodeInfo>;
  /** The node service's capability types (`STAGE_UNSTAGE_VOLUME`, `GET_VOLUME_STATS`, ...). */
  nodeGetCapabilities(): Promise<string[]>;
  nodeStageVolume(request: StageRequest): Promise<void>;
  nodeUnstageVolume(volumeId: string, stagingTargetPath: string): Promise<void>;
  nodePublishVolume(request: PublishRequest): Promise<void>;
  nodeUnpublishVolume(volumeId: string, targetPath: string): Promise<void>;
  /** For drivers with GET_VOLUME_STATS: the usage of a published (or staged) volume. */
  nodeGetVolumeStats(volumeId: string, volumePath: string, stagingTargetPath: string): Promise<VolumeStats>;
  /** For drivers with EXPAND_VOLUME: grows the file system of a published volume; the driver's new capacity (0: not said). */
  nodeExpandVolume(request: ExpandRequest): Promise<number>;
  close(): void;
}

/** Describes a failed call as upstream's logs do: `rpc error: code = ... desc = ...`. */
export function csiErrorText(err: unknown): string {
  return grpcErrorText(err);
}

export function dialCsi(endpoint: string, timeoutMs: number = CSI_CALL_TIMEOUT_MS): CsiNodeClient {
  const pkg = (grpcPackage(CSI_PROTO)['csi'] as GrpcObject)['v1'] as GrpcObject;
  const make = (service: string): Client => {
    const Constructor = pkg[service] as ServiceClientConstructor;
    return new Constructor(`unix://${endpoint}`, credentials.createInsecure(), { 'grpc.default_authority': 'localhost' });
  };
  const node = make('Node');
  const call = <T>(method: string, request: object): Promise<T> => unaryCall<T>(node, method, request, new Metadata(), timeoutMs);
  return {
    async nodeGetInfo() {
      const r = await call<{ nodeId: string; maxVolumesPerNode: number; accessibleTopology: { segments: Record<string, string> } | null }>('NodeGetInfo', {});
      return { nodeId: r.nodeId, maxVolumesPerNode: r.maxVolumesPerNode, topology: r.accessibleTopology?.segments ?? {} };
    },
    async nodeGetCapabilities() {
      const r = await call<{ capabilities: { rpc: { type: string } | null }[] }>('NodeGetCapabilities', {});
      return r.capabilities.flatMap((c) => (c.rpc === null ? [] : [c.rpc.type]));
    },
    async nodeStageVolume(request) {
      await call('NodeStageVolume', request);
    },
    async nodeUnstageVolume(volumeId, stagingTargetPath) {
      await call('NodeUnstageVolume', { volumeId, stagingTargetPath });
    },
    async nodePublishVolume(request) {
      await call('NodePublishVolume', request);
    },
    async nodeUnpublishVolume(volumeId, targetPath) {
      await call('NodeUnpublishVolume', { volumeId, targetPath });
    },
    async nodeGetVolumeStats(volumeId, volumePath, stagingTargetPath) {
      type Usage = { available: number; total: number; used: number; unit: string };
      const r = await call<{ usage: Usage[]; volumeCondition: { abnormal: boolean; message: string } | null }>('NodeGetVolumeStats', { volumeId, volumePath, stagingTargetPath });
      const of = (unit: string): Record<string, { available: number; total: number; used: number }> => {
        const u = r.usage.find((x) => x.unit === unit);
        return u === undefined ? {} : { [unit === 'BYTES' ? 'bytes' : 'inodes']: { available: u.available, total: u.total, used: u.used } };
      };
      return { ...of('BYTES'), ...of('INODES'), ...(r.volumeCondition === null ? {} : { condition: { abnormal: r.volumeCondition.abnormal, message: r.volumeCondition.message } }) };
    },
    async nodeExpandVolume(request) {
      const { requiredBytes, ...rest } = request;
      const r = await call<{ capacityBytes: number }>('NodeExpandVolume', { ...rest, capacityRange: { requiredBytes, limitBytes: 0 } });
      return r.capacityBytes;
    },
    close() {
      node.close();
    },
  };
}
