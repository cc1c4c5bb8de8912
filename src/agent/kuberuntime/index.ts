/**
 * The runtime manager of nodeagent (upstream: pkg/kubelet/kuberuntime): makes the container
 * runtime match one pod's spec through the CRI (sandbox, image pulls by policy, init
 * containers in order, containers, restarts with back-off, spec changes), kills and removes
 * pods, and reads back what the runtime holds, by the agent's labels.
 *
 * Owns: the sandbox and container configurations (DNS, ports, env and downward API,
 * resources, OOM score, security context with seccomp profiles, sysctls, labels and
 * annotations), the pull policy, pull serialization, QPS and back-off, the restart back-off,
 * lifecycle hooks (postStart, preStop), killing containers that failed a liveness or startup
 * probe, sidecars (restartable init containers, behind the SidecarContainers gate), the pod log
 * directory layout (`<podLogsRoot>/<ns>_<name>_<uid>/<container>/<restartCount>.log`), and the
 * sysctl and user namespace admission checks (`sysctlAdmission`, `createUserNamespaceAdmission`) the sync loop calls; each new container's cpuset
 * and swap limit as the resource managers decide them (injected: `containerCpuset`,
 * `memorySwap`), and the cpuset updates of running containers the CPU manager asks for.
 * Must not: touch runtime objects without POD_UID_LABEL, prepare volumes or cgroups (they are
 * injected: `volumes`, `cgroupParent`), compute the pod's API status (the status module does,
 * from getPodStatus and the sync errors), run probes (the prober does; `probeResults` says
 * which instances failed), or retry on its own (the pod workers sync again, after
 * `requeueAfterMs` when a back-off holds).
 */
export { createRuntimeManager, hasSysResourceCapability, runningPodOf } from './manager.js';
export { runningContainerRefs, updateContainerCpuset, type RunningContainerRef } from './container-refs.js';
export type { ContainerCpuset } from './container-config.js';
export type {
  ContainerDeviceOptions, ContainerDeviceProvider, ContainerMount, ContainerVolumes, ManagerImages, ManagerRuntime, RuntimeManagerOptions,
} from './options.js';
export type * from './types.js';
export * from './labels.js';
export { DEFAULT_CONTAINER_BACKOFF, DEFAULT_IMAGE_BACKOFF, type BackOffSettings } from './backoff.js';
export type { DnsSettings } from './dns.js';
export { KUBERUNTIME_ENV_INVALID, type NodeCapacity } from './env.js';
export { KUBERUNTIME_ENV_REFERENCE_NOT_FOUND, KUBERUNTIME_ENV_SOURCE_UNAVAILABLE, type EnvObjectSource } from './env-sources.js';
export { hashContainer } from './hash.js';
export { createPodStatusCache, type ObservedObject, type PodStatusCache, type PodStatusCacheOptions, type PodStatusObserver, type PodStatusReads } from './status-cache.js';
export { KUBERUNTIME_INVALID_IMAGE } from './image-reference.js';
export { KUBERUNTIME_KILL_FAILED, KUBERUNTIME_REMOVE_FAILED, MIN_GRACE_PERIOD_SECONDS, terminationGracePeriod } from './kill.js';
export { KUBERUNTIME_RUN_AS_NON_ROOT } from './container-config.js';
export { DEFAULT_POD_LOGS_ROOT, KUBERUNTIME_SANDBOX_CONFIG_INVALID, parsePodLogsDirectoryName, podLogsDirectory } from './sandbox-config.js';
export { isRuntimeUnreachable } from './errors.js';
export { DEFAULT_SECCOMP_PROFILE_ROOT, seccompProfile, type SeccompSettings } from './seccomp.js';
export { USER_NAMESPACES_UNSUPPORTED, createUserNamespaceAdmission, type UserNamespaceAdmissionOptions, type UserNamespaceAdmitResult } from './userns.js';
export { SAFE_SYSCTLS, sysctlAdmission, sysctlNamespace, type SysctlAdmitResult, type SysctlNamespace } from './sysctls.js';
export { isSidecar } from './init-actions.js';
export { runHandler, type HookDeps, type HookRun } from './lifecycle.js';
export { waitForRuntime, type WaitForRuntimeOptions } from './runtime-ready.js';
export { podCidrFollower, type PodCidrFollowerOptions } from './pod-cidr.js';
export { runtimeNetworkState, type RuntimeNetworkState, type RuntimeNetworkStateOptions } from './network-state.js';
