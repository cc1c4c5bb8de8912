/**
 * resources/serviceaccounts: core v1 ServiceAccount (`sa`): references to secrets and image pull
 * secrets, and automountServiceAccountToken. Stored as given (no legacy token secrets). The
 * `token` subresource (a TokenRequest) is declared here and served by ../../serviceaccount.
 *
 * Must not: know HTTP or the store beyond the definition it hands to the registry.
 */
import { validateDNS1123Subdomain } from '../../../api/labels.js';
import { AGE_COLUMN, str as strOf, type ResourceDefinition, type WireObject } from '../../registry/index.js';
import { array, bool, object, objectMeta, objectReference, str, type ObjectSchema } from '../../schema/index.js';
import type { FieldErrors } from '../../status/index.js';
import { recs } from '../common/index.js';

const schema: ObjectSchema = object(
  {
    kind: str('Kind of the object: ServiceAccount.'),
    apiVersion: str('Versioned schema of the object: v1.'),
    metadata: objectMeta,
    secrets: array(objectReference, { mergeKey: 'name', patchStrategy: 'merge', description: 'Secrets in the same namespace that pods running as this service account may use.' }),
    imagePullSecrets: array(object({ name: str('Name of the referent.') }, { name: 'io.orch.api.core.v1.LocalObjectReference', mapType: 'atomic' }), { description: 'Secrets used to pull the images of pods that use this service account.' }),
    automountServiceAccountToken: bool('Whether pods running as this service account get an API token mounted (pods may override).'),
  },
  { name: 'io.orch.api.core.v1.ServiceAccount', gvk: [{ group: '', version: 'v1', kind: 'ServiceAccount' }], description: 'ServiceAccount binds a name, understood by users and peripheral systems, to an identity for pods.' },
);

function validate(sa: WireObject, errors: FieldErrors): void {
  recs(sa.imagePullSecrets).forEach((ref, i) => {
    const name = strOf(ref.name);
    if (name === '') errors.required(`imagePullSecrets[${i}].name`);
    else errors.invalidEach(`imagePullSecrets[${i}].name`, name, validateDNS1123Subdomain(name));
  });
}

export const serviceAccountDefinition: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'ServiceAccount',
  listKind: 'ServiceAccountList',
  plural: 'serviceaccounts',
  singular: 'serviceaccount',
  shortNames: ['sa'],
  categories: [],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: 'serviceaccounts',
  schema,
  statusSubresource: false,
  fieldLabels: [],
  fields: () => ({}),
  columns: [
    { name: 'Secrets', type: 'string', description: 'Number of secrets referenced.', priority: 0, cell: (sa) => String(recs(sa.secrets).length) },
    AGE_COLUMN,
  ],
  nameColumn: true,
  nameRule: 'subdomain',
  allowCreateOnUpdate: false,
  returnDeletedObject: false,
  subresources: [{ name: 'token', kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1', verbs: ['create'] }],
  strategy: {
    validateCreate: (sa, errors) => {
      validate(sa, errors);
    },
    validateUpdate: (sa, _old, errors) => {
      validate(sa, errors);
    },
  },
};
