/**
 * events: the agent's event recorder, writing events.orch.io/v1 Events as upstream's kubelet
 * does with the events API (client-go tools/events): repeats of an event within 6 minutes fold
 * into a series (created once, patched at the second occurrence, then re-sent by a 30-minute
 * heartbeat and when the series ends), writes are paced by eventRecordQPS/eventBurst, queued
 * (at most 1000, oldest dropped) and retried with a short back-off. Every event is also logged;
 * in standalone mode (no API server) logging is all it does.
 *
 * Owns: the Event objects the agent writes (names, namespaces, series) and how they reach the
 * server. Must not: decide which events happen (callers do), block or throw into its callers,
 * or use the API request budget (event writes are `exempt`, they have their own).
 *
 * Error codes: EVENTS_INVALID_OPTIONS (createEventRecorder's options out of range).
 */
export {
  createEventRecorder, DEFAULT_REPORTING_CONTROLLER, DEFAULT_STOP_TIMEOUT_MS, EVENTS_INVALID_OPTIONS,
  type EventRecorder, type EventRecorderOptions,
} from './recorder.js';
export {
  nodeReference, podReference, eventsPath, CLUSTER_EVENT_NAMESPACE, EVENTS_API_VERSION, EVENT_TYPES,
  type ContainerList, type EventObject, type EventReference, type EventSeries, type EventType,
} from './event-object.js';
export { FINISH_MS, REFRESH_MS } from './series-cache.js';
export { eventAction, recordPodEvent, type PodEventInput } from './pod-events.js';
export { DEFAULT_MAX_QUEUED, DEFAULT_RETRY, type RetryPolicy } from './writer.js';
