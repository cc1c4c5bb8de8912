/**
 * podresources: the pod resources API v1 (upstream: pkg/kubelet/apis/podresources) on
 * `<root-dir>/pod-resources/nodeagent.sock`, for node-local monitoring agents: List (each pod's
 * containers with their devices, exclusive CPUs and memory blocks), GetAllocatableResources
 * (the healthy devices, the CPUs and memory the managers may hand out) and Get (one pod, behind
 * the NodeagentPodResourcesGet gate), rate limited as upstream (100 calls a second, bursts of 10).
 *
 * It owns: the socket and the answers' shapes. It must not: change anything (every call only
 * reads the device, CPU and memory managers and the desired pods), or answer beyond the limit.
 */
export {
  PODRESOURCES_SERVER_FAILED, POD_RESOURCES_BURST, POD_RESOURCES_QPS, POD_RESOURCES_SOCKET, createPodResourcesServer,
  type PodResourcesServer, type PodResourcesServerOptions, type PodResourcesSources,
} from './server.js';
export { allocatableResources, podResources, type WireContainerDevices, type WireContainerMemory, type WirePodResources } from './answers.js';
