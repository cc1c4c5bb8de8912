/**
 * Test-only fakes of the client layer: FakeResourceClient, an in-memory ResourceClient with a
 * revision, optimistic concurrency, the status subresource, graceful deletion and watches
 * delivered on the next microtask, as the registry's; and FakeEventRecorder, which keeps what
 * is recorded. Never imported by production code.
 */
import type { Clock } from '../../../api/clock.js';
import { formatTime } from '../../../api/time.js';
import { cloneJson } from '../../patch/index.js';
import { metaOf, nameOf, namespaceOf, resourceVersionOf, str } from '../../registry/index.js';
import { alreadyExists, conflict, notFound, type StatusError } from '../../status/index.js';
import type { EventRecorder, EventType } from './events.js';
import type { ClientWatch, DeleteOptions, ObjectEvent, ObjectList, ResourceClient, WireObject } from './types.js';

export interface FakeResourceClientOptions {
  /** The plural, for error messages (`pods`). */
  readonly resource: string;
  readonly kind: string;
  readonly apiVersion?: string;
  readonly clock: Clock;
  /** Updates of the object keep its status; `status` updates change only it (pods, nodes). */
  readonly statusSubresource?: boolean;
  /** Graceful deletion: the seconds a delete keeps the object (as the pod strategy); absent: deleted at once. */
  readonly gracePeriod?: (object: WireObject, requested: number | undefined) => number;
}

export interface ClientCall {
  readonly op: 'create' | 'update' | 'delete';
  readonly namespace: string;
  readonly name: string;
  readonly object?: WireObject;
  readonly subresource?: string;
  readonly options?: DeleteOptions;
}

export class FakeResourceClient implements ResourceClient {
  readonly calls: ClientCall[] = [];
  private readonly options: FakeResourceClientOptions;
  private readonly objects = new Map<string, WireObject>();
  private readonly watchers = new Set<(event: ObjectEvent) => void>();
  private revision = 0;
  private uids = 0;
  private failures: { op: string; error: Error }[] = [];

  constructor(options: FakeResourceClientOptions) {
    this.options = options;
  }

  /** The next call of `op` ('list', 'create', 'update', 'delete', 'get', 'watch') throws `error`. */
  failNext(op: string, error: Error): void {
    this.failures.push({ op, error });
  }

  /** Stored objects (copies). */
  all(): WireObject[] {
    return [...this.objects.values()].map((o) => cloneJson(o));
  }

  peek(namespace: string, name: string): WireObject | undefined {
    const o = this.objects.get(`${namespace}/${name}`);
    return o === undefined ? undefined : cloneJson(o);
  }

  /** Ends every open watch with an ERROR event (a compaction), as the store does. */
  breakWatches(): void {
    const watchers = [...this.watchers];
    this.watchers.clear();
    for (const w of watchers) queueMicrotask(() => { w({ type: 'ERROR', error: notFound({ group: '', resource: this.options.resource }, 'watch') }); });
  }

  private fail(op: string): void {
    const i = this.failures.findIndex((f) => f.op === op);
    if (i < 0) return;
    const [f] = this.failures.splice(i, 1);
    if (f !== undefined) throw f.error;
  }

  private gr(): { group: string; resource: string } {
    return { group: '', resource: this.options.resource };
  }

  private emit(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: WireObject): void {
    const copy = cloneJson(object);
    for (const w of this.watchers) queueMicrotask(() => { w({ type, object: copy }); });
  }

  private stamp(object: WireObject): WireObject {
    metaOf(object).resourceVersion = String(++this.revision);
    return object;
  }

  list(): Promise<ObjectList> {
    this.fail('list');
    return Promise.resolve({ items: this.all(), resourceVersion: String(this.revision) });
  }

  watch(_resourceVersion: string, onEvent: (event: ObjectEvent) => void): Promise<ClientWatch> {
    this.fail('watch');
    this.watchers.add(onEvent);
    return Promise.resolve({
      close: () => {
        this.watchers.delete(onEvent);
        return Promise.resolve();
      },
    });
  }

  get(namespace: string, name: string): Promise<WireObject> {
    this.fail('get');
    const o = this.objects.get(`${namespace}/${name}`);
    return o === undefined ? Promise.reject(notFound(this.gr(), name)) : Promise.resolve(cloneJson(o));
  }

  create(namespace: string, object: WireObject): Promise<WireObject> {
    this.calls.push({ op: 'create', namespace, name: nameOf(object), object: cloneJson(object) });
    this.fail('create');
    const key = `${namespace}/${nameOf(object)}`;
    if (this.objects.has(key)) return Promise.reject(alreadyExists(this.gr(), nameOf(object)));
    const stored = cloneJson(object);
    stored.kind = this.options.kind;
    stored.apiVersion = this.options.apiVersion ?? 'v1';
    const meta = metaOf(stored);
    if (namespace !== '') meta.namespace = namespace;
    if (str(meta.uid) === '') meta.uid = `uid-${++this.uids}`;
    if (str(meta.creationTimestamp) === '') meta.creationTimestamp = formatTime(this.options.clock.now());
    this.objects.set(key, this.stamp(stored));
    this.emit('ADDED', stored);
    return Promise.resolve(cloneJson(stored));
  }

  update(namespace: string, name: string, object: WireObject, subresource?: 'status'): Promise<WireObject> {
    this.calls.push({ op: 'update', namespace, name, object: cloneJson(object), ...(subresource === undefined ? {} : { subresource }) });
    this.fail('update');
    const key = `${namespace}/${name}`;
    const old = this.objects.get(key);
    if (old === undefined) return Promise.reject(notFound(this.gr(), name));
    const rv = resourceVersionOf(object);
    if (rv !== '' && rv !== resourceVersionOf(old)) return Promise.reject(conflict(this.gr(), name, 'the object has been modified'));
    let next = cloneJson(object);
    if (subresource === 'status') next = { ...cloneJson(old), status: cloneJson(object.status) };
    else if (this.options.statusSubresource === true) next = { ...next, status: cloneJson(old.status) };
    for (const owned of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'namespace']) {
      const value = metaOf(old)[owned];
      if (value === undefined) Reflect.deleteProperty(metaOf(next), owned);
      else metaOf(next)[owned] = value;
    }
    this.objects.set(key, this.stamp(next));
    this.emit('MODIFIED', next);
    return Promise.resolve(cloneJson(next));
  }

  delete(namespace: string, name: string, options: DeleteOptions = {}): Promise<void> {
    this.calls.push({ op: 'delete', namespace, name, options });
    this.fail('delete');
    const key = `${namespace}/${name}`;
    const old = this.objects.get(key);
    if (old === undefined) return Promise.reject(notFound(this.gr(), name));
    if (options.uid !== undefined && options.uid !== str(metaOf(old).uid)) return Promise.reject(conflict(this.gr(), name, 'Precondition failed: UID'));
    const grace = this.options.gracePeriod?.(old, options.gracePeriodSeconds) ?? 0;
    if (grace > 0) {
      const current = metaOf(old).deletionGracePeriodSeconds;
      if (typeof current === 'number' && current <= grace) return Promise.resolve();
      const next = cloneJson(old);
      metaOf(next).deletionTimestamp = formatTime(this.options.clock.now() + grace * 1000);
      metaOf(next).deletionGracePeriodSeconds = grace;
      this.objects.set(key, this.stamp(next));
      this.emit('MODIFIED', next);
      return Promise.resolve();
    }
    this.objects.delete(key);
    this.emit('DELETED', this.stamp(cloneJson(old)));
    return Promise.resolve();
  }

  /** Writes a copy of `object` as a client would (create, or update without precondition). */
  async put(object: WireObject): Promise<WireObject> {
    const namespace = namespaceOf(object);
    const existing = this.objects.get(`${namespace}/${nameOf(object)}`);
    if (existing === undefined) return this.create(namespace, object);
    const next = cloneJson(object);
    delete metaOf(next).resourceVersion;
    const written = await this.update(namespace, nameOf(object), next);
    if (this.options.statusSubresource === true && object.status !== undefined) return this.update(namespace, nameOf(object), { ...written, status: object.status }, 'status');
    return written;
  }
}

export interface RecordedEvent {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly type: EventType;
  readonly reason: string;
  readonly action: string;
  readonly note: string;
}

export class FakeEventRecorder implements EventRecorder {
  readonly events: RecordedEvent[] = [];

  record(regarding: WireObject, type: EventType, reason: string, action: string, note: string): void {
    this.events.push({ kind: str(regarding.kind), namespace: namespaceOf(regarding), name: nameOf(regarding), type, reason, action, note });
  }

  reasons(): string[] {
    return this.events.map((e) => e.reason);
  }
}

/** The StatusError a fake throws for a conflict (for failNext). */
export function conflictError(resource: string, name: string): StatusError {
  return conflict({ group: '', resource }, name, 'the object has been modified');
}
