/**
 * Namespace lifecycle: creates the built-in namespaces at start, refuses new content in a
 * missing (404) or terminating (403) namespace, refuses deleting the immortal ones (default,
 * orch-system, orch-public), and runs the deletion of terminating namespaces: delete every
 * namespaced object in them (honouring their finalizers), then remove the namespace once it is
 * empty and only our `orch` finalizer is left. A cache fed by a watch on namespaces keeps
 * admission off the store on the hot path.
 */
import { isOrchError, messageOf } from '../../../api/errors.js';
import { StoreErrorCode, type Store, type Watch } from '../../storage/index.js';
import { finalizersOf, metaOf, str, type Admission, type ResourceRegistry, type StrategyContext, type WireObject } from '../../registry/index.js';
import { forbidden, notFound, StatusError } from '../../status/index.js';
import { NAMESPACE_FINALIZER, specFinalizers } from './definition.js';

export const BUILTIN_NAMESPACES = ['default', 'orch-system', 'orch-public', 'orch-node-lease'] as const;
const IMMORTAL = new Set(['default', 'orch-system', 'orch-public']);
const NAMESPACES = { group: '', resource: 'namespaces' };
const SYSTEM: StrategyContext['user'] = { name: 'system:apiserver', uid: '', groups: ['system:masters'] };

export interface NamespaceLifecycleOptions {
  readonly store: Store;
  readonly namespaces: ResourceRegistry;
  /** Every registry of a namespaced resource (views sharing a storage segment are swept once). */
  readonly content: () => readonly ResourceRegistry[];
  readonly log: (message: string) => void;
  /** Pause between sweeps of terminating namespaces (default 500 ms). */
  readonly retryMs?: number;
  readonly now?: () => Date;
}

export class NamespaceLifecycle {
  private readonly options: NamespaceLifecycleOptions;
  private readonly terminating = new Map<string, boolean>();
  private readonly pending = new Set<string>();
  private watch: Watch | undefined;
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;
  private closed = false;

  constructor(options: NamespaceLifecycleOptions) {
    this.options = options;
  }

  /** Creates the built-in namespaces, fills the cache and starts watching. Throws store errors. */
  async start(): Promise<void> {
    const ctx = { user: SYSTEM, now: this.now() };
    for (const name of BUILTIN_NAMESPACES) {
      try {
        await this.options.namespaces.create(ctx, '', { metadata: { name } }, { dryRun: false, fieldManager: 'orch-apiserver' });
      } catch (err) {
        if (!(err instanceof StatusError && err.reason === 'AlreadyExists')) throw err;
      }
    }
    const list = await this.options.store.list('/namespaces/');
    for (const ns of list.items) this.observe(ns, false);
    this.watch = await this.options.store.watch('/namespaces/', {
      resourceVersion: list.resourceVersion,
      onEvent: (event) => {
        if (event.type === 'ADDED' || event.type === 'MODIFIED') this.observe(event.object, false);
        else if (event.type === 'DELETED') this.observe(event.object, true);
        else if (event.type === 'ERROR') this.options.log(`namespaces: the namespace watch failed: ${event.error.message}`);
      },
    });
    this.schedule();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.watch?.close();
  }

  /** The admission check the registries call before writes. */
  readonly admission: Admission = async (operation, def, namespace, name) => {
    if (def.storage === 'namespaces') {
      if (operation === 'delete' && IMMORTAL.has(name)) throw forbidden(NAMESPACES, name, 'this namespace may not be deleted');
      return;
    }
    if (operation !== 'create' || !def.namespaced) return;
    let terminating = this.terminating.get(namespace);
    if (terminating === undefined) {
      try {
        const ns = await this.options.store.get(`/namespaces/${namespace}`);
        terminating = str(metaOf(ns).deletionTimestamp) !== '';
      } catch (err) {
        if (isOrchError(err) && (err.code === StoreErrorCode.notFound || err.code === StoreErrorCode.invalidKey)) throw notFound(NAMESPACES, namespace);
        throw err;
      }
    }
    if (terminating) {
      throw new StatusError(403, 'Forbidden', `${def.group === '' ? def.plural : `${def.plural}.${def.group}`} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`, {
        name, group: def.group, kind: def.plural, causes: [{ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }],
      });
    }
  };

  private now(): Date {
    return (this.options.now ?? (() => new Date()))();
  }

  private observe(ns: WireObject, deleted: boolean): void {
    const name = str(metaOf(ns).name);
    if (deleted) {
      this.terminating.delete(name);
      this.pending.delete(name);
      return;
    }
    const terminating = str(metaOf(ns).deletionTimestamp) !== '';
    this.terminating.set(name, terminating);
    if (terminating && !this.pending.has(name)) {
      this.pending.add(name);
      this.schedule(0);
    }
  }

  private schedule(delay = this.options.retryMs ?? 500): void {
    if (this.closed || this.pending.size === 0 || this.sweeping) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      void this.sweep();
    }, delay);
    this.timer.unref();
  }

  private async sweep(): Promise<void> {
    this.sweeping = true;
    for (const name of [...this.pending]) {
      try {
        if (await this.finalize(name)) this.pending.delete(name);
      } catch (err) {
        this.options.log(`namespaces: deleting the content of namespace ${name} failed (will retry): ${messageOf(err)}`);
      }
    }
    this.sweeping = false;
    this.schedule();
  }

  /** Deletes what is left in the namespace; true once the namespace itself is gone. */
  private async finalize(namespace: string): Promise<boolean> {
    const seen = new Set<string>();
    let remaining = 0;
    const ctx = { user: SYSTEM, now: this.now() };
    for (const registry of this.options.content()) {
      if (seen.has(registry.def.storage)) continue;
      seen.add(registry.def.storage);
      const list = await this.options.store.list(registry.prefix(namespace));
      remaining += list.items.length;
      for (const item of list.items) {
        try {
          await registry.delete(ctx, namespace, str(metaOf(item).name), { dryRun: false });
        } catch (err) {
          if (!(err instanceof StatusError && err.httpCode === 404)) throw err;
        }
      }
    }
    if (remaining > 0) return false;
    const key = `/namespaces/${namespace}`;
    let ns;
    try {
      ns = await this.options.store.get(key);
    } catch (err) {
      if (isOrchError(err) && err.code === StoreErrorCode.notFound) return true;
      throw err;
    }
    const others = specFinalizers(ns).filter((f) => f !== NAMESPACE_FINALIZER);
    if (finalizersOf(ns).length > 0 || others.length > 0) return false;
    await this.options.store.delete(key, { expectedResourceVersion: str(metaOf(ns).resourceVersion) });
    return true;
  }
}
