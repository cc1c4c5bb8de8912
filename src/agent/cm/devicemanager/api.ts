/**
 * The device plugin API v1beta1 (proto/deviceplugin-v1beta1.proto) as the device manager uses
 * it: the constants of the API, the plain shapes of its messages after checking, and the
 * encoding of an AllocateResponse's container part for the checkpoint (protobuf bytes, as the
 * upstream agent stores it, so that a checkpoint moves between the two).
 */
import type { GrpcObject, ServiceClientConstructor, ServiceDefinition } from '@grpc/grpc-js';
import { TO_OBJECT_OPTIONS, grpcPackage, protoType } from '../../../api/grpc-proto.js';

export const DEVICE_PLUGIN_PROTO = 'deviceplugin-v1beta1.proto';
/** The one version of the API the agent speaks. */
export const API_VERSION = 'v1beta1';
export const SUPPORTED_VERSIONS: readonly string[] = [API_VERSION];
export const HEALTHY = 'Healthy';
export const UNHEALTHY = 'Unhealthy';
/** The agent's registration socket in the device-plugins directory (upstream: kubelet.sock). */
export const REGISTRATION_SOCKET = 'nodeagent.sock';
/** The device manager's checkpoint in the device-plugins directory (upstream: kubelet_internal_checkpoint). */
export const CHECKPOINT_FILE = 'nodeagent_internal_checkpoint';
/** Upstream's limit on a device ID (the API's comment on Device.ID). */
export const MAX_DEVICE_ID_LENGTH = 63;
/** A device without topology is counted under this pseudo NUMA node in the checkpoint (upstream's nodeWithoutTopology). */
export const NODE_WITHOUT_TOPOLOGY = -1;

/** One device as a plugin reported it, after checking. */
export interface PluginDevice {
  readonly id: string;
  readonly healthy: boolean;
  /** The NUMA nodes it is attached to; undefined: the plugin gave no topology. */
  readonly numaNodes: readonly number[] | undefined;
}

export interface PluginOptions {
  readonly preStartRequired: boolean;
  readonly getPreferredAllocationAvailable: boolean;
}

export interface AllocatedMount {
  readonly containerPath: string;
  readonly hostPath: string;
  readonly readOnly: boolean;
}

export interface AllocatedDeviceNode {
  readonly containerPath: string;
  readonly hostPath: string;
  readonly permissions: string;
}

/** A plugin's answer for one container (ContainerAllocateResponse). */
export interface ContainerAllocation {
  readonly envs: Readonly<Record<string, string>>;
  readonly mounts: readonly AllocatedMount[];
  readonly devices: readonly AllocatedDeviceNode[];
  readonly annotations: Readonly<Record<string, string>>;
  /** Fully qualified CDI device names. */
  readonly cdiDevices: readonly string[];
}

/** The services of the device plugin proto. */
export function devicePluginServices(): { readonly registration: ServiceDefinition; readonly plugin: ServiceClientConstructor } {
  const pkg = grpcPackage(DEVICE_PLUGIN_PROTO)['v1beta1'] as GrpcObject;
  const registration = pkg['Registration'] as ServiceClientConstructor;
  return { registration: registration.service, plugin: pkg['DevicePlugin'] as ServiceClientConstructor };
}

function record(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof value !== 'object' || value === null) return out;
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v;
  return out;
}

function list(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

const text = (o: unknown, key: string): string => {
  const v: unknown = typeof o === 'object' && o !== null ? Reflect.get(o, key) : undefined;
  return typeof v === 'string' ? v : '';
};

/** A ContainerAllocateResponse as the loader decodes it (camelCase fields), made plain. */
export function containerAllocationOf(message: unknown): ContainerAllocation {
  const m = typeof message === 'object' && message !== null ? message : {};
  return {
    envs: record(Reflect.get(m, 'envs')),
    mounts: list(Reflect.get(m, 'mounts')).map((x) => ({
      containerPath: text(x, 'containerPath'), hostPath: text(x, 'hostPath'),
      readOnly: typeof x === 'object' && x !== null && Reflect.get(x, 'readOnly') === true,
    })),
    devices: list(Reflect.get(m, 'devices')).map((x) => ({ containerPath: text(x, 'containerPath'), hostPath: text(x, 'hostPath'), permissions: text(x, 'permissions') })),
    annotations: record(Reflect.get(m, 'annotations')),
    cdiDevices: list(Reflect.get(m, 'cdiDevices')).map((x) => text(x, 'name')),
  };
}

function allocationType(): ReturnType<typeof protoType> {
  return protoType(DEVICE_PLUGIN_PROTO, 'v1beta1.ContainerAllocateResponse');
}

/** The protobuf bytes of a container's allocation (the checkpoint's AllocResp). */
export function encodeContainerAllocation(a: ContainerAllocation): Buffer {
  const type = allocationType();
  const message = type.fromObject({
    envs: a.envs,
    mounts: a.mounts.map((m) => ({ containerPath: m.containerPath, hostPath: m.hostPath, readOnly: m.readOnly })),
    devices: a.devices,
    annotations: a.annotations,
    cdiDevices: a.cdiDevices.map((name) => ({ name })),
  });
  return Buffer.from(type.encode(message).finish());
}

/** The allocation in a checkpoint's AllocResp bytes. Throws when they are not a ContainerAllocateResponse. */
export function decodeContainerAllocation(bytes: Uint8Array): ContainerAllocation {
  const type = allocationType();
  return containerAllocationOf(type.toObject(type.decode(bytes), TO_OBJECT_OPTIONS));
}
