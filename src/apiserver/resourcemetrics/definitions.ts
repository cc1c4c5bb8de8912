/**
 * metrics.orch.io/v1beta1: NodeMetrics (`nodes`, cluster-scoped) and PodMetrics (`pods`,
 * namespaced), read-only (get, list), upstream's metrics.k8s.io shapes: a timestamp, the window
 * the CPU rate was measured over, and usage (cpu in nanocores, memory in Ki); pods list their
 * containers. Columns as metrics-server prints them.
 */
import { AGE_COLUMN, type ResourceDefinition, type TableColumn, type WireObject } from '../registry/index.js';
import { array, object, objectMeta, str, time, type ObjectSchema } from '../schema/index.js';
import { quantities } from '../resources/nodes/index.js';
import { rec, recs } from '../resources/common/index.js';
import { NODE_METRICS_STORAGE, POD_METRICS_STORAGE } from './store.js';

export const METRICS_GROUP = 'metrics.orch.io';

function metricsSchema(kind: string, usage: Record<string, ObjectSchema['properties'][string]>, description: string): ObjectSchema {
  return object(
    {
      kind: str(`Kind of the object: ${kind}.`),
      apiVersion: str('Versioned schema of the object: metrics.orch.io/v1beta1.'),
      metadata: objectMeta,
      timestamp: time('The end of the window the usage was measured in.'),
      window: str('The length of that window (Go duration text).'),
      ...usage,
    },
    { name: `io.orch.api.metrics.v1beta1.${kind}`, gvk: [{ group: METRICS_GROUP, version: 'v1beta1', kind }], description },
  );
}

const nodeMetricsSchema = metricsSchema('NodeMetrics', { usage: quantities }, 'NodeMetrics is the resource usage of a node (cpu, memory), from its node agent.');
const podMetricsSchema = metricsSchema('PodMetrics', {
  containers: array(object({ name: str('Container name.'), usage: quantities }, { name: 'io.orch.api.metrics.v1beta1.ContainerMetrics', required: ['name', 'usage'] })),
}, 'PodMetrics is the resource usage of the containers of a pod, from its node agent.');

const sum = (o: WireObject, resource: string): string => {
  const usages = o.usage !== undefined ? [rec(o.usage)] : recs(o.containers).map((c) => rec(c.usage));
  const values = usages.map((u) => u[resource]).filter((v): v is string => typeof v === 'string');
  return values.length === 1 ? (values[0] ?? '') : values.join('+');
};

const COLUMNS: readonly TableColumn[] = [
  { name: 'CPU', type: 'string', description: 'CPU usage (nanocores).', priority: 0, cell: (o) => sum(o, 'cpu') },
  { name: 'Memory', type: 'string', description: 'Memory working set.', priority: 0, cell: (o) => sum(o, 'memory') },
  { name: 'Window', type: 'string', description: 'The window the CPU rate was measured over.', priority: 0, cell: (o) => (typeof o.window === 'string' ? o.window : '') },
  AGE_COLUMN,
];

const common = {
  group: METRICS_GROUP,
  version: 'v1beta1',
  shortNames: [],
  categories: [],
  verbs: ['get', 'list'],
  statusSubresource: false,
  fieldLabels: [],
  fields: () => ({}),
  columns: COLUMNS,
  nameColumn: true,
  nameRule: 'subdomain',
  allowCreateOnUpdate: false,
  returnDeletedObject: false,
  strategy: { validateCreate: () => undefined, validateUpdate: () => undefined },
} as const;

export const nodeMetricsDefinition: ResourceDefinition = {
  ...common, kind: 'NodeMetrics', listKind: 'NodeMetricsList', plural: 'nodes', singular: '', namespaced: false,
  storage: NODE_METRICS_STORAGE, schema: nodeMetricsSchema,
};

export const podMetricsDefinition: ResourceDefinition = {
  ...common, kind: 'PodMetrics', listKind: 'PodMetricsList', plural: 'pods', singular: '', namespaced: true,
  storage: POD_METRICS_STORAGE, schema: podMetricsSchema,
};
