/**
 * FakeRestClient: an in-memory API server behind the RestClient interface, for the unit tests
 * of the node controllers. The REST behaviour suite (behaviour.ts) holds it to what
 * orch-apiserver answers: objects kept by path (`<collection path>/<name>`) under one revision
 * counter, with uid, creation time and generated names; creates, updates, patches (merge, JSON
 * and strategic, with the schemas given) and deletes answering 404, 409 AlreadyExists or
 * Conflict, 400 and 422 with upstream's reasons and details; DeleteOptions preconditions,
 * pods' graceful deletion, the `/status` subresource; label and field selectors as the server
 * parses them; paged lists read at one revision; watches from a resourceVersion (the changes
 * since replayed, the current objects first without one, objects entering and leaving the
 * selection), and 410 Expired once `compact()` dropped the history.
 *
 * Test controls: `calls` (every call in order, with a copy of its body), `failNext` and
 * `responders` (answers decided before the store's: an error, or a promise to wait for),
 * `put` (an object written by someone else), `compact` (the history up to now is gone),
 * `watches` (every watch opened: the test can push events into one and end it),
 * `silentWatches` (a broken watch: the store's changes do not reach the open ones). Special
 * behaviours of one kind (a CSR being approved) are subclasses in that module's tests. Test code
 * only: import it from testing.ts.
 */
import type { ErrorCategory } from '../../api/errors.js';
import { applyPatch, PatchApplyError } from '../../apiserver/patch/index.js';
import { any, type Schema } from '../../apiserver/schema/index.js';
import {
  apiError, decodeContinue, detailsOf, encodeContinue, lastSegment, meta, namespaceOfCollection, parentOf, rulesOf, selectionOf, selects, text,
  type Obj, type Selection,
} from './fake-rest-rules.js';
import { FakeHistory, type ChangeType } from './fake-rest-history.js';
import type { ObjectList, PatchType, RestCallOptions, RestClient, WatchEvent, WatchHandle } from './rest-types.js';

export { apiError } from './fake-rest-rules.js';

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
  /** Stamps each call's `at`, and objects' creation and deletion times (default Date.now). */
  readonly now?: () => number;
  /** The schemas of strategic merge patches by resource (`nodes`); others merge as a merge patch would. */
  readonly patchSchemas?: Readonly<Record<string, Schema>>;
}

/** Upstream's alphabet of generated name suffixes (no vowels, no look-alike digits). */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const seconds = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}Z`;

export class FakeRestClient implements RestClient {
  /** Objects by path. */
  readonly objects = new Map<string, Obj>();
  readonly calls: RestCall[] = [];
  responders: RestResponder[] = [];
  /** Every watch opened, in order (ended ones too). */
  readonly watches: FakeWatch[] = [];
  /** While true, the store's changes do not reach the open watches (only polling sees them). */
  silentWatches = false;
  /** How many times close() was called. */
  closed = 0;
  private uids = 0;
  private generated = 0;
  private readonly history = new FakeHistory();

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
    meta(copy).uid ??= `uid-${++this.uids}`;
    return this.write(path, this.objects.has(path) ? 'MODIFIED' : 'ADDED', copy);
  }

  /** Current resourceVersion of the store. */
  get resourceVersion(): string {
    return String(this.history.current);
  }

  /** Drops the history up to now (a compaction): watches and continue tokens from before are answered 410 Expired. */
  compact(): void {
    this.history.compact();
  }

  // ---- the RestClient ----

  async get<T>(path: string, options?: RestCallOptions): Promise<T> {
    await this.enter({ verb: 'get', path }, options);
    return structuredClone(this.existing(this.subresource(path).key)) as T;
  }

  async list<T>(path: string, options?: RestCallOptions): Promise<ObjectList<T>> {
    await this.enter({ verb: 'list', path }, options);
    const query = options?.query ?? {};
    const selection = selectionOf(path, query);
    const token = text(query.continue);
    const start = token === '' ? undefined : decodeContinue(token, path);
    const exact = query.resourceVersionMatch === 'Exact' ? Number(query.resourceVersion) : undefined;
    const at = start?.rv ?? exact ?? this.history.current;
    if (at < this.history.compacted) throw apiError(410, 'Expired', `The provided continue parameter or resourceVersion ${at} is too old: the history before ${this.history.compacted} was compacted`, path);
    const all = [...this.history.stateAt(at, this.objects)].filter(([key, o]) => selects(path, selection, key, o) && (start === undefined || key > start.after)).sort(([a], [b]) => (a < b ? -1 : 1));
    const limit = Number(query.limit ?? 0);
    const page = limit > 0 ? all.slice(0, limit) : all;
    const last = page.at(-1)?.[0];
    const more = limit > 0 && all.length > limit && last !== undefined;
    return { metadata: { resourceVersion: String(at), ...(more ? { continue: encodeContinue(at, last) } : {}) }, items: page.map(([, o]) => structuredClone(o) as T) };
  }

  async create<T>(path: string, body: unknown, options?: RestCallOptions): Promise<T> {
    await this.enter({ verb: 'create', path, body: structuredClone(body) }, options);
    const object = structuredClone(body) as Obj;
    const m = meta(object);
    const namespace = namespaceOfCollection(path);
    if (namespace !== undefined && m.namespace !== undefined && m.namespace !== namespace) {
      throw apiError(400, 'BadRequest', `the namespace of the provided object (${text(m.namespace)}) does not match the namespace sent on the request (${namespace})`, path);
    }
    if (namespace !== undefined) m.namespace = namespace;
    m.name = typeof m.name === 'string' && m.name !== '' ? m.name : `${text(m.generateName)}${this.suffix()}`;
    const key = `${path}/${String(m.name)}`;
    if (this.objects.has(key)) throw apiError(409, 'AlreadyExists', `${lastSegment(path)} "${String(m.name)}" already exists`, path, detailsOf(key));
    m.uid = `uid-${++this.uids}`;
    m.creationTimestamp = seconds(this.now());
    delete m.resourceVersion;
    // The pod strategy starts every pod Pending, whatever status the client sent.
    if (lastSegment(path) === 'pods') object.status = { phase: 'Pending' };
    return this.write(key, 'ADDED', object) as T;
  }

  async update<T>(path: string, body: unknown, options?: RestCallOptions): Promise<T> {
    await this.enter({ verb: 'update', path, body: structuredClone(body) }, options);
    const { key, status } = this.subresource(path);
    const old = this.existing(key);
    const object = structuredClone(body) as Obj;
    const name = meta(object).name;
    if (name !== undefined && name !== meta(old).name) throw apiError(400, 'BadRequest', `the name of the object (${text(name)}) does not match the name on the URL (${text(meta(old).name)})`, path);
    const rv = meta(object).resourceVersion;
    if (rv !== undefined && rv !== meta(old).resourceVersion) throw this.conflict(key, 'the object has been modified; please apply your changes to the latest version and try again');
    this.sameUid(key, object, old);
    return this.write(key, 'MODIFIED', this.merged(old, object, status)) as T;
  }

  async patch<T>(path: string, type: PatchType, patch: unknown, options?: RestCallOptions): Promise<T> {
    await this.enter({ verb: 'patch', path, body: structuredClone(patch), patchType: type }, options);
    const { key, status } = this.subresource(path);
    const old = this.existing(key);
    let patched: Obj;
    try {
      patched = applyPatch(type, old, patch, this.options.patchSchemas?.[lastSegment(parentOf(key))] ?? any());
    } catch (err) {
      // As the server: a patch that cannot apply is 422 Invalid, a malformed one 400.
      const message = err instanceof Error ? err.message : String(err);
      throw err instanceof PatchApplyError ? apiError(422, 'Invalid', message, path) : apiError(400, 'BadRequest', message, path);
    }
    if (meta(patched).resourceVersion !== meta(old).resourceVersion) throw this.conflict(key, 'the object has been modified; please apply your changes to the latest version and try again');
    this.sameUid(key, patched, old);
    return this.write(key, 'MODIFIED', this.merged(old, patched, status)) as T;
  }

  async delete<T>(path: string, body?: unknown, options?: RestCallOptions): Promise<T> {
    await this.enter({ verb: 'delete', path, ...(body === undefined ? {} : { body: structuredClone(body) }) }, options);
    const old = this.existing(path);
    const deleteOptions = (body ?? {}) as Obj;
    const pre = (deleteOptions.preconditions ?? {}) as Obj;
    for (const field of ['uid', 'resourceVersion']) {
      if (pre[field] !== undefined && pre[field] !== meta(old)[field]) {
        throw this.conflict(path, `Precondition failed: ${field === 'uid' ? 'UID' : 'ResourceVersion'} in precondition: ${text(pre[field])}, ${field === 'uid' ? 'UID' : 'ResourceVersion'} in object meta: ${text(meta(old)[field])}`);
      }
    }
    const grace = this.gracePeriod(path, old, deleteOptions.gracePeriodSeconds);
    if (grace > 0) {
      const current = meta(old).deletionGracePeriodSeconds;
      if (typeof current === 'number' && current <= grace) return structuredClone(old) as T;
      const marked = structuredClone(old);
      meta(marked).deletionTimestamp = seconds(this.now() + grace * 1000);
      meta(marked).deletionGracePeriodSeconds = grace;
      return this.write(path, 'MODIFIED', marked) as T;
    }
    const last = this.write(path, 'DELETED', structuredClone(old));
    if (rulesOf(lastSegment(parentOf(path))).returnsObject === true) return last as T;
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { ...detailsOf(path), uid: meta(old).uid } } as T;
  }

  watch<T>(path: string, onEvent: (event: WatchEvent<T>) => void, options?: RestCallOptions): WatchHandle {
    const call: RestCall = { verb: 'watch', path, ...this.extras(options) };
    this.calls.push(call);
    let end: (result: WatchEnd) => void = () => undefined;
    const done = new Promise<WatchEnd>((resolve) => {
      end = resolve;
    });
    const query = options?.query ?? {};
    const fake = {
      path,
      query,
      ended: false,
      emit: (event: WatchEvent<unknown>) => {
        if (!fake.ended) onEvent(event as unknown as WatchEvent<T>);
      },
      finish: (result: WatchEnd) => {
        if (fake.ended) return;
        fake.ended = true;
        this.history.close(fake);
        end(result);
      },
    };
    this.watches.push(fake);
    options?.signal?.addEventListener('abort', () => {
      fake.finish({ reason: 'stopped' });
    }, { once: true });
    const handle = { done, stop: () => { fake.finish({ reason: 'stopped' }); } };
    let selection: Selection;
    try {
      selection = selectionOf(path, query);
    } catch (err) {
      queueMicrotask(() => { fake.finish({ reason: 'error', error: err }); });
      return handle;
    }
    this.history.watch(fake, selection, text(query.resourceVersion), this.objects);
    return handle;
  }

  /** Ends every open watch. */
  close(): void {
    this.closed += 1;
    for (const w of this.history.sinks()) w.finish({ reason: 'stopped' });
  }

  // ---- the store ----

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** A generated name's suffix: five characters of upstream's alphabet, from a counter. */
  private suffix(): string {
    let n = ++this.generated;
    let out = '';
    for (let i = 0; i < 5; i++, n = Math.floor(n / NAME_ALPHABET.length)) out = (NAME_ALPHABET[n % NAME_ALPHABET.length] ?? 'b') + out;
    return out;
  }

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

  private existing(key: string): Obj {
    const found = this.objects.get(key);
    if (found === undefined) throw apiError(404, 'NotFound', `${lastSegment(parentOf(key))} "${lastSegment(key)}" not found`, key, detailsOf(key));
    return found;
  }

  private conflict(key: string, why: string): Error {
    return apiError(409, 'Conflict', `Operation cannot be fulfilled on ${lastSegment(parentOf(key))} "${lastSegment(key)}": ${why}`, key, detailsOf(key));
  }

  /** A UID in what is written is a precondition: another UID is a conflict (the object was replaced). */
  private sameUid(key: string, written: Obj, old: Obj): void {
    const uid = meta(written).uid;
    if (uid !== undefined && uid !== meta(old).uid) throw this.conflict(key, `Precondition failed: UID in precondition: ${text(uid)}, UID in object meta: ${text(meta(old).uid)}`);
  }

  /** What an update writes: the status alone through /status, everything but the status otherwise; the server's metadata kept. */
  private merged(old: Obj, written: Obj, status: boolean): Obj {
    const next = status ? { ...structuredClone(old), status: written.status } : { ...written, status: old.status };
    if (next.status === undefined) delete next.status;
    const m = meta(next);
    for (const owned of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'namespace']) {
      const value = meta(old)[owned];
      if (value === undefined) Reflect.deleteProperty(m, owned);
      else m[owned] = value;
    }
    return next;
  }

  private subresource(path: string): { key: string; status: boolean } {
    const status = path.endsWith('/status') && !this.objects.has(path);
    return { key: status ? path.slice(0, -'/status'.length) : path, status };
  }

  /** Seconds a DELETE leaves the object for: a pod bound to a node and not finished keeps its grace period (upstream's pod strategy). */
  private gracePeriod(key: string, object: Obj, asked: unknown): number {
    if (lastSegment(parentOf(key)) !== 'pods') return 0;
    const spec = (object.spec ?? {}) as Obj;
    const phase = ((object.status ?? {}) as Obj).phase;
    if (text(spec.nodeName) === '' || phase === 'Succeeded' || phase === 'Failed') return 0;
    const given = typeof asked === 'number' ? asked : typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30;
    return given < 0 ? 1 : given;
  }

  /** Stores (or removes) the object at `key` at the next revision, keeps the change and tells the watches; returns a copy. */
  private write(key: string, type: ChangeType, object: Obj): Obj {
    meta(object).resourceVersion = String(this.history.next());
    if (type === 'DELETED') this.objects.delete(key);
    else this.objects.set(key, object);
    this.history.record({ rv: Number(meta(object).resourceVersion), key, type, object: structuredClone(object) }, this.silentWatches);
    return structuredClone(object);
  }
}
