/**
 * The Pod as both binaries see it (core/v1 shapes from `kubernetes-types`): reading a decoded
 * JSON value as a Pod with its field types checked, upstream's defaulting, validation at
 * creation, the names and annotations that tell where a pod came from, the identity (UID,
 * namespace, name) a pod carries once it entered the agent (NodePod), and the rules that say
 * whether a pod may run on a node (requests, host ports, node affinity, tolerations), shared by
 * the node agent's admission and the API server's scheduler.
 *
 * Owns: the rules a pod object must follow, independent of who holds it. Must not: do I/O,
 * log, know about sources, the store or the runtime, or keep state; every function returns
 * a new value and leaves its argument unchanged.
 */
export { decodePod, type PodDecodeResult } from './shape.js';
export {
  applyPodDefaults, defaultImagePullPolicy, imageTagAndDigest, VOLUME_SOURCES,
  DEFAULT_SCHEDULER_NAME, DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS, DEFAULT_TERMINATION_MESSAGE_PATH, DEFAULT_VOLUME_FILE_MODE,
} from './defaults.js';
export { validatePod, RESTART_POLICIES, DNS_POLICIES, MAX_ANNOTATIONS_BYTES, type PodValidationOptions } from './validation.js';
export { PULL_POLICIES, PROTOCOLS } from './validation-containers.js';
export { HOST_PATH_TYPES } from './validation-volumes.js';
export { qosClass, type QOSClass } from './qos.js';
export { formatMap, goQuote, metadataFieldValue } from './downward.js';
export { toNodePod, DEFAULT_NAMESPACE, type NodePod, type NodePodResult, type PodIdentity } from './identity.js';
export {
  podFullName, podNamespacedName, podSource, isStaticPod, isMirrorPod,
  CONFIG_SOURCE_ANNOTATION, CONFIG_HASH_ANNOTATION, CONFIG_SEEN_ANNOTATION, CONFIG_MIRROR_ANNOTATION, LOCAL_ANNOTATIONS,
  FILE_SOURCE, HTTP_SOURCE, API_SOURCE,
} from './meta.js';
export {
  containerRequests, hostPortsConflict, hostPortsOf, nodeMatchesPod, podRequest, type PodRequestOptions, requestedResources, resourceAmount, toleratesTaint, untoleratedTaint,
  type HostPort,
} from './scheduling.js';
