/**
 * The shapes the node status module works with: the Node and Lease as orch-apiserver serves
 * them (kubernetes-types' shapes with the naming rule applied to the few renamed fields), the
 * facts it is fed with (runtime, images, health) and its event hook.
 */
import type { LeaseSpec } from 'kubernetes-types/coordination/v1.js';
import type { Node, NodeStatus, NodeSystemInfo } from 'kubernetes-types/core/v1.js';
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';

/**
 * NodeSystemInfo on the wire: upstream's kubeletVersion and kubeProxyVersion (both the agent's
 * version, as upstream v1.28 fills them: client libraries require them) beside the renamed
 * nodeagentVersion.
 */
export interface WireNodeSystemInfo extends NodeSystemInfo {
  nodeagentVersion: string;
  orchProxyVersion?: string;
}

/** NodeStatus on the wire: `daemonEndpoints.nodeagentEndpoint` (upstream kubeletEndpoint). */
export interface WireNodeStatus extends Omit<NodeStatus, 'nodeInfo' | 'daemonEndpoints'> {
  nodeInfo?: WireNodeSystemInfo;
  daemonEndpoints?: { nodeagentEndpoint?: { Port: number } };
}

/** A core v1 Node as orch-apiserver stores it. */
export interface WireNode extends Omit<Node, 'status'> {
  status?: WireNodeStatus;
}

/** A coordination.orch.io/v1 Lease. */
export interface WireLease {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: LeaseSpec;
}

/** One of the runtime's conditions (CRI Status: RuntimeReady, NetworkReady). */
export interface RuntimeCondition {
  readonly ready: boolean;
  readonly reason?: string;
  readonly message?: string;
}

export interface RuntimeStatus {
  readonly runtime: RuntimeCondition;
  readonly network: RuntimeCondition;
}

/** An image the runtime holds (CRI ListImages). */
export interface NodeImage {
  /** repoTags then repoDigests. */
  readonly names: readonly string[];
  readonly sizeBytes: number;
}

/** Pressure signals of the eviction manager. */
export interface NodePressure {
  readonly memory: boolean;
  readonly disk: boolean;
  readonly pid: boolean;
}

/**
 * What the node status is made of besides the machine: the composition root adapts the CRI
 * client, the PLEG and the eviction manager to it (this module never imports them).
 */
export interface NodeFacts {
  /** CRI Status; rejects when the runtime does not answer. */
  runtimeStatus(): Promise<RuntimeStatus>;
  /** CRI Version: runtime name and version, e.g. `containerd` and `v1.7.2`. */
  runtimeVersion(): Promise<{ readonly name: string; readonly version: string }>;
  /** CRI ListImages. */
  images(): Promise<readonly NodeImage[]>;
  /** A problem of the agent's own loops (PLEG, sync loop) that makes the node not ready; undefined when healthy. */
  health(): string | undefined;
  /** Memory, disk and PID pressure; all false when not given. */
  pressure?(): NodePressure;
  /** The device plugin resources; none when not given. */
  extendedResources?(): ExtendedResources;
  /**
   * True when the Node's extended resources are to be zeroed once registration finds the Node
   * existing (upstream reconcileExtendedResource: the agent lost its device checkpoint, the
   * node was recreated; the plugins register again).
   */
  resetExtendedResources?(): boolean;
  /**
   * status.volumesInUse (upstream's volume manager GetVolumesInUse): the sorted unique names of
   * the attachable volumes the node wants or has mounted. Not given: the field is left alone.
   */
  volumesInUse?(): Promise<readonly string[]>;
}

/** Device plugin resources as the node status reports them (whole numbers of devices). */
export interface ExtendedResources {
  readonly capacity: ReadonlyMap<string, number>;
  readonly allocatable: ReadonlyMap<string, number>;
  /** Resources gone for good: reported as 0 in both maps. */
  readonly removed: readonly string[];
}

/** An event about the node (the composition root records it on the Node object). */
export interface NodeEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

export type NodeEventHook = (event: NodeEvent) => void;

/** The logging surface this module needs (src/agent/logging's Logger fits). */
export interface NodeStatusLogger {
  info(msg: string, fields?: Readonly<Record<string, unknown>>): void;
  warn(msg: string, fields?: Readonly<Record<string, unknown>>): void;
  error(msg: string, fields?: Readonly<Record<string, unknown>>): void;
}
