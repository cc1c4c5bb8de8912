/**
 * What a selector watch sends, and the store index that narrows what it receives.
 *
 * Every watcher of a change receives the same stored object (the store shares it): its wire form
 * and its field values are computed once per (registry, object) and shared, not once per watcher.
 * A watch with an exact requirement (`spec.nodeName=n`, `app=web`) names a store index on that
 * field or label, so that the store passes it only the changes of objects that had or have that
 * value; the selector filter below then decides as it would on every change.
 */
import type { ListRequest, ResourceRegistry, WireObject } from '../registry/index.js';
import { fieldsOf, labelsOf, metaOf, str } from '../registry/index.js';
import type { StoredObject, WatchIndex } from '../storage/index.js';

const presented = new WeakMap<ResourceRegistry, WeakMap<StoredObject, WireObject>>();
const fieldValues = new WeakMap<WireObject, Record<string, string>>();

/** The wire form of a stored object, made once per registry for every watcher (read-only). */
export function presentShared(registry: ResourceRegistry, stored: StoredObject): WireObject {
  let byObject = presented.get(registry);
  if (byObject === undefined) {
    byObject = new WeakMap();
    presented.set(registry, byObject);
  }
  let wire = byObject.get(stored);
  if (wire === undefined) {
    wire = registry.present(stored);
    byObject.set(stored, wire);
  }
  return wire;
}

/** The field-label values of a wire object, computed once per object. */
export function fieldsShared(registry: ResourceRegistry, object: WireObject): Record<string, string> {
  let fields = fieldValues.get(object);
  if (fields === undefined) {
    fields = fieldsOf(registry, object);
    fieldValues.set(object, fields);
  }
  return fields;
}

/** Whether a wire object matches the request's selectors, with the shared field values. */
export function sharedMatcher(registry: ResourceRegistry, request: ListRequest): (object: WireObject) => boolean {
  const { labelSelector: labels, fieldSelector: fields } = request;
  if (labels.empty && fields.empty) return () => true;
  return (object) => labels.matches(labelsOf(object)) && (fields.empty || fields.matches(fieldsShared(registry, object)));
}

/**
 * The store index for a watch's selectors: an exact field requirement (spec.nodeName first,
 * metadata.namespace never: the key prefix narrows it), else an exact label requirement.
 */
export function watchIndexFor(registry: ResourceRegistry, request: ListRequest): WatchIndex | undefined {
  const resource = `${registry.def.group}/${registry.def.plural}`;
  const exactFields = request.fieldSelector.requirements.filter((r) => r.operator === '=' && r.field !== 'metadata.namespace');
  const field = exactFields.find((r) => r.field === 'spec.nodeName') ?? exactFields[0];
  if (field !== undefined) {
    const name = field.field;
    return {
      name: `${resource} field ${name}`,
      value: field.value,
      of: (stored) => fieldsShared(registry, presentShared(registry, stored))[name] ?? '',
    };
  }
  const label = request.labelSelector.requirements.find((r) => r.operator === '=' || (r.operator === 'in' && r.values.length === 1));
  if (label === undefined) return undefined;
  const key = label.key;
  return {
    name: `${resource} label ${key}`,
    value: label.values[0] ?? '',
    of: (stored) => labelsOf(presentShared(registry, stored))[key] ?? '',
  };
}

function keyOf(object: WireObject): string {
  const meta = metaOf(object);
  return `${str(meta.namespace)}/${str(meta.name)}`;
}

/**
 * The frames of a selector watch: an object that starts matching is ADDED, one that stops
 * matching is DELETED, changes of a matching one are MODIFIED; the rest is not sent. Whether a
 * modified object matched before is read from its previous state when the change carries it (as
 * upstream's watch cache does), else from the objects this watch has seen match (seeded by its
 * initial list); with neither, an object that does not match now is sent as DELETED, which a
 * client that never had it ignores.
 */
export class SelectionFilter {
  private readonly matched = new Set<string>();
  private readonly matches: (object: WireObject) => boolean;

  constructor(matches: (object: WireObject) => boolean) {
    this.matches = matches;
  }

  /** An object that matched at the start revision. */
  seed(object: WireObject): void {
    this.matched.add(keyOf(object));
  }

  /** The frame type to send for a change, or undefined for none; `previous`: the object before a MODIFIED change. */
  next(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: WireObject, previous?: () => WireObject): 'ADDED' | 'MODIFIED' | 'DELETED' | undefined {
    const key = keyOf(object);
    const seen = this.matched.has(key);
    const now = type !== 'DELETED' && this.matches(object);
    if (now) this.matched.add(key);
    else this.matched.delete(key);
    // A deleted object's last state is its state before the deletion.
    const was = type === 'DELETED' ? seen || this.matches(object)
      : type === 'ADDED' ? seen
        : previous !== undefined ? this.matches(previous()) : seen || !now;
    if (type === 'DELETED') return was ? 'DELETED' : undefined;
    if (now) return was ? 'MODIFIED' : 'ADDED';
    return was ? 'DELETED' : undefined;
  }
}
