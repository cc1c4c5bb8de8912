/**
 * resources/secrets: core v1 Secret. `data` values are base64 (a value that is not is a 400, as
 * upstream's decoding of []byte); `stringData` is write-only: merged into `data` (its keys win)
 * on every create, update and patch, and never stored. `type` defaults to Opaque and cannot
 * change; the well-known types (`orch.io/tls`, `orch.io/basic-auth`... and their upstream
 * `kubernetes.io/` spellings, which kubectl create secret sends) need their keys. 1 MiB at most;
 * `immutable: true` freezes the content.
 *
 * Must not: know HTTP or the store beyond the definition it hands to the registry.
 */
import { AGE_COLUMN, str as strOf, type ResourceDefinition, type WireObject } from '../../registry/index.js';
import { bool, object, objectMeta, str, stringMap, type ObjectSchema } from '../../schema/index.js';
import { badRequest, type FieldErrors } from '../../status/index.js';
import { base64ErrorOffset, base64Size, configKeyProblems, immutable, isBase64, rec } from '../common/index.js';
import { MAX_DATA_BYTES } from '../configmaps/index.js';

const schema: ObjectSchema = object(
  {
    kind: str('Kind of the object: Secret.'),
    apiVersion: str('Versioned schema of the object: v1.'),
    metadata: objectMeta,
    data: { type: 'map', values: str(undefined, { format: 'byte' }), description: 'Secret data, base64 in JSON.' },
    stringData: stringMap('Write-only text data, merged into data on write (its keys win); never read back.'),
    type: str('Used to ease programmatic handling of secret data (default Opaque); cannot change.'),
    immutable: bool('If true, data cannot be changed any more (only metadata can).'),
  },
  { name: 'io.orch.api.core.v1.Secret', gvk: [{ group: '', version: 'v1', kind: 'Secret' }], description: 'Secret holds secret data of a certain type.' },
);

/** The keys each well-known type requires (any of the listed keys for basic-auth). */
const REQUIRED_KEYS: Readonly<Record<string, { readonly all?: readonly string[]; readonly any?: readonly string[] }>> = {
  tls: { all: ['tls.crt', 'tls.key'] },
  'basic-auth': { any: ['username', 'password'] },
  'ssh-auth': { all: ['ssh-privatekey'] },
  dockerconfigjson: { all: ['.dockerconfigjson'] },
  dockercfg: { all: ['.dockercfg'] },
};

function wellKnown(type: string): string | undefined {
  const m = /^(?:orch\.io|kubernetes\.io)\/(.+)$/.exec(type);
  return m?.[1] !== undefined && m[1] in REQUIRED_KEYS ? m[1] : undefined;
}

/** Merges stringData into data (base64) and drops it; rejects data that is not base64 (400). */
function normalize(secret: WireObject): void {
  const data: Record<string, string> = { ...(rec(secret.data) as Record<string, string>) };
  for (const [key, value] of Object.entries(data)) {
    if (!isBase64(value)) {
      throw badRequest(`Secret in version "v1" cannot be handled as a Secret: data[${key}]: illegal base64 data at input byte ${base64ErrorOffset(value)}`);
    }
  }
  for (const [key, value] of Object.entries(rec(secret.stringData) as Record<string, string>)) data[key] = Buffer.from(value, 'utf8').toString('base64');
  delete secret.stringData;
  if (Object.keys(data).length > 0) secret.data = data;
  else delete secret.data;
  if (strOf(secret.type) === '') secret.type = 'Opaque';
}

function validate(secret: WireObject, errors: FieldErrors): void {
  const data = rec(secret.data) as Record<string, string>;
  let total = 0;
  for (const [key, value] of Object.entries(data)) {
    errors.invalidEach('data', key, configKeyProblems(key));
    total += base64Size(value);
  }
  if (total > MAX_DATA_BYTES) errors.tooLong('data', MAX_DATA_BYTES, 'bytes');
  const type = strOf(secret.type);
  const known = wellKnown(type);
  if (known === undefined) return;
  const rule = REQUIRED_KEYS[known] ?? {};
  for (const key of rule.all ?? []) if (!(key in data)) errors.required(`data[${key}]`);
  if (rule.any !== undefined && !rule.any.some((k) => k in data)) errors.required('data', `one of ${rule.any.join(', ')} is required for type ${type}`);
  for (const key of ['.dockerconfigjson', '.dockercfg']) {
    const value = data[key];
    if (value === undefined || known !== key.slice(1)) continue;
    try {
      JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
    } catch (err) {
      errors.invalid(`data[${key}]`, '<secret contents redacted>', `must be JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

export const secretDefinition: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'Secret',
  listKind: 'SecretList',
  plural: 'secrets',
  singular: 'secret',
  shortNames: [],
  categories: [],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: 'secrets',
  schema,
  statusSubresource: false,
  fieldLabels: ['type'],
  fields: (s) => ({ type: strOf(s.type) }),
  columns: [
    { name: 'Type', type: 'string', description: 'The type of the secret.', priority: 0, cell: (s) => strOf(s.type) },
    { name: 'Data', type: 'integer', description: 'Number of keys in data.', priority: 0, cell: (s) => Object.keys(rec(s.data)).length },
    AGE_COLUMN,
  ],
  nameColumn: true,
  nameRule: 'subdomain',
  allowCreateOnUpdate: false,
  returnDeletedObject: false,
  strategy: {
    prepareForCreate: (s) => {
      normalize(s);
    },
    validateCreate: (s, errors) => {
      validate(s, errors);
    },
    prepareForUpdate: (s, old) => {
      if (strOf(s.type) === '') s.type = old.type;
      normalize(s);
    },
    validateUpdate: (s, old, errors) => {
      validate(s, errors);
      immutable(errors, 'type', s.type, old.type);
      if (old.immutable === true) {
        immutable(errors, 'immutable', s.immutable, true, 'field is immutable when `immutable` is set');
        immutable(errors, 'data', s.data, old.data, 'field is immutable when `immutable` is set');
      }
    },
  },
};
