/**
 * One stored event, two views. The stored form is events.orch.io/v1; the core v1 view renames
 * fields as upstream's conversion does:
 *
 * | events.orch.io/v1          | core v1            |
 * |----------------------------|--------------------|
 * | note                       | message            |
 * | regarding                  | involvedObject     |
 * | related                    | related            |
 * | reportingController        | reportingComponent |
 * | reportingInstance          | reportingInstance  |
 * | deprecatedSource           | source             |
 * | deprecatedFirstTimestamp   | firstTimestamp     |
 * | deprecatedLastTimestamp    | lastTimestamp      |
 * | deprecatedCount            | count              |
 * | series, eventTime, action, reason, type (same names)  |
 */
import type { StoredObject } from '../../storage/index.js';
import type { ViewConversion, WireObject } from '../../registry/index.js';

/** [events.orch.io/v1 name, core v1 name] */
const RENAMES: readonly (readonly [string, string])[] = [
  ['note', 'message'],
  ['regarding', 'involvedObject'],
  ['related', 'related'],
  ['reportingController', 'reportingComponent'],
  ['reportingInstance', 'reportingInstance'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
  ['series', 'series'],
  ['eventTime', 'eventTime'],
  ['action', 'action'],
  ['reason', 'reason'],
  ['type', 'type'],
];

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.values(value).every((v) => v === undefined || v === '');
}

function rename(from: Record<string, unknown>, fromIndex: 0 | 1, kind: string, apiVersion: string): Record<string, unknown> {
  const out: Record<string, unknown> = { kind, apiVersion, metadata: from.metadata };
  for (const pair of RENAMES) {
    const value = from[pair[fromIndex]];
    // Empty values carry no information in either view (Go's omitempty on the wire).
    if (value === undefined || value === '' || (pair[0] === 'deprecatedCount' && value === 0) || isEmptyObject(value)) continue;
    out[pair[fromIndex === 0 ? 1 : 0]] = value;
  }
  return out;
}

/** The stored (events.orch.io/v1) form of a core v1 event. */
export function coreToStored(core: WireObject): StoredObject {
  return rename(core, 1, 'Event', 'events.orch.io/v1');
}

/** The core v1 view of a stored event. */
export function storedToCore(stored: StoredObject): WireObject {
  return rename(stored, 0, 'Event', 'v1');
}

export const coreEventConversion: ViewConversion = { toStorage: coreToStored, fromStorage: storedToCore };

