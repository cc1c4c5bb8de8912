/**
 * Which informers each control loop reads, and how each loop is built from them (one leader
 * term's worth): the table the controller manager starts its terms from.
 */
import type { Clock } from '../../api/clock.js';
import { AttachDetachController } from './attachdetach/index.js';
import type { ClientEventRecorder, Informer, Log, ResourceClient } from './client/index.js';
import { EphemeralVolumeController } from './ephemeral/index.js';
import { NodeLifecycleController, TaintEvictionController } from './nodelifecycle/index.js';
import { PersistentVolumeController } from './persistentvolume/index.js';
import { PodGarbageCollector } from './podgc/index.js';
import { Scheduler, SchedulerVolumes, type Binder } from './scheduler/index.js';
import type { ControllerName } from './selection.js';
import { RootCaPublisher, ServiceAccountsController } from './serviceaccounts/index.js';
import { ClaimProtectionController, VolumeProtectionController } from './volumeprotection/index.js';

export interface ControllerClients {
  readonly pods: ResourceClient;
  readonly nodes: ResourceClient;
  /** Leases of orch-node-lease (the node agents' heartbeats). */
  readonly nodeLeases: ResourceClient;
  /** Leases of the leader election's namespace. */
  readonly leases: ResourceClient;
  /** events.orch.io/v1 events. */
  readonly events: ResourceClient;
  readonly namespaces: ResourceClient;
  readonly serviceAccounts: ResourceClient;
  readonly configMaps: ResourceClient;
  readonly persistentVolumes: ResourceClient;
  readonly persistentVolumeClaims: ResourceClient;
  readonly storageClasses: ResourceClient;
  readonly csiDrivers: ResourceClient;
  readonly csiNodes: ResourceClient;
  readonly volumeAttachments: ResourceClient;
}

/** The informed resources (one informer each per term). */
export const INFORMED = [
  'pods', 'nodes', 'nodeLeases', 'namespaces', 'serviceAccounts', 'configMaps',
  'persistentVolumes', 'persistentVolumeClaims', 'storageClasses', 'csiDrivers', 'csiNodes', 'volumeAttachments',
] as const satisfies readonly (keyof ControllerClients)[];
export type Informed = (typeof INFORMED)[number];
export type Informers = Readonly<Record<Informed, Informer>>;

/** What each loop reads. */
export const INFORMERS_OF: Readonly<Record<ControllerName, readonly Informed[]>> = {
  scheduler: ['nodes', 'pods', 'persistentVolumes', 'persistentVolumeClaims', 'storageClasses', 'csiNodes'],
  'node-lifecycle-controller': ['nodes', 'pods', 'nodeLeases'],
  'taint-eviction-controller': ['nodes', 'pods'],
  'pod-garbage-collector-controller': ['nodes', 'pods'],
  'serviceaccount-controller': ['namespaces', 'serviceAccounts'],
  'root-ca-certificate-publisher-controller': ['namespaces', 'configMaps'],
  'persistentvolume-binder-controller': ['persistentVolumes', 'persistentVolumeClaims', 'storageClasses', 'pods'],
  'persistentvolume-attach-detach-controller': ['nodes', 'pods', 'persistentVolumes', 'persistentVolumeClaims', 'csiDrivers', 'volumeAttachments'],
  'persistentvolumeclaim-protection-controller': ['persistentVolumeClaims', 'pods'],
  'persistentvolume-protection-controller': ['persistentVolumes'],
  'ephemeral-volume-controller': ['pods', 'persistentVolumeClaims'],
};

export interface Loop {
  start(): void;
  close(): Promise<void>;
}

/** The feature gates of orch-apiserver the loops act on (--feature-gates, resolved by the composition root). */
export interface ControllerFeatures {
  /** InPlacePodVerticalScaling: the scheduler counts a pod at the larger of its requests and allocatedResources. */
  readonly inPlacePodVerticalScaling: boolean;
}

export interface LoopContext {
  readonly informers: Informers;
  readonly clients: ControllerClients;
  readonly binder: Binder;
  readonly recorder: (controller: string) => ClientEventRecorder;
  readonly clock: Clock;
  readonly log: Log;
  readonly nodeMonitorPeriodMs: number;
  readonly nodeMonitorGracePeriodMs: number;
  readonly nodeStartupGracePeriodMs: number;
  readonly terminatedPodGcThreshold: number;
  readonly rootCaPem: string;
  readonly features: ControllerFeatures;
}

export function buildLoop(name: ControllerName, c: LoopContext): Loop {
  const i = c.informers;
  const common = { clock: c.clock, log: c.log };
  switch (name) {
    case 'scheduler': {
      const volumes = new SchedulerVolumes({
        ...common, claims: i.persistentVolumeClaims, volumes: i.persistentVolumes, classes: i.storageClasses, csiNodes: i.csiNodes,
        volumesClient: c.clients.persistentVolumes, claimsClient: c.clients.persistentVolumeClaims,
      });
      return new Scheduler({
        ...common, pods: i.pods, nodes: i.nodes, podsClient: c.clients.pods, binder: c.binder, volumes, recorder: c.recorder('default-scheduler'),
        inPlacePodVerticalScaling: c.features.inPlacePodVerticalScaling,
      });
    }
    case 'node-lifecycle-controller':
      return new NodeLifecycleController({
        ...common, nodes: i.nodes, leases: i.nodeLeases, pods: i.pods, nodesClient: c.clients.nodes, podsClient: c.clients.pods, recorder: c.recorder('node-controller'),
        monitorPeriodMs: c.nodeMonitorPeriodMs, gracePeriodMs: c.nodeMonitorGracePeriodMs, startupGracePeriodMs: c.nodeStartupGracePeriodMs,
      });
    case 'taint-eviction-controller':
      return new TaintEvictionController({ ...common, nodes: i.nodes, pods: i.pods, podsClient: c.clients.pods, recorder: c.recorder('taint-eviction-controller') });
    case 'pod-garbage-collector-controller':
      return new PodGarbageCollector({ ...common, pods: i.pods, nodes: i.nodes, podsClient: c.clients.pods, nodesClient: c.clients.nodes, terminatedThreshold: c.terminatedPodGcThreshold });
    case 'serviceaccount-controller':
      return new ServiceAccountsController({ ...common, namespaces: i.namespaces, serviceAccounts: i.serviceAccounts, serviceAccountsClient: c.clients.serviceAccounts });
    case 'root-ca-certificate-publisher-controller':
      return new RootCaPublisher({ ...common, namespaces: i.namespaces, configMaps: i.configMaps, configMapsClient: c.clients.configMaps, caPem: c.rootCaPem });
    case 'persistentvolume-binder-controller':
      return new PersistentVolumeController({
        ...common, volumes: i.persistentVolumes, claims: i.persistentVolumeClaims, classes: i.storageClasses, pods: i.pods,
        volumesClient: c.clients.persistentVolumes, claimsClient: c.clients.persistentVolumeClaims, recorder: c.recorder('persistentvolume-controller'),
      });
    case 'persistentvolume-attach-detach-controller':
      return new AttachDetachController({
        ...common, nodes: i.nodes, pods: i.pods, claims: i.persistentVolumeClaims, volumes: i.persistentVolumes, csiDrivers: i.csiDrivers,
        attachments: i.volumeAttachments, attachmentsClient: c.clients.volumeAttachments, nodesClient: c.clients.nodes,
      });
    case 'persistentvolumeclaim-protection-controller':
      return new ClaimProtectionController({ ...common, claims: i.persistentVolumeClaims, pods: i.pods, claimsClient: c.clients.persistentVolumeClaims, podsClient: c.clients.pods });
    case 'persistentvolume-protection-controller':
      return new VolumeProtectionController({ ...common, volumes: i.persistentVolumes, volumesClient: c.clients.persistentVolumes });
    case 'ephemeral-volume-controller':
      return new EphemeralVolumeController({
        ...common, pods: i.pods, claims: i.persistentVolumeClaims, claimsClient: c.clients.persistentVolumeClaims, recorder: c.recorder('ephemeral-volume-controller'),
      });
  }
}
