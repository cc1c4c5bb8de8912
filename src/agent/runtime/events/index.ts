/**
 * containerd's task events for the evented PLEG: containerd 1.6 lacks the CRI's
 * GetContainerEvents, but publishes its tasks' lifecycle on its own event service over the same
 * socket. One subscription at a time per caller; a failed one is not retried here (the PLEG
 * owns the back-off and the fallback to relisting).
 *
 * Owns: the gRPC channel to containerd's event service, the subscription filters, decoding the
 * task events, knowing when a subscription is in place (a marker event published and read back).
 * Must not: map events to pods (the PLEG does) or act on them.
 */
export {
  CRI_EVENTS_STREAM_FAILED,
  connectContainerdEvents,
  subscriptionFilters,
  taskEventOf,
  type ContainerdEvents,
  type ContainerdEventsOptions,
  type TaskEvent,
  type TaskEventHandlers,
  type TaskEventSource,
  type TaskEventSubscription,
  type TaskTopic,
} from './containerd.js';
