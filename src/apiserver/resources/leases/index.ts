/**
 * resources/leases: coordination.orch.io/v1 Lease (upstream's coordination.k8s.io/v1): the
 * holder, its lease duration, acquire and renew times (micro-times), and the count of
 * transitions. Node agents renew theirs in `orch-node-lease` with optimistic concurrency on
 * resourceVersion (a stale renew is 409 Conflict).
 *
 * Must not: know HTTP or the store beyond the definition it hands to the registry.
 */
import { AGE_COLUMN, str as strOf, type ResourceDefinition, type WireObject } from '../../registry/index.js';
import { int32, microTime, object, objectMeta, str, type ObjectSchema } from '../../schema/index.js';
import type { FieldErrors } from '../../status/index.js';
import { num, rec } from '../common/index.js';

const schema: ObjectSchema = object(
  {
    kind: str('Kind of the object: Lease.'),
    apiVersion: str('Versioned schema of the object: coordination.orch.io/v1.'),
    metadata: objectMeta,
    spec: object(
      {
        holderIdentity: str('The identity of the current holder of the lease.'),
        leaseDurationSeconds: int32('Seconds candidates for the lease wait before force-acquiring it, measured against the last renewTime.'),
        acquireTime: microTime('When the current lease was acquired.'),
        renewTime: microTime('When the current holder last renewed the lease.'),
        leaseTransitions: int32('How many times the lease changed holders.'),
        strategy: str('The strategy for picking the leader for coordinated leader election (alpha upstream; stored as given).'),
        preferredHolder: str('The holder a coordinated leader election prefers (alpha upstream; stored as given).'),
      },
      { name: 'io.orch.api.coordination.v1.LeaseSpec' },
    ),
  },
  {
    name: 'io.orch.api.coordination.v1.Lease',
    gvk: [{ group: 'coordination.orch.io', version: 'v1', kind: 'Lease' }],
    description: 'Lease defines a lease concept (node heartbeats, leader election).',
  },
);

function validate(lease: WireObject, errors: FieldErrors): void {
  const spec = rec(lease.spec);
  const duration = num(spec.leaseDurationSeconds);
  if (duration !== undefined && duration <= 0) errors.invalid('spec.leaseDurationSeconds', duration, 'must be greater than 0');
  const transitions = num(spec.leaseTransitions);
  if (transitions !== undefined && transitions < 0) errors.invalid('spec.leaseTransitions', transitions, 'must be greater than or equal to 0');
}

export const leaseDefinition: ResourceDefinition = {
  group: 'coordination.orch.io',
  version: 'v1',
  kind: 'Lease',
  listKind: 'LeaseList',
  plural: 'leases',
  singular: 'lease',
  shortNames: [],
  categories: [],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: 'leases',
  schema,
  statusSubresource: false,
  fieldLabels: [],
  fields: () => ({}),
  columns: [
    { name: 'Holder', type: 'string', description: 'The holder of the lease.', priority: 0, cell: (l) => strOf(rec(l.spec).holderIdentity) },
    AGE_COLUMN,
  ],
  nameColumn: true,
  nameRule: 'subdomain',
  allowCreateOnUpdate: false,
  returnDeletedObject: false,
  strategy: {
    validateCreate: (l, errors) => {
      validate(l, errors);
    },
    validateUpdate: (l, _old, errors) => {
      validate(l, errors);
    },
  },
};
