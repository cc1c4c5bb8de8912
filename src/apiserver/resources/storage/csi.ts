/**
 * storage.orch.io/v1 CSIDriver and CSINode (cluster-scoped), as upstream v1.28:
 *
 * - CSIDriver: the name is the driver's (ValidateCSIDriverName); defaults attachRequired true,
 *   podInfoOnMount, storageCapacity, requiresRepublish and seLinuxMount false, fsGroupPolicy
 *   ReadWriteOnceWithFSType, volumeLifecycleModes [Persistent]; attachRequired, podInfoOnMount,
 *   fsGroupPolicy and volumeLifecycleModes never change; token requests have unique audiences and
 *   10 min to 2^32 s. Columns NAME ATTACHREQUIRED PODINFOONMOUNT STORAGECAPACITY TOKENREQUESTS
 *   REQUIRESREPUBLISH MODES AGE.
 * - CSINode (named as its node; written by the node agent when drivers register): each driver's
 *   name, nodeID (at most 192 characters), topology keys and allocatable count; an existing
 *   driver's entry never changes. Columns NAME DRIVERS AGE.
 */
import { validateQualifiedName } from '../../../api/labels.js';
import { CSI_NODE_ID_MAX_LENGTH, FS_GROUP_POLICIES, VOLUME_LIFECYCLE_MODES, validateCsiDriverName } from '../../../api/storage/index.js';
import { jsonEqual } from '../../patch/index.js';
import { AGE_COLUMN, nameOf, str, type ResourceDefinition, type WireObject } from '../../registry/index.js';
import type { FieldErrors } from '../../status/index.js';
import { immutable, num, rec, recs, strings } from '../common/index.js';
import { csiDriverSchema, csiNodeSchema } from './schema.js';

const COMMON = {
  group: 'storage.orch.io', version: 'v1', categories: [], namespaced: false, shortNames: [],
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  statusSubresource: false, fieldLabels: [], fields: () => ({}), nameColumn: true, nameRule: 'subdomain',
  allowCreateOnUpdate: false, returnDeletedObject: false,
} as const;

function defaultDriver(driver: WireObject): void {
  const spec = rec(driver.spec);
  spec.attachRequired ??= true;
  spec.podInfoOnMount ??= false;
  spec.storageCapacity ??= false;
  spec.requiresRepublish ??= false;
  spec.seLinuxMount ??= false;
  spec.fsGroupPolicy ??= 'ReadWriteOnceWithFSType';
  if (strings(spec.volumeLifecycleModes).length === 0) spec.volumeLifecycleModes = ['Persistent'];
  driver.spec = spec;
}

function validateDriver(driver: WireObject, errors: FieldErrors): void {
  validateCsiDriverName(errors, 'metadata.name', nameOf(driver));
  const spec = rec(driver.spec);
  for (const field of ['attachRequired', 'podInfoOnMount', 'storageCapacity', 'requiresRepublish']) if (spec[field] === undefined) errors.required(`spec.${field}`);
  const policy = spec.fsGroupPolicy;
  if (policy !== undefined && !(FS_GROUP_POLICIES as readonly string[]).includes(str(policy))) errors.notSupported('spec.fsGroupPolicy', policy, FS_GROUP_POLICIES);
  for (const mode of strings(spec.volumeLifecycleModes)) {
    if (!(VOLUME_LIFECYCLE_MODES as readonly string[]).includes(mode)) errors.notSupported('spec.volumeLifecycleModes', mode, VOLUME_LIFECYCLE_MODES);
  }
  const audiences = new Set<string>();
  recs(spec.tokenRequests).forEach((t, i) => {
    const at = `spec.tokenRequests[${i}]`;
    const audience = str(t.audience);
    if (audiences.has(audience)) {
      errors.duplicate(`${at}.audience`, audience);
      return;
    }
    audiences.add(audience);
    const seconds = num(t.expirationSeconds);
    if (seconds === undefined) return;
    if (seconds < 600) errors.invalid(`${at}.expirationSeconds`, seconds, 'may not specify a duration less than 10 minutes');
    if (seconds > 2 ** 32) errors.invalid(`${at}.expirationSeconds`, seconds, 'may not specify a duration larger than 2^32 seconds');
  });
}

export const csiDriverDefinition: ResourceDefinition = {
  ...COMMON,
  kind: 'CSIDriver',
  listKind: 'CSIDriverList',
  plural: 'csidrivers',
  singular: 'csidriver',
  storage: 'csidrivers',
  schema: csiDriverSchema,
  columns: [
    { name: 'AttachRequired', type: 'boolean', description: 'The driver needs an attach.', priority: 0, cell: (o) => rec(o.spec).attachRequired !== false },
    { name: 'PodInfoOnMount', type: 'boolean', description: 'The pod\'s information is passed on mount.', priority: 0, cell: (o) => rec(o.spec).podInfoOnMount === true },
    { name: 'StorageCapacity', type: 'boolean', description: 'The driver publishes storage capacity.', priority: 0, cell: (o) => rec(o.spec).storageCapacity === true },
    {
      name: 'TokenRequests', type: 'string', description: 'The audiences of the service account tokens the driver asks for.', priority: 0,
      cell: (o) => (rec(o.spec).tokenRequests === undefined ? '<unset>' : recs(rec(o.spec).tokenRequests).map((t) => str(t.audience)).join(',')),
    },
    { name: 'RequiresRepublish', type: 'boolean', description: 'NodePublishVolume is called again periodically.', priority: 0, cell: (o) => rec(o.spec).requiresRepublish === true },
    { name: 'Modes', type: 'string', description: 'The volume lifecycle modes of the driver.', priority: 0, cell: (o) => strings(rec(o.spec).volumeLifecycleModes).join(',') || '<none>' },
    AGE_COLUMN,
  ],
  strategy: {
    prepareForCreate: defaultDriver,
    validateCreate: (d, errors) => {
      validateDriver(d, errors);
    },
    prepareForUpdate: defaultDriver,
    validateUpdate: (d, old, errors) => {
      validateDriver(d, errors);
      const spec = rec(d.spec);
      const before = rec(old.spec);
      for (const field of ['attachRequired', 'podInfoOnMount', 'fsGroupPolicy', 'volumeLifecycleModes']) immutable(errors, `spec.${field}`, spec[field], before[field]);
    },
  },
};

function validateNode(node: WireObject, errors: FieldErrors): void {
  const names = new Set<string>();
  recs(rec(node.spec).drivers).forEach((d, i) => {
    const at = `spec.drivers[${i}]`;
    const name = str(d.name);
    validateCsiDriverName(errors, `${at}.name`, name);
    const nodeID = str(d.nodeID);
    if (nodeID === '') errors.required(`${at}.nodeID`);
    else if (nodeID.length > CSI_NODE_ID_MAX_LENGTH) errors.invalid(`${at}.nodeID`, nodeID, `must be ${CSI_NODE_ID_MAX_LENGTH} characters or less`);
    const count = num(rec(d.allocatable).count);
    if (count !== undefined && count < 0) errors.invalid(`${at}.allocatable.count`, count, 'must be greater than or equal to 0');
    if (names.has(name)) errors.duplicate(`${at}.name`, name);
    names.add(name);
    const keys = new Set<string>();
    strings(d.topologyKeys).forEach((key, j) => {
      if (key === '') errors.required(`${at}.topologyKeys[${j}]`);
      if (keys.has(key)) errors.duplicate(`${at}.topologyKeys[${j}]`, key);
      keys.add(key);
      errors.invalidEach(`${at}.topologyKeys[${j}]`, key, validateQualifiedName(key));
    });
  });
}

export const csiNodeDefinition: ResourceDefinition = {
  ...COMMON,
  kind: 'CSINode',
  listKind: 'CSINodeList',
  plural: 'csinodes',
  singular: 'csinode',
  storage: 'csinodes',
  schema: csiNodeSchema,
  columns: [
    { name: 'Drivers', type: 'integer', description: 'Drivers indicates the number of CSI drivers registered on the node', priority: 0, cell: (o) => recs(rec(o.spec).drivers).length },
    AGE_COLUMN,
  ],
  strategy: {
    prepareForCreate: (n) => {
      n.spec ??= { drivers: [] };
    },
    validateCreate: (n, errors) => {
      validateNode(n, errors);
    },
    validateUpdate: (n, old, errors) => {
      validateNode(n, errors);
      const before = recs(rec(old.spec).drivers);
      recs(rec(n.spec).drivers).forEach((d, i) => {
        const was = before.find((b) => b.name === d.name);
        if (was !== undefined && !jsonEqual(d, was)) errors.invalid(`spec.drivers[${i}]`, d, 'field is immutable');
      });
    },
  },
};
