/**
 * Read, change, write with the object's resourceVersion as precondition, again on a conflict:
 * how the loops write objects others write too (a node's status, which its agent heartbeats; a
 * pod's status, which its agent reports).
 */
import { isConflict, isNotFound } from '../../../api/errors.js';
import { cloneJson } from '../../patch/index.js';
import type { ResourceClient, WireObject } from './types.js';

export interface UpdateOptions {
  /** Write only the status. */
  readonly subresource?: 'status';
  /** The object as last seen (e.g. from an informer): the first attempt starts from it instead of a get. */
  readonly current?: WireObject;
  /** Attempts before giving up on conflicts (default 5). */
  readonly attempts?: number;
}

/**
 * Applies `change` to a copy of the object and writes it. `change` returns false when there is
 * nothing to write. Resolves to the written object, the unchanged one, or undefined when the
 * object is gone. Throws what the client throws, and the last conflict after the attempts.
 */
export async function updateObject(
  client: ResourceClient, namespace: string, name: string, change: (object: WireObject) => boolean, options: UpdateOptions = {},
): Promise<WireObject | undefined> {
  let current = options.current;
  const attempts = options.attempts ?? 5;
  for (let attempt = 1; ; attempt++) {
    try {
      current ??= await client.get(namespace, name);
      const next = cloneJson(current);
      if (!change(next)) return current;
      return await client.update(namespace, name, next, options.subresource);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      if (!isConflict(err) || attempt >= attempts) throw err;
      current = undefined;
    }
  }
}
