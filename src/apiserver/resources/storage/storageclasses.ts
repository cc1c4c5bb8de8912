/**
 * storage.orch.io/v1 StorageClass (`sc`, cluster-scoped): upstream's defaults (reclaimPolicy
 * Delete, volumeBindingMode Immediate), validation (v1.28: provisioner a qualified name,
 * parameters, policies, allowed topologies; provisioner, parameters, reclaimPolicy and
 * volumeBindingMode never change) and kubectl's columns, the name marked `(default)` for the
 * default class.
 */
import { validateQualifiedName } from '../../../api/labels.js';
import { BINDING_MODES, isDefaultStorageClass } from '../../../api/storage/index.js';
import { jsonEqual } from '../../patch/index.js';
import { AGE_COLUMN, metaOf, nameOf, str, type ResourceDefinition, type WireObject } from '../../registry/index.js';
import type { FieldErrors } from '../../status/index.js';
import { immutable, rec, recs, strings } from '../common/index.js';
import { storageClassSchema } from './schema.js';

const RECLAIM = ['Delete', 'Retain'];
const MAX_PARAMETERS = 512;
const MAX_PARAMETER_BYTES = 256 * 1024;

function validateTopologies(errors: FieldErrors, terms: readonly WireObject[]): void {
  const seen: unknown[] = [];
  terms.forEach((term, i) => {
    const keys = new Map<string, string[]>();
    recs(term.matchLabelExpressions).forEach((e, j) => {
      const at = `allowedTopologies[${i}].matchLabelExpressions[${j}]`;
      const values = strings(e.values);
      if (values.length === 0) errors.required(`${at}.values`);
      values.forEach((v, k) => {
        if (values.indexOf(v) !== k) errors.duplicate(`${at}.values[${k}]`, v);
      });
      errors.invalidEach(`${at}.key`, str(e.key), validateQualifiedName(str(e.key)));
      if (keys.has(str(e.key))) errors.duplicate(`${at}.key`, str(e.key));
      keys.set(str(e.key), [...new Set(values)].sort());
    });
    const normalized = Object.fromEntries([...keys].sort(([a], [b]) => a.localeCompare(b)));
    if (seen.some((s) => jsonEqual(s, normalized))) errors.duplicate(`allowedTopologies[${i}].matchLabelExpressions`, '');
    seen.push(normalized);
  });
}

function validate(sc: WireObject, errors: FieldErrors): void {
  const provisioner = str(sc.provisioner);
  if (provisioner === '') errors.required('provisioner');
  else errors.invalidEach('provisioner', provisioner, validateQualifiedName(provisioner.toLowerCase()));
  const parameters = Object.entries(rec(sc.parameters));
  if (parameters.length > MAX_PARAMETERS) {
    errors.tooLong('parameters', MAX_PARAMETERS, 'parameters');
  } else {
    let size = 0;
    for (const [k, v] of parameters) {
      if (k === '') errors.invalid('parameters', k, 'field can not be empty.');
      size += Buffer.byteLength(k) + Buffer.byteLength(str(v));
    }
    if (size > MAX_PARAMETER_BYTES) errors.tooLong('parameters', MAX_PARAMETER_BYTES, 'bytes');
  }
  const reclaim = str(sc.reclaimPolicy);
  if (reclaim !== '' && !RECLAIM.includes(reclaim)) errors.notSupported('reclaimPolicy', reclaim, RECLAIM);
  const mode = sc.volumeBindingMode;
  if (mode === undefined) errors.required('volumeBindingMode');
  else if (!(BINDING_MODES as readonly string[]).includes(str(mode))) errors.notSupported('volumeBindingMode', mode, BINDING_MODES);
  validateTopologies(errors, recs(sc.allowedTopologies));
}

function defaults(sc: WireObject): void {
  if (str(sc.reclaimPolicy) === '') sc.reclaimPolicy = 'Delete';
  sc.volumeBindingMode ??= 'Immediate';
}

export const storageClassDefinition: ResourceDefinition = {
  group: 'storage.orch.io',
  version: 'v1',
  kind: 'StorageClass',
  listKind: 'StorageClassList',
  plural: 'storageclasses',
  singular: 'storageclass',
  shortNames: ['sc'],
  categories: [],
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: 'storageclasses',
  schema: storageClassSchema,
  statusSubresource: false,
  fieldLabels: [],
  fields: () => ({}),
  columns: [
    {
      name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 0,
      cell: (o) => (isDefaultStorageClass(rec(metaOf(o).annotations) as Record<string, string>) ? `${nameOf(o)} (default)` : nameOf(o)),
    },
    { name: 'Provisioner', type: 'string', description: 'The provisioner of the class\'s volumes.', priority: 0, cell: (o) => str(o.provisioner) },
    { name: 'ReclaimPolicy', type: 'string', description: 'The reclaim policy of provisioned volumes.', priority: 0, cell: (o) => str(o.reclaimPolicy) || 'Delete' },
    { name: 'VolumeBindingMode', type: 'string', description: 'When claims of the class are bound.', priority: 0, cell: (o) => str(o.volumeBindingMode) || 'Immediate' },
    { name: 'AllowVolumeExpansion', type: 'string', description: 'Whether claims may grow.', priority: 0, cell: (o) => o.allowVolumeExpansion === true },
    AGE_COLUMN,
  ],
  nameColumn: false,
  nameRule: 'subdomain',
  allowCreateOnUpdate: false,
  returnDeletedObject: false,
  strategy: {
    prepareForCreate: defaults,
    validateCreate: (sc, errors) => {
      validate(sc, errors);
    },
    prepareForUpdate: defaults,
    validateUpdate: (sc, old, errors) => {
      validate(sc, errors);
      if (!jsonEqual(sc.parameters ?? null, old.parameters ?? null)) errors.forbidden('parameters', 'updates to parameters are forbidden.');
      if (str(sc.provisioner) !== str(old.provisioner)) errors.forbidden('provisioner', 'updates to provisioner are forbidden.');
      if (str(sc.reclaimPolicy) !== str(old.reclaimPolicy)) errors.forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.');
      immutable(errors, 'volumeBindingMode', sc.volumeBindingMode, old.volumeBindingMode);
    },
  },
};

/** The default class among `classes` (annotated default; the newest when several are, then by name), if any. */
export function defaultStorageClass(classes: readonly WireObject[]): WireObject | undefined {
  const defaults = classes.filter((c) => isDefaultStorageClass(rec(metaOf(c).annotations) as Record<string, string>));
  defaults.sort((a, b) => str(metaOf(b).creationTimestamp).localeCompare(str(metaOf(a).creationTimestamp)) || nameOf(a).localeCompare(nameOf(b)));
  return defaults[0];
}
