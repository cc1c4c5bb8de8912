/**
 * The wire types of proto/orch/*.proto, loaded once (on the first protobuf request) into one
 * protobufjs root, and the message type of an object by its apiVersion and kind: the package of
 * the group (`orch.<first label of the group>.<version>`, core for the legacy group), then the
 * meta package (Status, DeleteOptions, WatchEvent ...), which every group version serves.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { OrchError } from '../../api/errors.js';

export const PROTO_DIR = path.join('proto', 'orch');

/** The directory of our .proto files: proto/orch in `startDir` or the nearest parent that has it. */
export function findProtoDir(startDir: string = path.dirname(fileURLToPath(import.meta.url))): string {
  let dir = startDir;
  for (;;) {
    const candidate = path.join(dir, PROTO_DIR);
    if (existsSync(path.join(candidate, 'meta-v1.proto'))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new OrchError('APISERVER_PROTO_MISSING', 'internal', `no ${PROTO_DIR}/meta-v1.proto in ${startDir} or any parent directory`, { subject: PROTO_DIR });
    }
    dir = parent;
  }
}

/** google/protobuf/descriptor.proto (options.proto extends it) as protobufjs ships it. */
function bundledGoogleProto(name: string): string {
  const entry = fileURLToPath(import.meta.resolve('protobufjs'));
  return path.join(path.dirname(entry), name);
}

let root: protobuf.Root | undefined;

/** The root with every type of proto/orch, resolved. Throws APISERVER_PROTO_MISSING or a parse error naming the file. */
export function protoRoot(): protobuf.Root {
  if (root !== undefined) return root;
  const dir = findProtoDir();
  const base = path.dirname(dir);
  const loaded = new protobuf.Root();
  loaded.resolvePath = (_origin, target) => (target.startsWith('google/protobuf/') ? bundledGoogleProto(target) : path.join(base, target));
  const files = readdirSync(dir).filter((f) => f.endsWith('.proto')).sort().map((f) => `orch/${f}`);
  loaded.loadSync(files, { keepCase: true });
  loaded.resolveAll();
  root = loaded;
  return loaded;
}

/** The package of a group version: `v1` -> orch.core.v1, `events.orch.io/v1` -> orch.events.v1. */
export function packageOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return `orch.core.${apiVersion}`;
  const group = apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  const first = group.split('.')[0] ?? group;
  return `orch.${first === 'meta' ? 'meta' : first}.${version}`;
}

const found = new Map<string, protobuf.Type | null>();

/** The message type of `kind` in `apiVersion`, or undefined when none is defined. */
export function messageType(apiVersion: string, kind: string): protobuf.Type | undefined {
  const key = `${apiVersion}/${kind}`;
  const cached = found.get(key);
  if (cached !== undefined) return cached ?? undefined;
  const r = protoRoot();
  let type: protobuf.Type | null = null;
  for (const pkg of [packageOf(apiVersion), 'orch.meta.v1']) {
    const candidate = r.lookup(`${pkg}.${kind}`);
    if (candidate instanceof protobuf.Type) {
      type = candidate;
      break;
    }
  }
  found.set(key, type);
  return type ?? undefined;
}

/** The message type of a name in our packages (`orch.meta.v1.Unknown`). */
export function namedType(fullName: string): protobuf.Type {
  return protoRoot().lookupType(fullName);
}

/** The bytes of a plain message of a type of ours (not an API object: no envelope). */
export function encodeMessage(fullName: string, message: Record<string, unknown>): Buffer {
  return Buffer.from(namedType(fullName).encode(message).finish());
}
