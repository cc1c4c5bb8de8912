/**
 * The hash of a container spec that the agent stores on each container instance
 * (CONTAINER_HASH_ANNOTATION): when the spec's hash differs from the running instance's, the
 * instance is killed and created again (upstream: HashContainer and containerChanged).
 *
 * Which fields count: the ones that shape the container the runtime creates: name, image,
 * command, args, working dir, ports, env and envFrom, resources, volume mounts and devices,
 * security context, stdin/tty, termination message path and policy. Probes, lifecycle
 * handlers, the pull policy and the resize policy are left out: changing them must not
 * restart a container (upstream hashes only name and image since 1.31, since the API makes
 * the others immutable; this agent also runs static pods whose manifests may change in place).
 *
 * Stable: absent, null and empty lists or maps count as the same, defaults of the termination
 * message are applied, quantities are compared by value ("1" equals "1000m"), and object keys
 * are sorted, so that a pod read from a file and the same pod from the API hash the same.
 * The hash is FNV-1a 32-bit of that canonical JSON, in hex (upstream stores its hash in hex).
 */
import type { Container } from 'kubernetes-types/core/v1.js';
import { formatQuantity, parseQuantity } from '../../api/quantity.js';
import { memoizeByObject } from '../../api/memo.js';
import { compareKeys } from '../../api/order.js';

const HASHED_FIELDS = [
  'name',
  'image',
  'command',
  'args',
  'workingDir',
  'ports',
  'envFrom',
  'env',
  'resources',
  'volumeMounts',
  'volumeDevices',
  'securityContext',
  'stdin',
  'stdinOnce',
  'tty',
  'terminationMessagePath',
  'terminationMessagePolicy',
] as const;

const DEFAULTS: Readonly<Record<string, unknown>> = {
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
};

/** The value in canonical form, or undefined when it counts as absent (false is kept: some flags default to true). */
function canonical(value: unknown): unknown {
  if (value === null || value === undefined || value === '') return undefined;
  if (Array.isArray(value)) {
    const items: unknown[] = value.map((v) => canonical(v) ?? null);
    return items.length === 0 ? undefined : items;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .map(([k, v]): [string, unknown] => [k, canonical(v)])
      .filter(([, v]) => v !== undefined)
      .sort(compareKeys);
    return entries.length === 0 ? undefined : Object.fromEntries(entries);
  }
  return value;
}

/** Quantities in their canonical text, so that equal values hash equally. */
function canonicalQuantities(map: Readonly<Record<string, string>> | undefined): Record<string, string> | undefined {
  if (map === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [name, text] of Object.entries(map)) {
    try {
      out[name] = formatQuantity(parseQuantity(text));
    } catch {
      out[name] = text; // not a quantity: validation reports it elsewhere; hash the text as given
    }
  }
  return out;
}

/** FNV-1a, 32 bits, over the UTF-8 bytes of `text`. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** The canonical JSON the hash is computed over (exported for tests and debugging). */
export function hashInput(container: Container): string {
  const picked: Record<string, unknown> = {};
  for (const field of HASHED_FIELDS) picked[field] = container[field] ?? DEFAULTS[field];
  for (const flag of ['stdin', 'stdinOnce', 'tty'] as const) if (container[flag] !== true) picked[flag] = undefined; // false is the default
  const resources = container.resources;
  if (resources !== undefined) {
    picked.resources = { ...resources, limits: canonicalQuantities(resources.limits), requests: canonicalQuantities(resources.requests) };
  }
  return JSON.stringify(canonical(picked) ?? {});
}

/**
 * The container's spec hash, 8 hex digits. Computed once per container object (pods are never
 * changed in place): every sync of a pod, the periodic resync included, compares the hash of each
 * of its containers, which builds and sorts a canonical copy of the spec.
 */
export const hashContainer: (container: Container) => string = memoizeByObject((container: Container) =>
  fnv1a32(hashInput(container)).toString(16).padStart(8, '0'),
);

/**
 * The hash of the spec without its resources (upstream HashContainerWithoutResources), stored
 * beside the full hash: with InPlacePodVerticalScaling a running container whose spec differs
 * only in its resources is resized in place rather than recreated.
 */
export const hashContainerWithoutResources: (container: Container) => string = memoizeByObject((container: Container) =>
  fnv1a32(hashInput({ ...container, resources: {} })).toString(16).padStart(8, '0'),
);
