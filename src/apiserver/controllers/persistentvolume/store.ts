/**
 * The PV controller's view of volumes and claims (upstream keeps the same): the informer's
 * objects, replaced by the controller's own writes as soon as they succeed, and never by an
 * older version. Binding writes four objects in a row (volume, its status, claim, its status); the
 * next sync must see them all even before the watch delivers them, or it would undo them and
 * meet conflicts.
 */
import { resourceVersionOf, type WireObject } from '../../registry/index.js';

/** a is newer than b (resourceVersions are the store's revisions: integers; others are taken as newer). */
function newer(a: WireObject, b: WireObject): boolean {
  const [x, y] = [resourceVersionOf(a), resourceVersionOf(b)];
  if (!/^\d+$/.test(x) || !/^\d+$/.test(y)) return true;
  return BigInt(x) > BigInt(y);
}

export class VersionedStore {
  private readonly objects = new Map<string, WireObject>();
  private readonly keyOf: (object: WireObject) => string;

  constructor(keyOf: (object: WireObject) => string) {
    this.keyOf = keyOf;
  }

  /** Keeps `object` unless a newer version is held; true when kept. */
  update(object: WireObject): boolean {
    const key = this.keyOf(object);
    const held = this.objects.get(key);
    if (held !== undefined && !newer(object, held)) return false;
    this.objects.set(key, object);
    return true;
  }

  delete(key: string): void {
    this.objects.delete(key);
  }

  get(key: string): WireObject | undefined {
    return this.objects.get(key);
  }

  list(): WireObject[] {
    return [...this.objects.values()];
  }
}
