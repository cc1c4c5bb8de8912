/**
 * Server-side printing: the meta.k8s.io Table kubectl asks for (`Accept: application/json;as=Table;
 * v=v1;g=meta.k8s.io`), with each resource's columns, and PartialObjectMetadata(List). The group
 * stays meta.k8s.io: it is what kubectl asks for and decodes.
 */
import { metaOf, str } from './meta.js';
import type { ResourceDefinition, TableColumn, WireObject } from './resource.js';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface ListMetaFields {
  readonly resourceVersion?: string;
  readonly continue?: string;
  readonly remainingItemCount?: number;
}

/** Go's HumanDuration as kubectl shows ages: 5s, 3m20s, 5h, 3d4h, 2y... */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  const withRest = (big: number, unit: string, small: number, smallUnit: string): string => (small === 0 ? `${big}${unit}` : `${big}${unit}${small}${smallUnit}`);
  if (minutes < 10) return withRest(minutes, 'm', seconds % 60, 's');
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return withRest(hours, 'h', minutes % 60, 'm');
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return withRest(days, 'd', hours % 24, 'h');
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) return withRest(years, 'y', days % 365, 'd');
  return `${years}y`;
}

/** The age of a timestamp, or `<unknown>` when there is none. */
export function age(timestamp: unknown, now: Date): string {
  if (typeof timestamp !== 'string' || timestamp === '') return '<unknown>';
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now.getTime() - t);
}

const NAME_COLUMN: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace.',
  priority: 0,
  cell: (o) => str(metaOf(o).name),
};

/** An AGE column on metadata.creationTimestamp, for definitions to reuse. */
export const AGE_COLUMN: TableColumn = {
  name: 'Age',
  type: 'string',
  description: 'Time since the object was created.',
  priority: 0,
  cell: (o, now) => age(metaOf(o).creationTimestamp, now),
};

export function partialObject(object: WireObject, version: string): WireObject {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: object.metadata };
}

function columnsOf(def: ResourceDefinition): readonly TableColumn[] {
  return def.nameColumn ? [NAME_COLUMN, ...def.columns] : def.columns;
}

export function toTable(def: ResourceDefinition, objects: readonly WireObject[], list: ListMetaFields, options: { version: string; include: IncludeObject; now: Date; headers: boolean }): WireObject {
  const columns = columnsOf(def);
  const rows = objects.map((object) => {
    const cells = columns.map((c) => c.cell(object, options.now));
    if (options.include === 'None') return { cells };
    return { cells, object: options.include === 'Object' ? object : partialObject(object, options.version) };
  });
  const table: WireObject = { kind: 'Table', apiVersion: `meta.k8s.io/${options.version}`, metadata: { ...list } };
  if (options.headers) {
    table.columnDefinitions = columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description, priority: c.priority }));
  }
  table.rows = rows;
  return table;
}

export function toPartialList(objects: readonly WireObject[], list: ListMetaFields, version: string): WireObject {
  return { kind: 'PartialObjectMetadataList', apiVersion: `meta.k8s.io/${version}`, metadata: { ...list }, items: objects.map((o) => partialObject(o, version)) };
}
