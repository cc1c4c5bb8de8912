/**
 * FakeRestClient: an in-memory API server behind the RestClient interface, for the unit tests
 * of the node controllers. Objects are kept by path (`<collection path>/<name>`) with a
 * resourceVersion from one counter and a UID; creates, updates, patches (merge, JSON and
 * strategic, with the schema given) and deletes answer as the API server does (404, 409
 * AlreadyExists or Conflict, DeleteOptions preconditions, the `/status` subresource) and reach
 * the open watches of their collection. Lists and watches honour equality label and field
 * selectors.
 *
 * Test controls: `calls` (every call in order, with a copy of its body), `failNext` and
 * `responders` (answers decided before the store's: an error, or a promise to wait for),
 * `put` (an object written by someone else), `watches` (every watch opened: the test can push
 * events into one and end it), `silentWatches` (a broken watch: the store's changes do not
 * reach it). Special behaviours of one kind (a CSR being approved) are subclasses in that
 * module's tests. Test code only: import it from testing.ts.
 */
import type { ErrorCategory } from '../../api/errors.js';
import { applyPatch } from '../../apiserver/patch/index.js';
import { any, type Schema } from '../../apiserver/schema/index.js';
import type { ObjectList, PatchType, RestCallOptions, RestClient, WatchEvent, WatchHandle } from './rest-types.js';
import { OrchApiError } from './status.js';

type Obj = Record<string, unknown>;
type Verb = 'get' | 'list' | 'create' | 'update' | 'patch' | 'delete' | 'watch';
type WatchEnd = Awaited<WatchHandle['done']>;

export interface RestCall {
  readonly verb: Verb;
  readonly path: string;
  /** A copy of the body as sent (create, update, patch, delete with DeleteOptions). */
  readonly body?: unknown;
  readonly patchType?: PatchType;
  readonly options?: RestCallOptions;
  /** When the call was made, by the clock given to the fake (absent without one). */
  readonly at?: number;
}

/** Decides a call's answer before the store does: an error to throw, a promise to wait for first, or undefined. */
export type RestResponder = (call: RestCall) => Error | Promise<void> | undefined;

/** A watch a test drives: `emit` pushes an event to its consumer, `finish` ends its stream. */
export interface FakeWatch {
  readonly path: string;
  readonly query: NonNullable<RestCallOptions['query']>;
  readonly ended: boolean;
  /** Delivers `event` to the watch's consumer as it is (the test chooses its object). */
  emit(event: WatchEvent<unknown>): void;
  finish(result: WatchEnd): void;
}

export interface FakeRestClientOptions {
  /** Stamps each call's `at`. */
  readonly now?: () => number;
  /** The schema of strategic merge patches (default: any object, merged as a merge patch would be). */
  readonly patchSchema?: Schema;
}

const HTTP_CODES: Readonly<Record<ErrorCategory, [number, string]>> = {
  invalid: [422, 'Invalid'], 'not-found': [404, 'NotFound'], 'already-exists': [409, 'AlreadyExists'], conflict: [409, 'Conflict'],
  gone: [410, 'Gone'], unavailable: [503, 'ServiceUnavailable'], timeout: [504, 'Timeout'], forbidden: [403, 'Forbidden'],
  unauthorized: [401, 'Unauthorized'], 'too-large': [413, 'RequestEntityTooLarge'], internal: [500, 'InternalError'],
};

/** The error the REST client throws for an answer of `httpCode` (or of an error category) with `reason`. */
export function apiError(code: number | ErrorCategory, reason?: string, message?: string, path = ''): OrchApiError {
  const [httpCode, defaultReason] = typeof code === 'number' ? [code, undefined] : HTTP_CODES[code];
  const why = reason ?? defaultReason;
  const text = message ?? why ?? `HTTP ${httpCode}`;
  return new OrchApiError(httpCode, { kind: 'Status', status: 'Failure', code: httpCode, ...(why === undefined ? {} : { reason: why }), message: text }, `${path}: ${httpCode} ${text}`, path);
}

const meta = (o: Obj): Obj => (o.metadata ??= {}) as Obj;
const parentOf = (path: string): string => path.slice(0, path.lastIndexOf('/'));
/** `/api/v1/namespaces/ns/pods` -> `/api/v1/pods`: the collection across namespaces. */
const acrossNamespaces = (collection: string): string => collection.replace(/\/namespaces\/[^/]+(?=\/[^/]+$)/, '');

/** A field's value as selectors and messages compare it. */
function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}

function valueAt(object: Obj, dotted: string): unknown {
  return dotted.split('.').reduce<unknown>((v, key) => (typeof v === 'object' && v !== null ? (v as Obj)[key] : undefined), object);
}

/** Equality selectors (`a=b`, `a==b`, `a!=b`; a bare label key: it exists), comma-separated. */
function selects(selector: unknown, read: (key: string) => unknown): boolean {
  if (typeof selector !== 'string' || selector === '') return true;
  return selector.split(',').every((term) => {
    const m = /^\s*([^!=\s]+)\s*(!=|==|=)?\s*(.*?)\s*$/.exec(term);
    if (m === null) return false;
    const [, key = '', op, want = ''] = m;
    const have = read(key);
    if (op === undefined) return have !== undefined;
    return op === '!=' ? text(have) !== want : text(have) === want;
  });
}

export class FakeRestClient implements RestClient {
  /** Objects by path. */
  readonly objects = new Map<string, Obj>();
  readonly calls: RestCall[] = [];
  responders: RestResponder[] = [];
  /** Every watch opened, in order (ended ones too). */
  readonly watches: FakeWatch[] = [];
  /** While true, the store's changes do not reach the watches (only polling sees them). */
  silentWatches = false;
  /** How many times close() was called. */
  closed = 0;
  private rv = 100;
  private uids = 0;
  private generated = 0;
  private readonly consumers = new Map<FakeWatch, (event: WatchEvent<unknown>) => void>();

  constructor(private readonly options: FakeRestClientOptions = {}) {}

  /** The next `times` calls of `verb` on a path containing `pathPart` fail with `failure` (an error category: its HTTP answer). */
  failNext(verb: Verb, pathPart: string, failure: Error | ErrorCategory, times = 1): void {
    let left = times;
    this.responders.push((call) => {
      if (left <= 0 || call.verb !== verb || !call.path.includes(pathPart)) return undefined;
      left -= 1;
      return typeof failure === 'string' ? apiError(failure, undefined, `injected ${failure} on ${verb} ${call.path}`, call.path) : failure;
    });
  }

  callsOf(verb: Verb, path?: string): RestCall[] {
    return this.calls.filter((c) => c.verb === verb && (path === undefined || c.path === path));
  }

  verbs(): Verb[] {
    return this.calls.map((c) => c.verb);
  }

  /** Number of watches still open. */
  get watching(): number {
    return this.watches.filter((w) => !w.ended).length;
  }

  /** Stores `object` at `path` as if someone else wrote it (a new resourceVersion, a UID if it has none); returns a copy. */
  put(path: string, object: Obj): Obj {
    const copy = structuredClone(object);
    meta(copy).resourceVersion = String(++this.rv);
    meta(copy).uid ??= `uid-${++this.uids}`;
    const existed = this.objects.has(path);
    this.objects.set(path, copy);
    this.notify(path, existed ? 'MODIFIED' : 'ADDED', copy);
    return structuredClone(copy);
  }

  /** Current resourceVersion of the store. */
  get resourceVersion(): string {
    return String(this.rv);
  }

  // ---- the RestClient ----

  async get<T>(path: string, options?: RestCallOptions): Promise<T> {
    await this.enter({ verb: 'get', path }, options);
    return structuredClone(this.existing(path)) as T;
  }

  async list<T>(path: string, options?: RestCallOptions): Promise<ObjectList<T>> {
    await this.enter({ verb: 'list', path }, options);
    const items = [...this.objects].filter(([key, o]) => this.inCollection(key, o, path, options?.query)).map(([, o]) => structuredClone(o) as T);
    return { metadata: { resourceVersion: this.resourceVersion }, items };
  }

  async create<T>(path: string, body: unknown, options?: RestCallOptions): Promise<T> {
    await this.enter({ verb: 'create', path, body: structuredClone(body) }, options);
    const object = structuredClone(body) as Obj;
    const m = meta(object);
    const name = typeof m.name === 'string' && m.name !== '' ? m.name : `${text(m.generateName ?? '')}${++this.generated}`;
    m.name = name;
    const namespace = /\/namespaces\/([^/]+)\/[^/]+$/.exec(path)?.[1];
    if (namespace !== undefined) m.namespace ??= namespace;
    const key = `${path}/${name}`;
    if (this.objects.has(key)) throw apiError(409, 'AlreadyExists', `${key} already exists`, path);
    return this.put(key, object) as T;
  }

  async update<T>(path: string, body: unknown, options?: RestCallOptions): Promise<T> {
    await this.enter({ verb: 'update', path, body: structuredClone(body) }, options);
    const { key, status } = this.subresource(path);
    const old = this.existing(key);
    const object = structuredClone(body) as Obj;
    const rv = meta(object).resourceVersion;
    if (rv !== undefined && rv !== meta(old).resourceVersion) throw apiError(409, 'Conflict', `${path}: the object has been modified`, path);
    this.sameUid(path, object, old);
    const next = status ? { ...old, status: object.status } : { ...object, status: old.status };
    if (next.status === undefined) delete next.status;
    meta(next).uid = meta(old).uid;
    return this.put(key, next) as T;
  }

  async patch<T>(path: string, type: PatchType, patch: unknown, options?: RestCallOptions): Promise<T> {
    await this.enter({ verb: 'patch', path, body: structuredClone(patch), patchType: type }, options);
    const { key, status } = this.subresource(path);
    const old = this.existing(key);
    const patched = applyPatch(type, old, patch, this.options.patchSchema ?? any());
    this.sameUid(path, patched, old);
    const next = status ? { ...old, status: patched.status } : { ...patched, status: old.status };
    if (next.status === undefined) delete next.status;
    return this.put(key, next) as T;
  }

  async delete<T>(path: string, body?: unknown, options?: RestCallOptions): Promise<T> {
    await this.enter({ verb: 'delete', path, ...(body === undefined ? {} : { body: structuredClone(body) }) }, options);
    const old = this.existing(path);
    const pre = ((body as Obj | undefined)?.preconditions ?? {}) as Obj;
    for (const field of ['uid', 'resourceVersion']) {
      if (pre[field] !== undefined && pre[field] !== meta(old)[field]) {
        throw apiError(409, 'Conflict', `Precondition failed: ${field} in precondition: ${text(pre[field])}, ${field} in object meta: ${text(meta(old)[field])}`, path);
      }
    }
    this.objects.delete(path);
    this.notify(path, 'DELETED', old);
    return old as T;
  }

  watch<T>(path: string, onEvent: (event: WatchEvent<T>) => void, options?: RestCallOptions): WatchHandle {
    const call: RestCall = { verb: 'watch', path, ...this.extras(options) };
    this.calls.push(call);
    let end: (result: WatchEnd) => void = () => undefined;
    const done = new Promise<WatchEnd>((resolve) => {
      end = resolve;
    });
    const watch = {
      path,
      query: options?.query ?? {},
      ended: false,
      emit: (event: WatchEvent<unknown>) => {
        if (!watch.ended) onEvent(event as unknown as WatchEvent<T>);
      },
      finish: (result: WatchEnd) => {
        if (watch.ended) return;
        watch.ended = true;
        this.consumers.delete(watch);
        end(result);
      },
    };
    this.watches.push(watch);
    this.consumers.set(watch, watch.emit);
    options?.signal?.addEventListener('abort', () => {
      watch.finish({ reason: 'stopped' });
    }, { once: true });
    return { done, stop: () => { watch.finish({ reason: 'stopped' }); } };
  }

  /** Ends every open watch. */
  close(): void {
    this.closed += 1;
    for (const w of [...this.consumers.keys()]) w.finish({ reason: 'stopped' });
  }

  // ---- the store ----

  private extras(options: RestCallOptions | undefined): Partial<RestCall> {
    const now = this.options.now;
    return { ...(options === undefined ? {} : { options }), ...(now === undefined ? {} : { at: now() }) };
  }

  /** Records the call, then lets the responders decide; answers a turn later, as a server would. */
  private async enter(call: RestCall, options: RestCallOptions | undefined): Promise<void> {
    const recorded = { ...call, ...this.extras(options) };
    this.calls.push(recorded);
    for (const responder of this.responders) {
      const out = responder(recorded);
      if (out instanceof Error) throw out;
      if (out !== undefined) {
        await out;
        break;
      }
    }
    await Promise.resolve();
  }

  private existing(path: string): Obj {
    const found = this.objects.get(path);
    if (found === undefined) throw apiError(404, 'NotFound', `${path} not found`, path);
    return found;
  }

  /** A UID in what is written is a precondition: another UID is a conflict (the object was replaced). */
  private sameUid(path: string, written: Obj, old: Obj): void {
    const uid = meta(written).uid;
    if (uid !== undefined && uid !== meta(old).uid) {
      throw apiError(409, 'Conflict', `Precondition failed: UID in precondition: ${text(uid)}, UID in object meta: ${text(meta(old).uid)}`, path);
    }
  }

  private subresource(path: string): { key: string; status: boolean } {
    const status = path.endsWith('/status') && !this.objects.has(path);
    return { key: status ? path.slice(0, -'/status'.length) : path, status };
  }

  private inCollection(key: string, object: Obj, collection: string, query: RestCallOptions['query']): boolean {
    const parent = parentOf(key);
    if (parent !== collection && acrossNamespaces(parent) !== collection) return false;
    const labels = (meta(object).labels ?? {}) as Obj;
    return selects(query?.labelSelector, (k) => labels[k]) && selects(query?.fieldSelector, (k) => valueAt(object, k));
  }

  private notify(key: string, type: 'ADDED' | 'MODIFIED' | 'DELETED', object: Obj): void {
    if (this.silentWatches) return;
    for (const [watch, deliver] of this.consumers) {
      if (this.inCollection(key, object, watch.path, watch.query)) deliver({ type, object: structuredClone(object) });
    }
  }
}
