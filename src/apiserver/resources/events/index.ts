/**
 * resources/events: the Event resource (upstream's events.k8s.io/v1 as events.orch.io/v1, the
 * stored form) and its core v1 view (`/api/v1/.../events`, what `kubectl get events` reads),
 * both over the same stored objects at `/events/<namespace>/<name>` and both writable. Every write of an event
 * (re)sets its time to live to --event-ttl.
 *
 * Must not: know HTTP or the store beyond the definition it hands to the registry.
 */
import { age, metaOf, str, type ResourceDefinition, type TableColumn, type WireObject } from '../../registry/index.js';
import { coreEventConversion, coreToStored } from './convert.js';
import { coreEventSchema, eventsV1Schema } from './schema.js';
import { validateCoreEvent, validateV1Event, validateV1EventUpdate } from './validation.js';

export { coreToStored, storedToCore } from './convert.js';

export interface EventOptions {
  /** Time to live of every event write, in seconds (--event-ttl). */
  readonly ttlSeconds: number;
}

type Reader = (object: WireObject) => Record<string, unknown>;

function rec(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

/** Table columns of upstream's event printer, over the stored form that `read` gives. */
function columns(read: Reader): TableColumn[] {
  const lastSeen = (e: Record<string, unknown>): unknown => rec(e.series).lastObservedTime ?? e.deprecatedLastTimestamp ?? e.eventTime ?? metaOf(e).creationTimestamp;
  const source = (e: Record<string, unknown>): string => {
    const s = rec(e.deprecatedSource);
    const text = [str(s.component), str(s.host)].filter((x) => x !== '').join(', ');
    return text !== '' ? text : str(e.reportingController);
  };
  const regarding = (e: Record<string, unknown>): Record<string, unknown> => rec(e.regarding);
  return [
    { name: 'Last Seen', type: 'string', description: 'Time since the event was last seen.', priority: 0, cell: (o, now) => age(lastSeen(read(o)), now) },
    { name: 'Type', type: 'string', description: 'Type of the event (Normal, Warning).', priority: 0, cell: (o) => str(read(o).type) },
    { name: 'Reason', type: 'string', description: 'Why the action was taken.', priority: 0, cell: (o) => str(read(o).reason) },
    {
      name: 'Object', type: 'string', description: 'The object this event is about.', priority: 0,
      cell: (o) => `${str(regarding(read(o)).kind).toLowerCase()}/${str(regarding(read(o)).name)}`,
    },
    { name: 'Subobject', type: 'string', description: 'The part of the object (fieldPath).', priority: 1, cell: (o) => str(regarding(read(o)).fieldPath) },
    { name: 'Source', type: 'string', description: 'The component that reported the event.', priority: 1, cell: (o) => source(read(o)) },
    { name: 'Message', type: 'string', description: 'A human-readable description.', priority: 0, cell: (o) => str(read(o).note) },
    {
      name: 'First Seen', type: 'string', description: 'Time since the event was first seen.', priority: 1,
      cell: (o, now) => age(read(o).deprecatedFirstTimestamp ?? read(o).eventTime ?? metaOf(read(o)).creationTimestamp, now),
    },
    {
      name: 'Count', type: 'integer', description: 'Number of occurrences.', priority: 1,
      cell: (o) => {
        const e = read(o);
        const n = rec(e.series).count ?? e.deprecatedCount;
        return typeof n === 'number' ? n : 1;
      },
    },
    { name: 'Name', type: 'string', format: 'name', description: 'Name of the event.', priority: 1, cell: (o) => str(metaOf(o).name) },
  ];
}

function referenceFields(prefix: string, ref: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath']) out[`${prefix}.${f}`] = str(ref[f]);
  return out;
}

const REFERENCE_FIELDS = ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'];

const common = {
  version: 'v1',
  kind: 'Event',
  listKind: 'EventList',
  plural: 'events',
  singular: 'event',
  categories: [],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: 'events',
  statusSubresource: false,
  nameColumn: false,
  nameRule: 'subdomain',
  allowCreateOnUpdate: false,
  returnDeletedObject: false,
} as const;

/** The events.orch.io/v1 definition and the core v1 view, in that order. */
export function eventDefinitions(options: EventOptions): [ResourceDefinition, ResourceDefinition] {
  const ttlSeconds = (): number => options.ttlSeconds;
  const v1: ResourceDefinition = {
    ...common,
    group: 'events.orch.io',
    // Only the core view has the short name `ev` (as upstream), so `kubectl get ev` is not ambiguous.
    shortNames: [],
    schema: eventsV1Schema,
    fieldLabels: [...REFERENCE_FIELDS.map((f) => `regarding.${f}`), 'reason', 'type', 'action', 'reportingController', 'reportingInstance'],
    fields: (e) => ({
      ...referenceFields('regarding', rec(e.regarding)),
      reason: str(e.reason), type: str(e.type), action: str(e.action),
      reportingController: str(e.reportingController), reportingInstance: str(e.reportingInstance),
    }),
    columns: columns((o) => o),
    strategy: {
      validateCreate: (e, errors) => {
        validateV1Event(e, errors);
      },
      validateUpdate: (e, old, errors) => {
        validateV1EventUpdate(e, old, errors);
      },
    },
    ttlSeconds,
  };
  const core: ResourceDefinition = {
    ...common,
    group: '',
    shortNames: ['ev'],
    schema: coreEventSchema,
    conversion: coreEventConversion,
    fieldLabels: [...REFERENCE_FIELDS.map((f) => `involvedObject.${f}`), 'reason', 'type', 'source', 'reportingComponent'],
    fields: (e) => ({
      ...referenceFields('involvedObject', rec(e.involvedObject)),
      reason: str(e.reason), type: str(e.type), source: str(rec(e.source).component), reportingComponent: str(e.reportingComponent),
    }),
    columns: columns((o) => coreToStored(o)),
    strategy: {
      validateCreate: (e, errors) => {
        validateCoreEvent(e, errors);
      },
      validateUpdate: (e, _old, errors) => {
        validateCoreEvent(e, errors);
      },
    },
    ttlSeconds,
  };
  return [v1, core];
}
