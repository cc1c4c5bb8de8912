/**
 * Loads proto/cri-v1.proto (our own description of CRI v1) once, and hands out the method
 * definitions (path, serializers) the client calls with. Loader options, fixed for the whole
 * module: camelCase field names, 64-bit integers as decimal strings (exact), enums as their
 * names, defaults filled in (absent sub-messages become null), bytes as Buffers.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSync, type MethodDefinition, type PackageDefinition, type ServiceDefinition } from '@grpc/proto-loader';
import { OrchError } from '../../../api/errors.js';

export const CRI_PROTO_FILE = path.join('proto', 'cri-v1.proto');
const PACKAGE = 'runtime.v1';

export type CriServiceName = 'RuntimeService' | 'ImageService';
export type CriMethod = MethodDefinition<object, object>;

/**
 * The proto file, found by walking up from this module's directory: from
 * dist/src/agent/runtime/cri/ (compiled) or src/agent/runtime/cri/ (sources) to the repository
 * root. Throws CRI_PROTO_MISSING when no ancestor holds proto/cri-v1.proto.
 */
export function findCriProto(startDir: string = path.dirname(fileURLToPath(import.meta.url))): string {
  let dir = startDir;
  for (;;) {
    const candidate = path.join(dir, CRI_PROTO_FILE);
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new OrchError('CRI_PROTO_MISSING', 'internal', `no ${CRI_PROTO_FILE} in ${startDir} or any parent directory`, {
        subject: CRI_PROTO_FILE,
      });
    }
    dir = parent;
  }
}

const cache = new Map<string, PackageDefinition>();

function loadPackage(protoPath: string): PackageDefinition {
  let definition = cache.get(protoPath);
  if (definition === undefined) {
    definition = loadSync(protoPath, {
      keepCase: false,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    cache.set(protoPath, definition);
  }
  return definition;
}

function isServiceDefinition(value: unknown): value is ServiceDefinition {
  return typeof value === 'object' && value !== null && !('format' in value) && !('type' in value);
}

/** The methods of one CRI service, by their proto names (`RunPodSandbox`). Throws on a bad file. */
export function criMethods(service: CriServiceName, protoPath: string = findCriProto()): ReadonlyMap<string, CriMethod> {
  const definition = loadPackage(protoPath)[`${PACKAGE}.${service}`];
  if (!isServiceDefinition(definition)) {
    throw new OrchError('CRI_PROTO_MISSING', 'internal', `${protoPath} defines no service ${PACKAGE}.${service}`, {
      subject: protoPath,
    });
  }
  return new Map(Object.entries(definition));
}
