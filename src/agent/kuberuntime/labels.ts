/**
 * The labels and annotations the agent puts on sandboxes and containers in the runtime. They
 * identify the pod and container after an agent restart (adoption) and tell the agent's own
 * objects from anything else in the runtime: objects without POD_UID_LABEL are never touched.
 */

/** On sandboxes and containers: the pod's UID, name and namespace. */
export const POD_UID_LABEL = 'io.orch.pod.uid';
export const POD_NAME_LABEL = 'io.orch.pod.name';
export const POD_NAMESPACE_LABEL = 'io.orch.pod.namespace';
/** On containers: the container's name in the pod spec ("POD" is never used for containers). */
export const CONTAINER_NAME_LABEL = 'io.orch.container.name';
/** On containers: "init" for init containers, "regular" otherwise. */
export const CONTAINER_TYPE_LABEL = 'io.orch.container.type';

/** On containers: the hash of the container spec the instance was created from. */
export const CONTAINER_HASH_ANNOTATION = 'io.orch.container.hash';
/** On containers: the hash of the spec without its resources (in-place resize, upstream's hashWithoutResources). */
export const CONTAINER_HASH_WITHOUT_RESOURCES_ANNOTATION = 'io.orch.container.hashWithoutResources';
/** On containers: the image as the pod spec named it (the runtime reports only a tag or ID). */
export const CONTAINER_IMAGE_ANNOTATION = 'io.orch.container.image';
/** On containers: the attempt number (restart count) of this instance. */
export const CONTAINER_RESTART_COUNT_ANNOTATION = 'io.orch.container.restartCount';
/** On containers: where the termination message is read from, and its policy. */
export const TERMINATION_MESSAGE_PATH_ANNOTATION = 'io.orch.container.terminationMessagePath';
export const TERMINATION_MESSAGE_POLICY_ANNOTATION = 'io.orch.container.terminationMessagePolicy';
/** On sandboxes and containers: the pod's termination grace period, for orphans. */
export const POD_TERMINATION_GRACE_PERIOD_ANNOTATION = 'io.orch.pod.terminationGracePeriod';
