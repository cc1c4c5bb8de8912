/**
 * cpumanager: exclusive CPUs for Guaranteed pods (upstream's CPU manager): policies none and
 * static with its options and gates, the checkpointed state file, topology hints, admission
 * errors (SMTAlignmentError, and UnexpectedAdmissionError when the CPUs are not there), and the
 * reconcile of running containers' CPU sets.
 *
 * It owns: `<rootDir>/cpu_manager_state` and the choice of CPUs. It must not: call the runtime
 * itself (the container manager hands it the running containers and the update call), write
 * cgroup files (the runtime applies the cpuset), or keep allocations of pods that are gone.
 */
export { takeByTopologyDistributed, takeByTopologyPacked } from './accumulator.js';
export { CM_CPU_MANAGER_CONFIG, activeContainers, createCPUManager, type CPUManager, type CPUManagerOptions, type RunningContainer } from './manager.js';
export { CM_CPU_POLICY_OPTION, parseStaticPolicyOptions, validateStaticPolicyOptions, type StaticPolicyOptions } from './options.js';
export { CM_CPU_STATE_INVALID, CPU_MANAGER_STATE_FILE, decodeCPUCheckpoint, encodeCPUCheckpoint, openCPUState, type Assignments, type CPUState } from './state.js';
export { StaticPolicy, guaranteedCPUs, podGuaranteedCPUs } from './static-policy.js';
