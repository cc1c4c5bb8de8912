/** The core v1 Namespace resource definition: schema, defaults, validation, columns. */
import { validateQualifiedName } from '../../../api/labels.js';
import { AGE_COLUMN, finalizersOf, metaOf, str, type ResourceDefinition, type WireObject } from '../../registry/index.js';
import { array, object, objectMeta, str as strSchema, type ObjectSchema } from '../../schema/index.js';

/** The finalizer this server puts on every namespace (upstream's is `kubernetes`). */
export const NAMESPACE_FINALIZER = 'orch';
/** The label every namespace carries with its own name (upstream: kubernetes.io/metadata.name). */
export const NAME_LABEL = 'orch.io/metadata.name';

const namespaceSchema: ObjectSchema = object(
  {
    kind: strSchema('Kind of the object: Namespace.'),
    apiVersion: strSchema('Versioned schema of the object: v1.'),
    metadata: objectMeta,
    spec: object({ finalizers: array(strSchema(), { description: 'Must be empty before the namespace is removed from storage.' }) }, { name: 'io.orch.api.core.v1.NamespaceSpec' }),
    status: object(
      {
        phase: strSchema('Active or Terminating.', { enum: ['Active', 'Terminating'] }),
        conditions: array(object({ type: strSchema(), status: strSchema(), lastTransitionTime: strSchema(), reason: strSchema(), message: strSchema() }), { mergeKey: 'type', patchStrategy: 'merge' }),
      },
      { name: 'io.orch.api.core.v1.NamespaceStatus' },
    ),
  },
  { name: 'io.orch.api.core.v1.Namespace', gvk: [{ group: '', version: 'v1', kind: 'Namespace' }], description: 'Namespace provides a scope for names.' },
);

function rec(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

export function specFinalizers(ns: WireObject): string[] {
  const f = rec(ns.spec).finalizers;
  return Array.isArray(f) ? f.filter((x): x is string => typeof x === 'string') : [];
}

export function phaseOf(ns: WireObject): string {
  return str(rec(ns.status).phase);
}

function setName(ns: WireObject): void {
  const meta = metaOf(ns);
  meta.labels = { ...rec(meta.labels), [NAME_LABEL]: str(meta.name) };
}

export const namespaceDefinition: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'Namespace',
  listKind: 'NamespaceList',
  plural: 'namespaces',
  singular: 'namespace',
  shortNames: ['ns'],
  categories: [],
  namespaced: false,
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  storage: 'namespaces',
  schema: namespaceSchema,
  statusSubresource: true,
  fieldLabels: ['status.phase'],
  fields: (ns) => ({ 'status.phase': phaseOf(ns) }),
  columns: [
    { name: 'Status', type: 'string', description: 'The phase of the namespace.', priority: 0, cell: (ns) => phaseOf(ns) },
    AGE_COLUMN,
  ],
  nameColumn: true,
  nameRule: 'label',
  allowCreateOnUpdate: false,
  returnDeletedObject: true,
  strategy: {
    prepareForCreate: (ns) => {
      ns.spec = { finalizers: [NAMESPACE_FINALIZER] };
      ns.status = { phase: 'Active' };
      setName(ns);
    },
    validateCreate: (ns, errors) => {
      specFinalizers(ns).forEach((f, i) => errors.invalidEach(`spec.finalizers[${i}]`, f, validateQualifiedName(f)));
    },
    prepareForUpdate: (ns, old) => {
      // spec.finalizers change only when the namespace is finalized (by the lifecycle controller).
      ns.spec = rec(old.spec);
      setName(ns);
    },
    validateUpdate: (ns, _old, errors) => {
      const phase = phaseOf(ns);
      if (phase !== 'Active' && phase !== 'Terminating') errors.notSupported('status.phase', phase, ['Active', 'Terminating']);
    },
    prepareForDelete: (ns) => {
      ns.status = { ...rec(ns.status), phase: 'Terminating' };
    },
  },
  pendingFinalizers: (ns) => [...finalizersOf(ns), ...specFinalizers(ns)],
};
