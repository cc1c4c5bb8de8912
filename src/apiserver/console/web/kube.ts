/**
 * The shapes of the API objects the console reads: only the fields it shows, all optional as
 * the API may leave any of them out.
 */
export interface ObjectMeta {
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly creationTimestamp?: string;
  readonly deletionTimestamp?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly ownerReferences?: readonly { readonly kind?: string; readonly name?: string }[];
}

export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: ObjectMeta;
}

export interface ListOf<T> {
  readonly metadata?: { readonly resourceVersion?: string; readonly continue?: string };
  readonly items?: readonly T[];
}

export type ResourceList = Readonly<Record<string, string>>;

export interface Container {
  readonly name?: string;
  readonly image?: string;
  readonly restartPolicy?: string;
  readonly resources?: { readonly requests?: ResourceList; readonly limits?: ResourceList };
}

export interface ContainerState {
  readonly waiting?: { readonly reason?: string; readonly message?: string };
  readonly running?: { readonly startedAt?: string };
  readonly terminated?: {
    readonly exitCode?: number; readonly signal?: number; readonly reason?: string; readonly message?: string;
    readonly startedAt?: string; readonly finishedAt?: string;
  };
}

export interface ContainerStatus {
  readonly name?: string;
  readonly ready?: boolean;
  readonly started?: boolean;
  readonly restartCount?: number;
  readonly image?: string;
  readonly imageID?: string;
  readonly containerID?: string;
  readonly state?: ContainerState;
  readonly lastState?: ContainerState;
}

export interface Condition {
  readonly type?: string;
  readonly status?: string;
  readonly reason?: string;
  readonly message?: string;
  readonly lastHeartbeatTime?: string;
  readonly lastTransitionTime?: string;
}

export interface Pod extends KubeObject {
  readonly spec?: {
    readonly nodeName?: string;
    readonly containers?: readonly Container[];
    readonly initContainers?: readonly Container[];
    readonly overhead?: ResourceList;
    readonly restartPolicy?: string;
    readonly serviceAccountName?: string;
    readonly priorityClassName?: string;
  };
  readonly status?: {
    readonly phase?: string;
    readonly reason?: string;
    readonly message?: string;
    readonly podIP?: string;
    readonly hostIP?: string;
    readonly qosClass?: string;
    readonly startTime?: string;
    readonly conditions?: readonly Condition[];
    readonly containerStatuses?: readonly ContainerStatus[];
    readonly initContainerStatuses?: readonly ContainerStatus[];
  };
}

export interface Taint {
  readonly key?: string;
  readonly value?: string;
  readonly effect?: string;
}

export interface Node extends KubeObject {
  readonly spec?: { readonly unschedulable?: boolean; readonly taints?: readonly Taint[]; readonly podCIDR?: string };
  readonly status?: {
    readonly capacity?: ResourceList;
    readonly allocatable?: ResourceList;
    readonly conditions?: readonly Condition[];
    readonly addresses?: readonly { readonly type?: string; readonly address?: string }[];
    readonly nodeInfo?: {
      readonly kubeletVersion?: string;
      readonly osImage?: string;
      readonly kernelVersion?: string;
      readonly containerRuntimeVersion?: string;
      readonly architecture?: string;
    };
  };
}

export interface Lease extends KubeObject {
  readonly spec?: { readonly holderIdentity?: string; readonly leaseDurationSeconds?: number; readonly renewTime?: string; readonly acquireTime?: string };
}

export interface ObjectReference {
  readonly kind?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly uid?: string;
}

/** events.orch.io/v1 Event. */
export interface KubeEvent extends KubeObject {
  readonly eventTime?: string;
  readonly series?: { readonly count?: number; readonly lastObservedTime?: string };
  readonly reportingController?: string;
  readonly reportingInstance?: string;
  readonly action?: string;
  readonly reason?: string;
  readonly note?: string;
  readonly type?: string;
  readonly regarding?: ObjectReference;
  readonly deprecatedCount?: number;
  readonly deprecatedFirstTimestamp?: string;
  readonly deprecatedLastTimestamp?: string;
  readonly deprecatedSource?: { readonly component?: string; readonly host?: string };
}

export interface NodeMetrics extends KubeObject {
  readonly timestamp?: string;
  readonly window?: string;
  readonly usage?: ResourceList;
}

export interface PodMetrics extends KubeObject {
  readonly timestamp?: string;
  readonly containers?: readonly { readonly name?: string; readonly usage?: ResourceList }[];
}

/** A watch stream's line. */
export interface WatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: KubeObject & { readonly code?: number; readonly message?: string; readonly reason?: string };
}

/** `namespace/name`, or `name` for cluster-scoped objects. */
export function keyOf(o: KubeObject): string {
  const m = o.metadata ?? {};
  return m.namespace === undefined || m.namespace === '' ? m.name ?? '' : `${m.namespace}/${m.name ?? ''}`;
}

/** Milliseconds since the epoch of an RFC 3339 time, or undefined. */
export function timeOf(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
