/**
 * The wire schema of core v1 Node, upstream's shape with the naming rule applied:
 * `status.daemonEndpoints.nodeagentEndpoint.Port` (upstream kubeletEndpoint),
 * `status.nodeInfo.nodeagentVersion` (kubeletVersion) and `status.nodeInfo.orchProxyVersion`
 * (kubeProxyVersion), beside upstream's own kubeletVersion and kubeProxyVersion, which every client
 * library's model requires. Conditions and addresses merge by `type` in strategic merge patches.
 */
import { any, array, bool, int32, int64, object, objectMeta, str, time, type ObjectSchema, type Schema } from '../../schema/index.js';

/** A resource quantity: a string ("100m", "64Mi") or a number, stored as its text. */
export const quantities: Schema = { type: 'map', values: { type: 'int-or-string' }, description: 'Resource quantities by resource name (cpu, memory, pods, ...).' };

export const taintSchema: ObjectSchema = object(
  {
    key: str('The taint key to be applied to a node.'),
    value: str('The taint value corresponding to the taint key.'),
    effect: str('The effect of the taint on pods that do not tolerate it: NoSchedule, PreferNoSchedule or NoExecute.', { enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] }),
    timeAdded: time('When the taint was added (NoExecute taints only).'),
  },
  { name: 'io.orch.api.core.v1.Taint', required: ['key', 'effect'] },
);

const spec = object(
  {
    podCIDR: str('The pod IP range assigned to the node.'),
    podCIDRs: array(str(), { patchStrategy: 'merge', description: 'The IP ranges assigned to the node (at most one per family; the first equals podCIDR).' }),
    providerID: str('ID of the node assigned by the cloud provider.'),
    unschedulable: bool('Controls node schedulability of new pods (kubectl cordon).'),
    taints: array(taintSchema, { description: "The node's taints." }),
    configSource: any('Deprecated upstream; stored as given.'),
    externalID: str('Deprecated. Not all nodes have an external ID.'),
  },
  { name: 'io.orch.api.core.v1.NodeSpec' },
);

const condition = object(
  {
    type: str('Type of node condition (Ready, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable).'),
    status: str('True, False or Unknown.'),
    lastHeartbeatTime: time('Last time the condition was probed.'),
    lastTransitionTime: time('Last time the condition changed status.'),
    reason: str('(brief) reason for the last transition.'),
    message: str('Human-readable details of the last transition.'),
  },
  { name: 'io.orch.api.core.v1.NodeCondition', required: ['type', 'status'] },
);

const address = object(
  { type: str('Hostname, ExternalIP, InternalIP, ExternalDNS or InternalDNS.'), address: str('The node address.') },
  { name: 'io.orch.api.core.v1.NodeAddress', required: ['type', 'address'] },
);

const nodeInfo = object(
  {
    machineID: str('MachineID reported by the node (/etc/machine-id).'),
    systemUUID: str('SystemUUID reported by the node.'),
    bootID: str('Boot ID reported by the node.'),
    kernelVersion: str('Kernel version reported by the node (uname -r).'),
    osImage: str('OS image reported by the node (/etc/os-release).'),
    containerRuntimeVersion: str('Container runtime version reported by the node through the runtime API (containerd://1.7.x).'),
    nodeagentVersion: str('Nodeagent version reported by the node (upstream: kubeletVersion).'),
    kubeletVersion: str('Node agent version reported by the node (the same as nodeagentVersion; the clients\' field name).'),
    kubeProxyVersion: str('Deprecated: the node agent version, as upstream v1.28 reports it.'),
    orchProxyVersion: str('Deprecated (upstream: kubeProxyVersion).'),
    operatingSystem: str('The operating system reported by the node.'),
    architecture: str('The architecture reported by the node.'),
  },
  { name: 'io.orch.api.core.v1.NodeSystemInfo' },
);

const status = object(
  {
    capacity: quantities,
    allocatable: quantities,
    phase: str('Deprecated: NodePhase is the recently observed lifecycle phase of the node.'),
    conditions: array(condition, { mergeKey: 'type', patchStrategy: 'merge', description: 'Current service state of the node.' }),
    addresses: array(address, { mergeKey: 'type', patchStrategy: 'merge', description: 'Addresses reachable to the node; the API server reaches the node agent at the InternalIP.' }),
    daemonEndpoints: object(
      { nodeagentEndpoint: object({ Port: int32('Port number of the given endpoint.') }, { name: 'io.orch.api.core.v1.DaemonEndpoint', required: ['Port'] }) },
      { name: 'io.orch.api.core.v1.NodeDaemonEndpoints', description: 'Endpoints of daemons running on the node: the node agent\'s HTTPS port (upstream: kubeletEndpoint).' },
    ),
    nodeInfo,
    images: array(object({ names: array(str()), sizeBytes: int64('The size of the image in bytes.') }, { name: 'io.orch.api.core.v1.ContainerImage' }), { description: 'Images on this node.' }),
    volumesInUse: array(str(), { description: 'Volumes attached and mounted on the node.' }),
    volumesAttached: array(object({ name: str(), devicePath: str() }, { name: 'io.orch.api.core.v1.AttachedVolume' }), { description: 'Volumes attached to the node.' }),
    config: any('Status of the config assigned to the node (deprecated upstream).'),
    runtimeHandlers: array(object({ name: str('Runtime handler name; empty for the default one.'), features: object({ recursiveReadOnlyMounts: bool() }) }, { name: 'io.orch.api.core.v1.NodeRuntimeHandler' }), { description: 'The available runtime handlers.' }),
  },
  { name: 'io.orch.api.core.v1.NodeStatus' },
);

export const nodeSchema: ObjectSchema = object(
  {
    kind: str('Kind of the object: Node.'),
    apiVersion: str('Versioned schema of the object: v1.'),
    metadata: objectMeta,
    spec,
    status,
  },
  { name: 'io.orch.api.core.v1.Node', gvk: [{ group: '', version: 'v1', kind: 'Node' }], description: 'Node is a worker node (one node agent).' },
);
