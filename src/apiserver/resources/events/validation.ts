/**
 * Validation of events, per view (field errors use the names of the view the client wrote).
 *
 * New events (every events.orch.io/v1 create; core v1 creates that set eventTime):
 * - reportingController (core: reportingComponent) required, and a qualified name: an optional
 *   DNS subdomain prefix and '/', then a name of letters, digits, '-', '_', '.' (so
 *   `orch.io/nodeagent` and `nodeagent` are valid; `a/b/c` and `-x` are not);
 * - reportingInstance, action, reason: required, at most 128 characters;
 * - note (core: message): at most 1024 bytes;
 * - regarding (core: involvedObject) namespace: equal to the event's, or empty for cluster-scoped
 *   objects, whose events live in `default` or `orch-system`.
 * events.orch.io/v1 only: eventTime required; type `Normal` or `Warning`; the deprecated* fields
 * unset; series.count at least 2 and series.lastObservedTime set. Updates through
 * events.orch.io/v1 may change only series and metadata.
 * Old-style core v1 events (no eventTime): the involved object's namespace must match.
 */
import { validateQualifiedName } from '../../../api/labels.js';
import { jsonEqual } from '../../patch/index.js';
import { metaOf, str, type WireObject } from '../../registry/index.js';
import type { FieldErrors } from '../../status/index.js';

interface Names {
  readonly note: string;
  readonly regarding: string;
  readonly reportingController: string;
  readonly deprecated: readonly string[];
}

export const V1_NAMES: Names = {
  note: 'note',
  regarding: 'regarding',
  reportingController: 'reportingController',
  deprecated: ['deprecatedSource', 'deprecatedFirstTimestamp', 'deprecatedLastTimestamp', 'deprecatedCount'],
};

export const CORE_NAMES: Names = {
  note: 'message',
  regarding: 'involvedObject',
  reportingController: 'reportingComponent',
  deprecated: ['source', 'firstTimestamp', 'lastTimestamp', 'count'],
};

const LIMIT = 128;
const NOTE_LIMIT = 1024;
const TYPES = ['Normal', 'Warning'];
const CLUSTER_EVENT_NAMESPACES = ['default', 'orch-system'];

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

function requiredShort(event: WireObject, field: string, errors: FieldErrors): void {
  const value = str(event[field]);
  if (value === '') errors.required(field);
  else if (value.length > LIMIT) errors.tooLong(field, LIMIT);
}

function validateNewStyle(event: WireObject, names: Names, errors: FieldErrors): void {
  const controller = str(event[names.reportingController]);
  if (controller === '') errors.required(names.reportingController);
  else errors.invalidEach(names.reportingController, controller, validateQualifiedName(controller));
  requiredShort(event, 'reportingInstance', errors);
  requiredShort(event, 'action', errors);
  requiredShort(event, 'reason', errors);
  const note = str(event[names.note]);
  if (Buffer.byteLength(note, 'utf8') > NOTE_LIMIT) errors.tooLong(names.note, NOTE_LIMIT, 'bytes');
  const regardingNs = str(record(event[names.regarding]).namespace);
  const ns = str(metaOf(event).namespace);
  if (regardingNs === '' ? !CLUSTER_EVENT_NAMESPACES.includes(ns) : regardingNs !== ns) {
    errors.invalid(`${names.regarding}.namespace`, regardingNs, regardingNs === ''
      ? `does not match event.namespace: events about cluster-scoped objects belong in ${CLUSTER_EVENT_NAMESPACES.join(' or ')}`
      : 'does not match event.namespace');
  }
}

function validateSeries(event: WireObject, errors: FieldErrors): void {
  if (event.series === undefined) return;
  const series = record(event.series);
  const count = typeof series.count === 'number' ? series.count : 0;
  if (count < 2) errors.invalid('series.count', count, 'should be at least 2');
  if (str(series.lastObservedTime) === '') errors.required('series.lastObservedTime');
}

/** events.orch.io/v1 create (and the base of its update). */
export function validateV1Event(event: WireObject, errors: FieldErrors): void {
  if (str(event.eventTime) === '') errors.required('eventTime');
  const type = str(event.type);
  if (!TYPES.includes(type)) {
    if (type === '') errors.required('type');
    else errors.notSupported('type', type, TYPES);
  }
  for (const field of V1_NAMES.deprecated) {
    const value = event[field];
    if (value !== undefined && value !== 0 && value !== '' && !(typeof value === 'object' && Object.values(record(value)).every((v) => v === ''))) {
      errors.invalid(field, value, 'needs to be unset');
    }
  }
  validateSeries(event, errors);
  validateNewStyle(event, V1_NAMES, errors);
}

const V1_MUTABLE = new Set(['kind', 'apiVersion', 'metadata', 'series']);

/** events.orch.io/v1 update: valid as a new event, and only series and metadata changed. */
export function validateV1EventUpdate(event: WireObject, old: WireObject, errors: FieldErrors): void {
  validateV1Event(event, errors);
  const fields = new Set([...Object.keys(event), ...Object.keys(old)]);
  for (const field of [...fields].sort()) {
    if (V1_MUTABLE.has(field)) continue;
    if (!jsonEqual(event[field], old[field])) errors.invalid(field, event[field] ?? null, 'field is immutable');
  }
}

/** core v1 create and update: new-style rules when eventTime is set, the old rules otherwise. */
export function validateCoreEvent(event: WireObject, errors: FieldErrors): void {
  if (str(event.eventTime) !== '') {
    validateNewStyle(event, CORE_NAMES, errors);
    return;
  }
  const involvedNs = str(record(event.involvedObject).namespace);
  const ns = str(metaOf(event).namespace);
  if (involvedNs === '' ? ns !== '' && ns !== 'default' : involvedNs !== ns) {
    errors.invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace');
  }
}
