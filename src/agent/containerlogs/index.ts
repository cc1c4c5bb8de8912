/**
 * containerlogs: the container log manager of nodeagent (upstream: pkg/kubelet/logs). Every
 * containerLogMonitorInterval it rotates the logs of the running containers past
 * containerLogMaxSize: the log is renamed `<log>.<YYYYMMDD-HHMMSS>`, the runtime reopens it (CRI
 * ReopenContainerLog), the rotated files before the newest are gzipped, and the oldest are
 * removed so that a container keeps at most containerLogMaxFiles files.
 *
 * Owns: the layout of rotated files (`containerLogFiles` lists a container's log oldest first,
 * for the servers' log reader), rotation, and removing a container's log files
 * (`removeContainerLogFiles`, for the container GC). Must not: touch containers without the
 * agent's pod UID label, remove or stop containers, or let a failure stop the agent (it is
 * logged and tried again at the next check).
 *
 * Error codes: CONTAINERLOGS_ROTATE_FAILED (one log could not be rotated; logged),
 * CONTAINERLOGS_INVALID_OPTIONS (createContainerLogManager's options out of range).
 */
export {
  createContainerLogManager, CONTAINERLOGS_INVALID_OPTIONS,
  type ContainerLogManager, type ContainerLogManagerOptions, type LogCheckResult, type LogRuntime,
} from './manager.js';
export { CONTAINERLOGS_ROTATE_FAILED } from './rotate.js';
export { COMPRESS_SUFFIX, containerLogFiles, removeContainerLogFiles, rotatedName } from './files.js';
