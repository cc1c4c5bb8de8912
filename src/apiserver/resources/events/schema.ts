/**
 * The two wire schemas of events: events.orch.io/v1 Event (the stored form, upstream's
 * events.k8s.io/v1 renamed) and the older core v1 Event, with the field names each view uses.
 */
import { int32, microTime, object, objectMeta, objectReference, str, time, type ObjectSchema } from '../../schema/index.js';

const eventSource = object(
  { component: str('Component from which the event is generated.'), host: str('Node name on which the event is generated.') },
  { name: 'io.orch.api.core.v1.EventSource' },
);

function series(name: string): ObjectSchema {
  return object(
    {
      count: int32('Number of occurrences in this series up to the last heartbeat time.'),
      lastObservedTime: microTime('Time when the last event of the series was seen before the last heartbeat.'),
    },
    { name, required: ['count', 'lastObservedTime'] },
  );
}

export const eventsV1Schema: ObjectSchema = object(
  {
    kind: str('Kind of the object: Event.'),
    apiVersion: str('Versioned schema of the object: events.orch.io/v1.'),
    metadata: objectMeta,
    eventTime: microTime('Time when this Event was first observed. Required.'),
    series: series('io.orch.api.events.v1.EventSeries'),
    reportingController: str('Name of the controller that emitted this Event, e.g. `orch.io/nodeagent`. Required for new events.'),
    reportingInstance: str('ID of the controller instance, e.g. `nodeagent-xyzf`. Required for new events, at most 128 characters.'),
    action: str('What action was taken or failed regarding the regarding object. Required for new events, at most 128 characters.'),
    reason: str('Why the action was taken. Required for new events, at most 128 characters.'),
    regarding: objectReference,
    related: objectReference,
    note: str('Human-readable description of the status of this operation; at most 1 kB.'),
    type: str('Type of this event: Normal or Warning.'),
    deprecatedSource: eventSource,
    deprecatedFirstTimestamp: time('Deprecated field assuring backward compatibility with the core v1 Event type.'),
    deprecatedLastTimestamp: time('Deprecated field assuring backward compatibility with the core v1 Event type.'),
    deprecatedCount: int32('Deprecated field assuring backward compatibility with the core v1 Event type.'),
  },
  {
    name: 'io.orch.api.events.v1.Event',
    required: ['eventTime'],
    gvk: [{ group: 'events.orch.io', version: 'v1', kind: 'Event' }],
    description: 'Event is a report of an event somewhere in the cluster. Events are kept for a limited time (--event-ttl).',
  },
);

export const coreEventSchema: ObjectSchema = object(
  {
    kind: str('Kind of the object: Event.'),
    apiVersion: str('Versioned schema of the object: v1.'),
    metadata: objectMeta,
    involvedObject: objectReference,
    reason: str('Short, machine understandable string that gives the reason for the transition.'),
    message: str('Human-readable description of the status of this operation.'),
    source: eventSource,
    firstTimestamp: time('Time at which the event was first recorded.'),
    lastTimestamp: time('Time at which the most recent occurrence of this event was recorded.'),
    count: int32('Number of times this event has occurred.'),
    type: str('Type of this event (Normal, Warning).'),
    eventTime: microTime('Time when this Event was first observed.'),
    series: series('io.orch.api.core.v1.EventSeries'),
    action: str('What action was taken or failed regarding the involved object.'),
    related: objectReference,
    reportingComponent: str('Name of the controller that emitted this Event, e.g. `orch.io/nodeagent`.'),
    reportingInstance: str('ID of the controller instance, e.g. `nodeagent-xyzf`.'),
  },
  {
    name: 'io.orch.api.core.v1.Event',
    required: ['metadata', 'involvedObject'],
    gvk: [{ group: '', version: 'v1', kind: 'Event' }],
    description: 'Event is a report of an event somewhere in the cluster (the core v1 view of events.orch.io/v1 events).',
  },
);
