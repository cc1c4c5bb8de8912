/**
 * A Store that times every call of the store it wraps (etcd_request_duration_seconds by
 * operation and type: the resource segment of the key, `/pods/default/web` -> pods), failures
 * included. The lifecycle calls pass through untimed.
 */
import type { ManagedStore, Store } from '../storage/index.js';

type Report = (operation: string, type: string, seconds: number) => void;

/** The resource segment of a key or prefix. */
function typeOf(key: string): string {
  return key.split('/')[1] ?? '';
}

export function instrumentStore(store: ManagedStore, report: Report, clock: () => number = () => Number(process.hrtime.bigint()) / 1e9): ManagedStore {
  const timed = async <T>(operation: string, key: string, call: () => Promise<T>): Promise<T> => {
    const started = clock();
    try {
      return await call();
    } finally {
      report(operation, typeOf(key), clock() - started);
    }
  };
  const wrapped: Store = {
    create: (key, object, options) => timed('create', key, () => store.create(key, object, options)),
    get: (key, options) => timed('get', key, () => store.get(key, options)),
    list: (prefix, options) => timed('list', prefix, () => store.list(prefix, options)),
    update: (key, options, mutate) => timed('update', key, () => store.update(key, options, mutate)),
    delete: (key, options) => timed('delete', key, () => store.delete(key, options)),
    watch: (key, options) => timed('watch', key, () => store.watch(key, options)),
  };
  return {
    ...wrapped,
    currentRevision: () => store.currentRevision(),
    compact: (revision) => store.compact(revision),
    close: () => store.close(),
  };
}
