/**
 * What the device manager accepts from plugins, each refusal a message naming the field and what
 * is allowed:
 *
 * - a registration: version v1beta1 (upstream's text), an extended resource name outside orch.io
 *   (upstream's "the ResourceName %q is invalid" with the reason), an endpoint that is a socket
 *   file name in the device-plugins directory;
 * - a ListAndWatch answer, checked whole before anything changes: device IDs non-empty, at most
 *   63 printable ASCII characters and unique; health Healthy or Unhealthy; NUMA nodes that
 *   exist on this machine. A bad answer is refused and the previous device list stays.
 */
import { extendedResourceNameProblems } from '../../../api/resource-names.js';
import { HEALTHY, MAX_DEVICE_ID_LENGTH, SUPPORTED_VERSIONS, UNHEALTHY, type PluginDevice } from './api.js';

/** upstream's errUnsupportedVersion, with the agent's name. */
export function unsupportedVersionMessage(version: string): string {
  return `requested API version "${version}" is not supported by nodeagent. Supported versions are [${SUPPORTED_VERSIONS.map((v) => `"${v}"`).join(' ')}]`;
}

/** upstream's errInvalidResourceName with what is wrong; undefined when `name` is an extended resource name. */
export function invalidResourceNameMessage(name: string): string | undefined {
  const problems = extendedResourceNameProblems(name);
  if (problems.length === 0) return undefined;
  return `the ResourceName "${name}" is invalid: it ${problems.join('; ')} (an extended resource name such as example.com/gpu)`;
}

/** Why a registration request is refused; undefined when it is acceptable. */
export function registrationProblem(request: { readonly version: string; readonly resourceName: string; readonly endpoint: string }): string | undefined {
  if (!SUPPORTED_VERSIONS.includes(request.version)) return unsupportedVersionMessage(request.version);
  const name = invalidResourceNameMessage(request.resourceName);
  if (name !== undefined) return name;
  if (request.endpoint === '' || request.endpoint.includes('/') || request.endpoint === '.' || request.endpoint === '..') {
    return `endpoint "${request.endpoint}" of ${request.resourceName} must be the name of the plugin's socket file in the device-plugins directory`;
  }
  return undefined;
}

const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

function field(o: unknown, key: string): unknown {
  return typeof o === 'object' && o !== null ? Reflect.get(o, key) : undefined;
}

/**
 * The devices of one ListAndWatch answer (as the loader decodes it), checked against the
 * machine's NUMA nodes. Returns them, or the problems (each naming the device).
 */
export function checkDevices(answer: unknown, numaNodes: readonly number[]): { readonly devices: PluginDevice[] } | { readonly problems: string[] } {
  const raw = field(answer, 'devices');
  const list: readonly unknown[] = Array.isArray(raw) ? raw : [];
  const problems: string[] = [];
  const seen = new Set<string>();
  const devices: PluginDevice[] = [];
  const known = new Set(numaNodes);
  list.forEach((d, i) => {
    const id = field(d, 'ID');
    const name = typeof id === 'string' && id !== '' ? `device "${id}"` : `device #${i}`;
    if (typeof id !== 'string' || id === '') {
      problems.push(`${name}: ID is empty`);
      return;
    }
    if (id.length > MAX_DEVICE_ID_LENGTH) problems.push(`${name}: ID has ${id.length} characters, at most ${MAX_DEVICE_ID_LENGTH} are allowed`);
    else if (!PRINTABLE_ASCII.test(id)) problems.push(`${name.replace(/[^\x20-\x7e]/g, '?')}: ID must be printable ASCII without spaces`);
    if (seen.has(id)) problems.push(`${name}: ID listed twice`);
    seen.add(id);
    const health = field(d, 'health');
    if (health !== HEALTHY && health !== UNHEALTHY) problems.push(`${name}: health ${JSON.stringify(health)} is neither ${HEALTHY} nor ${UNHEALTHY}`);
    const topology = field(d, 'topology');
    let numa: number[] | undefined;
    if (topology !== null && topology !== undefined) {
      const nodes = field(topology, 'nodes');
      numa = [];
      for (const n of Array.isArray(nodes) ? nodes : []) {
        const nodeId = field(n, 'ID');
        if (typeof nodeId !== 'number' || !Number.isInteger(nodeId) || !known.has(nodeId)) {
          problems.push(`${name}: NUMA node ${String(nodeId)} is not one of this machine's NUMA nodes (${numaNodes.join(',')})`);
        } else if (!numa.includes(nodeId)) {
          numa.push(nodeId);
        }
      }
    }
    devices.push({ id, healthy: health === HEALTHY, numaNodes: numa });
  });
  return problems.length === 0 ? { devices } : { problems };
}
