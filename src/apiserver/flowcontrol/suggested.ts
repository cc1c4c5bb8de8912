/**
 * The configuration the server starts with, as upstream's mandatory and suggested objects
 * (k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap), with the API groups renamed (`*.orch.io`)
 * and the node lease namespace `orch-node-lease`. The server creates the ones that are missing
 * at start; an operator may then change or add objects (docs/apiserver/flow-control.md).
 */
import type { WireObject } from '../registry/index.js';

export const FLOWCONTROL_GROUP = 'flowcontrol.apiserver.orch.io';
export const FLOWCONTROL_VERSION = 'v1beta3';
const API_VERSION = `${FLOWCONTROL_GROUP}/${FLOWCONTROL_VERSION}`;
const BOOTSTRAP = { 'apf.orch.io/autoupdate-spec': 'true' };

function level(name: string, shares: number, queuing: { queues: number; handSize: number; queueLengthLimit: number } | 'reject', lendablePercent: number): WireObject {
  const limitResponse = queuing === 'reject' ? { type: 'Reject' } : { type: 'Queue', queuing };
  return {
    apiVersion: API_VERSION, kind: 'PriorityLevelConfiguration', metadata: { name, annotations: BOOTSTRAP },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: shares, lendablePercent, limitResponse } },
  };
}

type Subject = { kind: 'Group'; group: { name: string } } | { kind: 'User'; user: { name: string } } | { kind: 'ServiceAccount'; serviceAccount: { namespace: string; name: string } };
const group = (name: string): Subject => ({ kind: 'Group', group: { name } });
const user = (name: string): Subject => ({ kind: 'User', user: { name } });
const serviceAccount = (namespace: string, name: string): Subject => ({ kind: 'ServiceAccount', serviceAccount: { namespace, name } });

interface ResourceRule { verbs: string[]; apiGroups: string[]; resources: string[]; clusterScope?: boolean; namespaces?: string[] }
const everything: ResourceRule = { verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] };
const allUrls = { verbs: ['*'], nonResourceURLs: ['*'] };

function schema(name: string, levelName: string, precedence: number, distinguisher: 'ByUser' | 'ByNamespace' | undefined, rules: unknown[]): WireObject {
  return {
    apiVersion: API_VERSION, kind: 'FlowSchema', metadata: { name, annotations: BOOTSTRAP },
    spec: {
      priorityLevelConfiguration: { name: levelName }, matchingPrecedence: precedence,
      ...(distinguisher === undefined ? {} : { distinguisherMethod: { type: distinguisher } }), rules,
    },
  };
}

export function suggestedPriorityLevels(): WireObject[] {
  const q = (queues: number, handSize: number): { queues: number; handSize: number; queueLengthLimit: number } => ({ queues, handSize, queueLengthLimit: 50 });
  return [
    { apiVersion: API_VERSION, kind: 'PriorityLevelConfiguration', metadata: { name: 'exempt', annotations: BOOTSTRAP }, spec: { type: 'Exempt', exempt: {} } },
    level('system', 30, q(64, 6), 33),
    level('node-high', 40, q(64, 6), 25),
    level('leader-election', 10, q(16, 4), 0),
    level('workload-high', 40, q(128, 6), 50),
    level('workload-low', 100, q(128, 6), 90),
    level('global-default', 20, q(128, 6), 50),
    level('catch-all', 5, 'reject', 0),
  ];
}

export function suggestedFlowSchemas(): WireObject[] {
  const leaseRule = (verbs: string[]): ResourceRule => ({ verbs, apiGroups: ['coordination.orch.io'], resources: ['leases'], namespaces: ['*'] });
  return [
    schema('exempt', 'exempt', 1, undefined, [{ subjects: [group('system:masters')], resourceRules: [everything], nonResourceRules: [allUrls] }]),
    schema('probes', 'exempt', 2, undefined, [{
      subjects: [group('system:unauthenticated'), group('system:authenticated')],
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }],
    }]),
    schema('system-leader-election', 'leader-election', 100, 'ByUser', [{
      subjects: [user('system:kube-controller-manager'), user('system:kube-scheduler'), serviceAccount('kube-system', 'kube-controller-manager'), serviceAccount('kube-system', 'kube-scheduler')],
      resourceRules: [{ ...leaseRule(['get', 'create', 'update']) }],
    }]),
    schema('workload-leader-election', 'leader-election', 200, 'ByUser', [{
      subjects: [serviceAccount('kube-system', '*')],
      resourceRules: [{ ...leaseRule(['get', 'create', 'update']) }],
    }]),
    schema('system-node-high', 'node-high', 400, 'ByUser', [{
      subjects: [group('system:nodes')],
      resourceRules: [
        { verbs: ['*'], apiGroups: [''], resources: ['nodes', 'nodes/status'], clusterScope: true },
        { verbs: ['*'], apiGroups: ['coordination.orch.io'], resources: ['leases'], namespaces: ['orch-node-lease'] },
      ],
    }]),
    schema('system-nodes', 'system', 500, 'ByUser', [{ subjects: [group('system:nodes')], resourceRules: [everything], nonResourceRules: [allUrls] }]),
    schema('kube-system-service-accounts', 'workload-high', 900, 'ByNamespace', [{ subjects: [serviceAccount('kube-system', '*')], resourceRules: [everything], nonResourceRules: [allUrls] }]),
    schema('service-accounts', 'workload-low', 9000, 'ByUser', [{ subjects: [group('system:serviceaccounts')], resourceRules: [everything], nonResourceRules: [allUrls] }]),
    schema('global-default', 'global-default', 9900, 'ByUser', [{
      subjects: [group('system:unauthenticated'), group('system:authenticated')], resourceRules: [everything], nonResourceRules: [allUrls],
    }]),
    schema('catch-all', 'catch-all', 10000, 'ByUser', [{
      subjects: [group('system:unauthenticated'), group('system:authenticated')], resourceRules: [everything], nonResourceRules: [allUrls],
    }]),
  ];
}
