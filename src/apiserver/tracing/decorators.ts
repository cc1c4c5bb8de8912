/**
 * The request handler and the store in spans. A request's span ends when its response is
 * finished or its connection closed (a watch's span lasts as long as the watch); its status code
 * is recorded then. Storage spans (`storage.get`, ... with the key's resource) are children of
 * the request span they run under; storage calls outside a request are not traced.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { incomingTraceParent, type Tracer } from '../../api/tracing/index.js';
import type { ManagedStore, Store } from '../storage/index.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export function tracedHandler(handler: Handler, tracer: Tracer): Handler {
  return (req, res) => {
    const parent = incomingTraceParent(req.headers);
    const attributes = {
      'http.request.method': req.method, 'url.path': (req.url ?? '').split('?')[0], 'user_agent.original': req.headers['user-agent'],
    };
    void tracer.inSpan('KubernetesAPI', { kind: 'server', attributes, parent: parent ?? 'root' }, (span) => new Promise<void>((resolve) => {
      const done = (): void => {
        span.setAttributes({ 'http.response.status_code': res.statusCode });
        resolve();
      };
      res.once('finish', done);
      res.once('close', done);
      handler(req, res);
    }));
  };
}

/** The resource segment of a key or prefix (`/pods/default/web` -> pods). */
function resourceOf(key: string): string {
  return key.split('/')[1] ?? '';
}

export function tracedStore(store: ManagedStore, tracer: Tracer): ManagedStore {
  // Only under a request's span: the control loops' own storage calls begin no traces.
  const span = <T>(operation: string, key: string, call: () => Promise<T>): Promise<T> =>
    !('traceparent' in tracer.outgoingHeaders()) ? call() : tracer.inSpan(`storage.${operation}`, { kind: 'client', attributes: { 'db.operation.name': operation, 'storage.resource': resourceOf(key) } }, call);
  const wrapped: Store = {
    create: (key, object, options) => span('create', key, () => store.create(key, object, options)),
    get: (key, options) => span('get', key, () => store.get(key, options)),
    list: (prefix, options) => span('list', prefix, () => store.list(prefix, options)),
    update: (key, options, mutate) => span('update', key, () => store.update(key, options, mutate)),
    delete: (key, options) => span('delete', key, () => store.delete(key, options)),
    watch: (key, options) => span('watch', key, () => store.watch(key, options)),
  };
  return {
    ...wrapped,
    currentRevision: () => store.currentRevision(),
    compact: (revision) => store.compact(revision),
    close: () => store.close(),
  };
}
