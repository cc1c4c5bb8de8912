/**
 * The runtime manager of nodeagent (upstream: pkg/kubelet/kuberuntime): makes the container
 * runtime match one pod's spec through the CRI (sandbox, image pulls by policy, init
 * containers in order, containers, restarts with back-off, spec changes), kills and removes
 * pods, and reads back what the runtime holds, by the agent's labels.
 *
 * Owns: the sandbox and container configurations (DNS, ports, env and downward API,
 * resources, OOM score, security context basics, labels and annotations), the pull policy,
 * pull serialization, QPS and back-off, the restart back-off, the pod log directory layout
 * (`<podLogsRoot>/<ns>_<name>_<uid>/<container>/<restartCount>.log`).
 * Must not: touch runtime objects without POD_UID_LABEL, prepare volumes or cgroups (they are
 * injected: `volumes`, `cgroupParent`), compute the pod's API status (the status module does,
 * from getPodStatus and the sync errors), or retry on its own (the pod workers sync again,
 * after `requeueAfterMs` when a back-off holds).
 */
export { createRuntimeManager, runningPodOf } from './manager.js';
export type { ContainerMount, ContainerVolumes, ManagerImages, ManagerRuntime, RuntimeManagerOptions } from './options.js';
export type * from './types.js';
export * from './labels.js';
export { DEFAULT_CONTAINER_BACKOFF, DEFAULT_IMAGE_BACKOFF, type BackOffSettings } from './backoff.js';
export type { DnsSettings } from './dns.js';
export { KUBERUNTIME_ENV_INVALID, type NodeCapacity } from './env.js';
export { hashContainer } from './hash.js';
export { KUBERUNTIME_INVALID_IMAGE } from './image-reference.js';
export { KUBERUNTIME_KILL_FAILED, KUBERUNTIME_REMOVE_FAILED } from './kill.js';
export { KUBERUNTIME_RUN_AS_NON_ROOT } from './container-config.js';
export { podQosClass, type QosClass } from './resources.js';
export { DEFAULT_POD_LOGS_ROOT, KUBERUNTIME_SANDBOX_CONFIG_INVALID, podLogsDirectory } from './sandbox-config.js';
export { isRuntimeUnreachable } from './errors.js';
