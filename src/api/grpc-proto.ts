/**
 * The gRPC APIs the agent speaks with node-local plugins (device plugins, plugin registration,
 * pod resources): their .proto files under proto/, loaded once each with @grpc/proto-loader for
 * the services and with protobufjs for messages stored outside a call (a device plugin's
 * allocation in the device manager's checkpoint), and unary calls as promises with a deadline.
 *
 * Loader options, fixed for these APIs: camelCase field names (`resource_name` is
 * `resourceName`, `ID` stays `ID`), 64-bit integers as numbers (NUMA node IDs and memory sizes,
 * far below 2^53), defaults filled in (absent sub-messages become null, repeated fields []).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPackageDefinition, type Client, type GrpcObject, type Metadata, type ServiceError } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { OrchError } from './errors.js';

/** A .proto file of the project cannot be found from the running module. */
export const API_PROTO_MISSING = 'API_PROTO_MISSING';

const LOADER_OPTIONS: Options = { keepCase: false, longs: Number, enums: String, defaults: true, oneofs: true };

/**
 * proto/<name>, found by walking up from this module's directory (dist/src/api/ compiled,
 * src/api/ from sources) to the repository root. Throws API_PROTO_MISSING.
 */
export function findProtoFile(name: string, startDir: string = path.dirname(fileURLToPath(import.meta.url))): string {
  const relative = path.join('proto', name);
  let dir = startDir;
  for (;;) {
    const candidate = path.join(dir, relative);
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new OrchError(API_PROTO_MISSING, 'internal', `no ${relative} in ${startDir} or any parent directory`, { subject: relative });
    }
    dir = parent;
  }
}

const packages = new Map<string, GrpcObject>();
const roots = new Map<string, protobuf.Root>();

/** The services and messages of proto/<name>, as grpc-js client and server definitions. */
export function grpcPackage(name: string): GrpcObject {
  let loaded = packages.get(name);
  if (loaded === undefined) {
    loaded = loadPackageDefinition(loadSync(findProtoFile(name), LOADER_OPTIONS));
    packages.set(name, loaded);
  }
  return loaded;
}

/** A message type of proto/<name> (e.g. `v1beta1.ContainerAllocateResponse`), for encoding outside a call. */
export function protoType(name: string, typeName: string): protobuf.Type {
  let root = roots.get(name);
  if (root === undefined) {
    root = protobuf.loadSync(findProtoFile(name));
    root.resolveAll();
    roots.set(name, root);
  }
  return root.lookupType(typeName);
}

/** Options for turning a decoded protobufjs message into a plain object shaped as the loader's. */
export const TO_OBJECT_OPTIONS: protobuf.IConversionOptions = { longs: Number, enums: String, defaults: true, arrays: true, objects: true };

/** A node-style unary method of a grpc-js client made with loadPackageDefinition. */
type UnaryMethod = (request: object, metadata: Metadata, options: { deadline: Date }, callback: (err: ServiceError | null, value?: unknown) => void) => unknown;

/**
 * Calls the unary method `method` of `client` and resolves with its answer; rejects with the
 * gRPC ServiceError (its `code` and `details`) or when `deadlineMs` passes first.
 */
export function unaryCall<T>(client: Client, method: string, request: object, metadata: Metadata, deadlineMs: number): Promise<T> {
  const fn = Reflect.get(client, method) as UnaryMethod | undefined;
  if (typeof fn !== 'function') return Promise.reject(new Error(`the client has no method ${method}`));
  return new Promise<T>((resolve, reject) => {
    fn.call(client, request, metadata, { deadline: new Date(Date.now() + deadlineMs) }, (err, value) => {
      if (err !== null) reject(err);
      else resolve(value as T);
    });
  });
}

/** `details` of a gRPC error (what the peer said), else the message. */
export function grpcErrorText(err: unknown): string {
  if (typeof err === 'object' && err !== null && typeof Reflect.get(err, 'details') === 'string') {
    const code: unknown = Reflect.get(err, 'code');
    const details = Reflect.get(err, 'details') as string;
    return typeof code === 'number' ? `rpc error: code = ${grpcCodeName(code)} desc = ${details}` : details;
  }
  return err instanceof Error ? err.message : String(err);
}

const CODE_NAMES = [
  'OK', 'Canceled', 'Unknown', 'InvalidArgument', 'DeadlineExceeded', 'NotFound', 'AlreadyExists', 'PermissionDenied',
  'ResourceExhausted', 'FailedPrecondition', 'Aborted', 'OutOfRange', 'Unimplemented', 'Internal', 'Unavailable', 'DataLoss', 'Unauthenticated',
];

/** Go's names of the gRPC status codes, as the upstream agent prints them. */
export function grpcCodeName(code: number): string {
  return CODE_NAMES[code] ?? `Code(${code})`;
}
