/**
 * The node's gRPC client of one CSI driver (csi.v1 Identity and Node services of the CSI spec,
 * proto/csi-v1.proto, v1.8.0 as upstream v1.28 vendors), on the unix socket the driver gave at
 * registration. Every call has a deadline; errors carry the driver's gRPC code and details.
 */
import { Metadata, credentials, type Client, type GrpcObject, type ServiceClientConstructor } from '@grpc/grpc-js';
import { grpcErrorText, grpcPackage, unaryCall } from '../../api/grpc-proto.js';

export const CSI_PROTO = 'csi-v1.proto';
/** Upstream's csiTimeout for node calls (2 min); the pod sync retries after it. */
export const CSI_CALL_TIMEOUT_MS = 120_000;

/** A volume capability as the loader takes it (camelCase fields). */
export interface VolumeCapability {
  readonly mount: { readonly fsType: string; readonly mountFlags: readonly string[] };
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
}

export interface PublishRequest extends StageRequest {
  readonly targetPath: string;
  readonly readonly: boolean;
}

export interface CsiNodeClient {
  nodeGetInfo(): Promise<NodeInfo>;
  /** The node service's capability types (`STAGE_UNSTAGE_VOLUME`, `GET_VOLUME_STATS`, ...). */
  nodeGetCapabilities(): Promise<string[]>;
  nodeStageVolume(request: StageRequest): Promise<void>;
  nodeUnstageVolume(volumeId: string, stagingTargetPath: string): Promise<void>;
  nodePublishVolume(request: PublishRequest): Promise<void>;
  nodeUnpublishVolume(volumeId: string, targetPath: string): Promise<void>;
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
    close() {
      node.close();
    },
  };
}
