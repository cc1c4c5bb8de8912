/**
 * shutdown: graceful node shutdown (upstream: the kubelet's nodeshutdown manager). With
 * shutdownGracePeriod (and shutdownGracePeriodCriticalPods) or shutdownGracePeriodByPodPriority,
 * the agent holds a delay inhibitor lock from systemd-logind over the system D-Bus; on
 * PrepareForShutdown it turns the node NotReady, refuses new pods and ends the pods in priority
 * order within their shares of the period (critical pods last), each Failed with reason
 * Terminated, then lets the shutdown go on.
 *
 * Owns: the logind client, the lock, the order and timing of the kills. Must not: kill
 * containers itself (the pod workers' kill path does), write statuses (podsync and the status
 * module do) or the node status (nodestatus reads `problem()`).
 */
export {
  connectLogind, DEFAULT_LOGIND_CONF_DIR, DEFAULT_SYSTEM_BUS_ADDRESS, LOGIND_DROP_IN, NODE_SHUTDOWN_LOGIND_CALL_FAILED,
  NODE_SHUTDOWN_LOGIND_UNAVAILABLE, type ConnectLogindOptions, type InhibitLock, type Logind,
} from './logind.js';
export {
  createShutdownManager, NODE_SHUTDOWN_DISRUPTION_REASON, NODE_SHUTDOWN_EVENT_REASON, NODE_SHUTDOWN_MESSAGE, NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE,
  NODE_SHUTDOWN_NOT_ADMITTED_REASON, NODE_SHUTDOWN_REASON, NODE_SHUTTING_DOWN, RECONNECT_MS, type ShutdownManager, type ShutdownManagerOptions,
} from './manager.js';
export {
  groupByPriority, periodRequested, shutdownPeriods, SYSTEM_CRITICAL_PRIORITY, type PriorityPeriod, type ShutdownGroup, type ShutdownPeriodsConfig,
} from './periods.js';
