/**
 * resources/nodes: core v1 Node (`no`), cluster-scoped, with the status subresource the node
 * agent heartbeats through. Kubectl's columns NAME STATUS ROLES AGE VERSION (and INTERNAL-IP,
 * EXTERNAL-IP, OS-IMAGE, KERNEL-VERSION, CONTAINER-RUNTIME with -o wide); roles come from the
 * labels `node-role.orch.io/<role>` and `orch.io/role` (upstream's node-role.kubernetes.io/ and
 * kubernetes.io/role). Field selector: spec.unschedulable.
 *
 * Must not: know HTTP or the store beyond the definition it hands to the registry.
 */
import { isIP } from 'node:net';
import { parseQuantity } from '../../../api/quantity.js';
import { validateTaint, type TaintEffect } from '../../../api/taints.js';
import { AGE_COLUMN, labelsOf, str, type ResourceDefinition, type WireObject } from '../../registry/index.js';
import type { FieldErrors } from '../../status/index.js';
import { immutable, normalizeQuantities, rec, recs, strings } from '../common/index.js';
import { nodeSchema } from './schema.js';

export { nodeSchema, quantities, taintSchema } from './schema.js';

export const ADDRESS_TYPES = ['Hostname', 'ExternalIP', 'InternalIP', 'ExternalDNS', 'InternalDNS'];
export const ROLE_LABEL_PREFIX = 'node-role.orch.io/';
export const ROLE_LABEL = 'orch.io/role';

/** Ready, NotReady or Unknown, plus SchedulingDisabled for a cordoned node (upstream's printer). */
export function nodeStatusText(node: WireObject): string {
  const ready = recs(rec(node.status).conditions).find((c) => c.type === 'Ready');
  const parts = [ready === undefined ? 'Unknown' : ready.status === 'True' ? 'Ready' : 'NotReady'];
  if (rec(node.spec).unschedulable === true) parts.push('SchedulingDisabled');
  return parts.join(',');
}

export function nodeRoles(node: WireObject): string {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(labelsOf(node))) {
    if (key.startsWith(ROLE_LABEL_PREFIX) && key.length > ROLE_LABEL_PREFIX.length) roles.add(key.slice(ROLE_LABEL_PREFIX.length));
    else if (key === ROLE_LABEL && value !== '') roles.add(value);
  }
  return roles.size === 0 ? '<none>' : [...roles].sort().join(',');
}

/** The first address of `type`, or `<none>`. */
export function nodeAddress(node: WireObject, type: string): string {
  const found = recs(rec(node.status).addresses).find((a) => a.type === type);
  return found === undefined || str(found.address) === '' ? '<none>' : str(found.address);
}

const info = (node: WireObject, field: string): string => {
  const value = str(rec(rec(node.status).nodeInfo)[field]);
  return value === '' ? '<unknown>' : value;
};

function validCidr(text: string): boolean {
  const [ip = '', bits = '', ...rest] = text.split('/');
  const family = isIP(ip);
  if (rest.length > 0 || family === 0 || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

function validateQuantities(errors: FieldErrors, field: string, map: unknown): void {
  for (const [name, value] of Object.entries(rec(map))) {
    try {
      const q = parseQuantity(String(value), `${field}.${name}`);
      if (q.mantissa < 0n) errors.invalid(`${field}.${name}`, String(value), 'must be greater than or equal to 0');
    } catch (err) {
      errors.invalid(`${field}.${name}`, String(value), err instanceof Error ? err.message : String(err));
    }
  }
}

function validate(node: WireObject, errors: FieldErrors): void {
  const spec = rec(node.spec);
  const podCIDR = str(spec.podCIDR);
  if (podCIDR !== '' && !validCidr(podCIDR)) errors.invalid('spec.podCIDR', podCIDR, 'must be a valid CIDR (e.g. 10.244.1.0/24)');
  const cidrs = strings(spec.podCIDRs);
  cidrs.forEach((c, i) => {
    if (!validCidr(c)) errors.invalid(`spec.podCIDRs[${i}]`, c, 'must be a valid CIDR (e.g. 10.244.1.0/24)');
  });
  if (cidrs.length > 2) errors.tooLong('spec.podCIDRs', 2, 'items');
  if (cidrs.length > 0 && cidrs[0] !== podCIDR) errors.invalid('spec.podCIDRs', cidrs[0], 'the first entry must match spec.podCIDR');
  const seen = new Set<string>();
  recs(spec.taints).forEach((t, i) => {
    const taint = { key: str(t.key), effect: str(t.effect) as TaintEffect, ...(typeof t.value === 'string' ? { value: t.value } : {}) };
    if (taint.key === '') errors.required(`spec.taints[${i}].key`);
    if (str(t.effect) === '') errors.required(`spec.taints[${i}].effect`);
    else for (const p of validateTaint(taint)) errors.invalid(`spec.taints[${i}]`, `${taint.key}:${taint.effect}`, p);
    const id = `${taint.key}:${taint.effect}`;
    if (seen.has(id)) errors.duplicate(`spec.taints[${i}]`, id);
    seen.add(id);
  });
  const status = rec(node.status);
  recs(status.addresses).forEach((a, i) => {
    const type = str(a.type);
    if (!ADDRESS_TYPES.includes(type)) errors.notSupported(`status.addresses[${i}].type`, type, ADDRESS_TYPES);
    if (str(a.address) === '') errors.required(`status.addresses[${i}].address`);
  });
  validateQuantities(errors, 'status.capacity', status.capacity);
  validateQuantities(errors, 'status.allocatable', status.allocatable);
  const port = rec(rec(status.daemonEndpoints).nodeagentEndpoint).Port;
  if (typeof port === 'number' && (port < 0 || port > 65535)) errors.invalid('status.daemonEndpoints.nodeagentEndpoint.Port', port, 'must be between 0 and 65535, inclusive');
}

function normalize(node: WireObject): void {
  normalizeQuantities(rec(node.status).capacity);
  normalizeQuantities(rec(node.status).allocatable);
}

export const nodeDefinition: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'Node',
  listKind: 'NodeList',
  plural: 'nodes',
  singular: 'node',
  shortNames: ['no'],
  categories: [],
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: 'nodes',
  schema: nodeSchema,
  statusSubresource: true,
  // Served by the node proxy (src/apiserver/nodeproxy): any path of the node agent's secure port.
  subresources: [{ name: 'proxy', kind: 'NodeProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] }],
  fieldLabels: ['spec.unschedulable'],
  fields: (n) => ({ 'spec.unschedulable': String(rec(n.spec).unschedulable === true) }),
  columns: [
    { name: 'Status', type: 'string', description: 'The status of the node (its Ready condition).', priority: 0, cell: nodeStatusText },
    { name: 'Roles', type: 'string', description: 'The roles of the node.', priority: 0, cell: nodeRoles },
    AGE_COLUMN,
    { name: 'Version', type: 'string', description: 'The node agent version reported by the node.', priority: 0, cell: (n) => str(rec(rec(n.status).nodeInfo).nodeagentVersion) },
    { name: 'Internal-IP', type: 'string', description: 'The InternalIP of the node.', priority: 1, cell: (n) => nodeAddress(n, 'InternalIP') },
    { name: 'External-IP', type: 'string', description: 'The ExternalIP of the node.', priority: 1, cell: (n) => nodeAddress(n, 'ExternalIP') },
    { name: 'OS-Image', type: 'string', description: 'The OS image reported by the node.', priority: 1, cell: (n) => info(n, 'osImage') },
    { name: 'Kernel-Version', type: 'string', description: 'The kernel version reported by the node.', priority: 1, cell: (n) => info(n, 'kernelVersion') },
    { name: 'Container-Runtime', type: 'string', description: 'The container runtime version reported by the node.', priority: 1, cell: (n) => info(n, 'containerRuntimeVersion') },
  ],
  nameColumn: true,
  nameRule: 'subdomain',
  allowCreateOnUpdate: false,
  returnDeletedObject: false,
  strategy: {
    prepareForCreate: normalize,
    validateCreate: (n, errors) => {
      validate(n, errors);
    },
    prepareForUpdate: normalize,
    validateUpdate: (n, old, errors) => {
      validate(n, errors);
      const spec = rec(n.spec);
      const oldSpec = rec(old.spec);
      // podCIDR(s) and providerID may be set once, never changed.
      if (str(oldSpec.podCIDR) !== '') immutable(errors, 'spec.podCIDR', spec.podCIDR, oldSpec.podCIDR, 'node updates may not change podCIDR except from "" to a valid value');
      if (strings(oldSpec.podCIDRs).length > 0) immutable(errors, 'spec.podCIDRs', spec.podCIDRs, oldSpec.podCIDRs, 'node updates may not change podCIDRs except from empty to valid values');
      if (str(oldSpec.providerID) !== '') immutable(errors, 'spec.providerID', spec.providerID, oldSpec.providerID, 'node updates may not change providerID except from "" to a valid value');
    },
  },
};
