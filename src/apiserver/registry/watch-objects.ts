/**
 * The in-process watch of one resource view (what the server's own control loops use, next to
 * listObjects): the store's changes under the view's prefix after a resourceVersion, each
 * object in the view's wire form. Errors (history compacted, store closed) arrive as one ERROR
 * event, after which the watch has ended; the caller lists again. Objects are shared with the
 * other watchers of the change: read-only.
 */
import type { OrchError } from '../../api/errors.js';
import type { Watch } from '../storage/index.js';
import type { ResourceRegistry } from './registry.js';
import type { WireObject } from './resource.js';

export type ObjectEvent =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: WireObject }
  | { readonly type: 'ERROR'; readonly error: OrchError };

export interface ObjectWatchOptions {
  /** Changes strictly after this revision (a list's resourceVersion). */
  readonly resourceVersion: string;
  readonly signal?: AbortSignal;
  /** In revision order, never concurrently. */
  readonly onEvent: (event: ObjectEvent) => void;
}

/** Watches the objects of `namespace` ('' for all, and for cluster-scoped resources). */
export function watchObjects(registry: ResourceRegistry, namespace: string, options: ObjectWatchOptions): Promise<Watch> {
  return registry.store.watch(registry.prefix(namespace), {
    resourceVersion: options.resourceVersion,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    onEvent: (event) => {
      if (event.type === 'BOOKMARK') return;
      if (event.type === 'ERROR') options.onEvent(event);
      else options.onEvent({ type: event.type, object: registry.present(event.object) });
    },
  });
}
