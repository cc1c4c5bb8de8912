/**
 * resources/pods: core v1 Pod. Creation applies src/api/pod's defaults and validation (every
 * problem a 422 cause naming its field) and resets the status to Pending with the QoS class;
 * the spec is immutable but for images, activeDeadlineSeconds, tolerations additions and
 * schedulingGates removals; the status subresource is the node agent's. Deletion is graceful:
 * DELETE marks the pod (deletionTimestamp = now + grace, deletionGracePeriodSeconds) and a DELETE
 * with gracePeriodSeconds=0 removes it, as the node agent does once the containers stopped; a pod
 * bound to no node, or terminal, goes at once. Field selectors: spec.nodeName, status.phase and
 * upstream's others. The connect subresources log, exec, attach and portforward are declared
 * here and served by ../../nodeproxy; eviction (a policy/v1 Eviction) by ../../eviction;
 * `binding` (assign an unbound pod to a node) is declared with its merge rule here and served
 * as an action by the router; `ephemeralcontainers` (ephemeral.ts) adds ephemeral containers to a
 * running pod.
 *
 * Must not: know HTTP, the store or the node agents.
 */
import { str, type ResourceDefinition } from '../../registry/index.js';
import { rec } from '../common/index.js';
import { bindingSubresource } from './binding.js';
import { ephemeralContainersSubresource } from './ephemeral.js';
import { POD_COLUMNS } from './printer.js';
import { podSchema } from './schema.js';
import { podStrategyWith } from './strategy.js';
import type { PodGates } from './resize.js';

export { bindFromBody, bindingSchema, bindPod, validateBinding, type BindRequest } from './binding.js';
export { podCondition, setPodCondition, type PodConditionInput } from './conditions.js';
export { summarize } from './printer.js';
export { addProblems, qosClass, PHASES } from './strategy.js';
export type { PodGates } from './resize.js';
export { podSchema } from './schema.js';

/** core v1 Pod with the API server's feature gates (InPlacePodVerticalScaling: resources of running pods may change). */
export function podDefinitionWith(gates: PodGates): ResourceDefinition {
  return { ...podDefinition, strategy: podStrategyWith(gates) };
}

export const podDefinition: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'Pod',
  listKind: 'PodList',
  plural: 'pods',
  singular: 'pod',
  shortNames: ['po'],
  categories: ['all'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: 'pods',
  schema: podSchema,
  statusSubresource: true,
  fieldLabels: [
    'spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'spec.hostNetwork',
    'status.phase', 'status.podIP', 'status.nominatedNodeName',
  ],
  fields: (p) => {
    const spec = rec(p.spec);
    const status = rec(p.status);
    return {
      'spec.nodeName': str(spec.nodeName),
      'spec.restartPolicy': str(spec.restartPolicy),
      'spec.schedulerName': str(spec.schedulerName),
      'spec.serviceAccountName': str(spec.serviceAccountName),
      'spec.hostNetwork': String(spec.hostNetwork === true),
      'status.phase': str(status.phase),
      'status.podIP': str(status.podIP),
      'status.nominatedNodeName': str(status.nominatedNodeName),
    };
  },
  columns: POD_COLUMNS,
  nameColumn: true,
  nameRule: 'subdomain',
  allowCreateOnUpdate: false,
  returnDeletedObject: true,
  strategy: podStrategyWith({ inPlacePodVerticalScaling: false }),
  subresources: [
    { name: 'log', kind: 'Pod', verbs: ['get'] },
    { name: 'exec', kind: 'PodExecOptions', verbs: ['create', 'get'] },
    { name: 'attach', kind: 'PodAttachOptions', verbs: ['create', 'get'] },
    { name: 'portforward', kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
    bindingSubresource,
    ephemeralContainersSubresource,
    { name: 'eviction', kind: 'Eviction', group: 'policy', version: 'v1', verbs: ['create'] },
  ],
};
