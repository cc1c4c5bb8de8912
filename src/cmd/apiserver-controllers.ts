/**
 * Part of orch-apiserver's composition root: the control loops (scheduler, node lifecycle, taint
 * eviction, pod GC, service accounts and the root CA of every namespace, the storage loops of
 * apiserver-storage.ts) over the server's own registries, with the binder that writes pods/binding,
 * under leader election on a Lease of --leader-elect-resource-namespace, as --controllers says.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { realClock } from '../api/clock.js';
import { ControllerManager, registryClient, type Binder } from '../apiserver/controllers/index.js';
import type { ResourceRegistry } from '../apiserver/registry/index.js';
import { bindPod } from '../apiserver/resources/pods/index.js';
import { CONTROLLERS_USER } from '../apiserver/controllers/client/index.js';
import { apiServerGateEnabled, type ApiServerOptions } from '../apiserver/server/index.js';
import { storageClients } from './apiserver-storage.js';

const ms = (nanoseconds: number): number => Math.round(nanoseconds / 1e6);

export function controllerManager(
  o: ApiServerOptions, registryOf: (group: string, plural: string) => ResourceRegistry, rootCaPem: string, log: (message: string) => void,
): ControllerManager {
  const clock = realClock;
  const client = (group: string, plural: string, namespace = ''): ReturnType<typeof registryClient> => registryClient({ registry: registryOf(group, plural), namespace, clock });
  const pods = registryOf('', 'pods');
  const binder: Binder = {
    async bind(namespace, name, uid, node) {
      await bindPod(pods, { user: CONTROLLERS_USER, now: new Date(clock.now()) }, { namespace, name, uid, node }, false);
    },
  };
  const host = hostname();
  return new ControllerManager({
    clients: {
      pods: client('', 'pods'),
      nodes: client('', 'nodes'),
      nodeLeases: client('coordination.orch.io', 'leases', 'orch-node-lease'),
      leases: client('coordination.orch.io', 'leases', o.leaderElectResourceNamespace),
      events: client('events.orch.io', 'events'),
      namespaces: client('', 'namespaces'),
      serviceAccounts: client('', 'serviceaccounts'),
      configMaps: client('', 'configmaps'),
      ...storageClients(client),
    },
    binder,
    controllers: o.controllers,
    leaderElection: {
      enabled: o.leaderElect,
      namespace: o.leaderElectResourceNamespace,
      name: o.leaderElectResourceName,
      identity: `${host}_${randomUUID()}`,
      leaseDurationMs: ms(o.leaderElectLeaseDuration),
      renewDeadlineMs: ms(o.leaderElectRenewDeadline),
      retryPeriodMs: ms(o.leaderElectRetryPeriod),
    },
    nodeMonitorPeriodMs: ms(o.nodeMonitorPeriod),
    nodeMonitorGracePeriodMs: ms(o.nodeMonitorGracePeriod),
    nodeStartupGracePeriodMs: ms(o.nodeStartupGracePeriod),
    terminatedPodGcThreshold: o.terminatedPodGcThreshold,
    rootCaPem,
    features: { inPlacePodVerticalScaling: apiServerGateEnabled(o.featureGates, 'InPlacePodVerticalScaling') },
    clock,
    log,
    hostname: host,
  });
}
