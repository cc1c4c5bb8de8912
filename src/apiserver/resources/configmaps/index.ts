/**
 * resources/configmaps: core v1 ConfigMap (`cm`): `data` (text) and `binaryData` (base64), keys
 * by upstream's config-key rule and unique across both maps, at most 1 MiB in all, and
 * `immutable: true` freezing the content.
 *
 * Must not: know HTTP or the store beyond the definition it hands to the registry.
 */
import { AGE_COLUMN, type ResourceDefinition, type WireObject } from '../../registry/index.js';
import { bool, object, objectMeta, str, stringMap, type ObjectSchema } from '../../schema/index.js';
import type { FieldErrors } from '../../status/index.js';
import { base64Size, configKeyProblems, immutable, isBase64, rec } from '../common/index.js';

/** The largest content of a ConfigMap or Secret (upstream's MaxSecretSize), in bytes. */
export const MAX_DATA_BYTES = 1024 * 1024;

const schema: ObjectSchema = object(
  {
    kind: str('Kind of the object: ConfigMap.'),
    apiVersion: str('Versioned schema of the object: v1.'),
    metadata: objectMeta,
    data: stringMap('Configuration data (UTF-8 text). Keys: alphanumerics, -, _ and . .'),
    binaryData: { type: 'map', values: str(undefined, { format: 'byte' }), description: 'Binary data, base64 in JSON. Keys must not also be in data.' },
    immutable: bool('If true, data and binaryData cannot be changed any more (only metadata can).'),
  },
  { name: 'io.orch.api.core.v1.ConfigMap', gvk: [{ group: '', version: 'v1', kind: 'ConfigMap' }], description: 'ConfigMap holds configuration data for pods to consume.' },
);

function validate(cm: WireObject, errors: FieldErrors): void {
  const data = rec(cm.data) as Record<string, string>;
  const binary = rec(cm.binaryData) as Record<string, string>;
  let total = 0;
  for (const [key, value] of Object.entries(data)) {
    errors.invalidEach('data', key, configKeyProblems(key));
    total += Buffer.byteLength(value);
  }
  for (const [key, value] of Object.entries(binary)) {
    errors.invalidEach('binaryData', key, configKeyProblems(key));
    if (key in data) errors.invalid('binaryData', key, 'duplicate of key present in data');
    if (!isBase64(value)) errors.invalid(`binaryData[${key}]`, value, 'must be base64 (standard encoding, padded)');
    total += base64Size(value);
  }
  if (total > MAX_DATA_BYTES) errors.tooLong('', MAX_DATA_BYTES, 'bytes');
}

export const configMapDefinition: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  listKind: 'ConfigMapList',
  plural: 'configmaps',
  singular: 'configmap',
  shortNames: ['cm'],
  categories: [],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: 'configmaps',
  schema,
  statusSubresource: false,
  fieldLabels: [],
  fields: () => ({}),
  columns: [
    { name: 'Data', type: 'integer', description: 'Number of keys in data and binaryData.', priority: 0, cell: (cm) => Object.keys(rec(cm.data)).length + Object.keys(rec(cm.binaryData)).length },
    AGE_COLUMN,
  ],
  nameColumn: true,
  nameRule: 'subdomain',
  allowCreateOnUpdate: false,
  returnDeletedObject: false,
  strategy: {
    validateCreate: (cm, errors) => {
      validate(cm, errors);
    },
    validateUpdate: (cm, old, errors) => {
      validate(cm, errors);
      if (old.immutable === true) {
        immutable(errors, 'immutable', cm.immutable, true, 'field is immutable when `immutable` is set');
        immutable(errors, 'data', cm.data, old.data, 'field is immutable when `immutable` is set');
        immutable(errors, 'binaryData', cm.binaryData, old.binaryData, 'field is immutable when `immutable` is set');
      }
    },
  },
};
