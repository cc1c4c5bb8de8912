/** The watch stream of one HTTP request (see index.ts for the behaviour). */
import { randomInt } from 'node:crypto';
import { isGone, messageOf } from '../../api/errors.js';
import { encodeWatchFrame } from '../protobuf/index.js';
import { parseFieldSelector } from '../selectors/index.js';
import type { WatchEvent } from '../storage/index.js';
import { badRequest, expired, toStatusError, type Status } from '../status/index.js';
import {
  apiVersionOf, listObjects, listRequest, toTable, type ListRequest, type ResourceRequest, type WireObject,
} from '../registry/index.js';
import type { WatchBudget } from './budget.js';
import { presentShared, SelectionFilter, sharedMatcher, watchIndexFor } from './selection.js';

export interface WatchServeOptions {
  /** Default timeout when the client gives no timeoutSeconds, in seconds (default random in [1800, 3600)). */
  readonly defaultTimeoutSeconds?: () => number;
  readonly log: (message: string) => void;
  /** Called for each event written (the watch event metrics). */
  readonly onEvent?: () => void;
  /** The server's watch buffering: a watcher that cannot keep up is ended. */
  readonly budget: WatchBudget;
}

/**
 * The store hands the same decoded object to every watcher of a change: the JSON line of each
 * (view, event type) is made once and shared by all of them (plain JSON output only).
 */
const lines = new WeakMap<object, Map<string, string>>();

function sharedLine(stored: object, key: string, make: () => string): string {
  let byKey = lines.get(stored);
  if (byKey === undefined) {
    byKey = new Map();
    lines.set(stored, byKey);
  }
  let line = byKey.get(key);
  if (line === undefined) {
    line = make();
    byKey.set(key, line);
  }
  return line;
}

type Frame = { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'; object: unknown };

function errorStatus(err: unknown, rv: string): Status {
  if (isGone(err)) return expired(`too old resource version: ${rv} (${messageOf(err)})`).toStatus();
  return toStatusError(err).toStatus();
}

/** How long before its timeout a watch with bookmarks gets one (upstream's cacher: 2 s). */
const BOOKMARK_BEFORE_TIMEOUT_MS = 2_000;

/** Serves a watch request until the client leaves, the timeout passes or the watch fails. */
export async function serveWatch(r: ResourceRequest, options: WatchServeOptions): Promise<void> {
  const base = listRequest(r);
  // A watch on one named object is a watch of the list with metadata.name=<name>.
  const request: ListRequest = r.name === '' ? base : { ...base, fieldSelector: parseFieldSelector(
    [r.query.string('fieldSelector') ?? '', `metadata.name=${r.name}`].filter((s) => s !== '').join(','), r.registry.def.fieldLabels, r.registry.def.plural) };
  const bookmarks = r.query.bool('allowWatchBookmarks');
  const sendInitial = r.query.has('sendInitialEvents') ? r.query.bool('sendInitialEvents') : undefined;
  if (sendInitial !== undefined && (!bookmarks || request.resourceVersionMatch !== 'NotOlderThan')) {
    throw badRequest('sendInitialEvents requires allowWatchBookmarks=true and resourceVersionMatch=NotOlderThan');
  }
  const timeout = r.query.int('timeoutSeconds') ?? (options.defaultTimeoutSeconds ?? (() => 1800 + randomInt(1800)))();
  const rv = request.resourceVersion ?? '';
  const def = r.registry.def;
  const table = r.output.kind === 'table';
  const protobuf = r.output.kind === 'protobuf';
  const include = r.query.oneOf('includeObject', ['None', 'Metadata', 'Object'], 'Metadata');
  const filtered = !request.labelSelector.empty || !request.fieldSelector.empty;
  const selection = new SelectionFilter(sharedMatcher(r.registry, request));
  const res = r.res;
  const contentType = protobuf ? `${r.output.mediaType ?? 'application/vnd.kubernetes.protobuf'};stream=watch` : 'application/json';
  // No Transfer-Encoding: HTTP/1.1 chunks a response without a length anyway, and HTTP/2 forbids the header.
  res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();

  let finished = false;
  const abort = new AbortController();
  const outlet = options.budget.outlet(res, def.plural, (reason) => {
    options.log(`watch: ending the watch of ${def.plural} for ${r.user.name}: ${reason}`);
    finish();
  });
  const finish = (): void => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    outlet.close();
    abort.abort();
    if (!res.writableEnded && !res.destroyed) res.end();
  };
  const timer = setTimeout(finish, timeout * 1000);
  res.on('close', finish);

  const emit = (text: string | Buffer): void => {
    if (finished) return;
    options.onEvent?.();
    outlet.write(text);
  };
  const write = (frame: Frame): void => {
    if (finished) return;
    let object = frame.object;
    if (table && (frame.type === 'ADDED' || frame.type === 'MODIFIED' || frame.type === 'DELETED')) {
      object = toTable(def, [object as WireObject], {}, { version: r.output.version, include, now: r.now(), headers: true });
    }
    if (protobuf) {
      emit(encodeWatchFrame(apiVersionOf(def), frame.type, object as Record<string, unknown>));
      return;
    }
    emit(`${JSON.stringify({ type: frame.type, object }, null, r.output.pretty ? 2 : undefined)}\n`);
  };
  const bookmark = (resourceVersion: string, annotations?: Record<string, string>): Frame => ({
    type: 'BOOKMARK',
    object: { kind: def.kind, apiVersion: apiVersionOf(def), metadata: { resourceVersion, ...(annotations === undefined ? {} : { annotations }) } },
  });

  try {
    let start = rv;
    if (sendInitial === false && (rv === '' || rv === '0')) {
      // From now: nothing to list, a selector watch included (each change tells whether its
      // object matched before, as on a resume below).
      start = await r.registry.store.list(r.registry.prefix(request.namespace), { limit: 1 }).then((l) => l.resourceVersion);
    } else if (rv === '' || rv === '0' || sendInitial === true) {
      const { resourceVersionMatch: _match, ...unmatched } = request;
      const initial = await listObjects(r.registry, { ...(rv === '' ? unmatched : request), limit: 0, ...(sendInitial === true ? {} : { resourceVersion: '' }) });
      for (const object of initial.items) {
        selection.seed(object);
        write({ type: 'ADDED', object });
      }
      start = initial.resourceVersion;
      if (sendInitial === true) write(bookmark(start, { 'k8s.io/initial-events-end': 'true' }));
    }
    // A selector watch resumed from a resourceVersion lists nothing: each change tells whether its
    // object matched before (its previous state), so a resume costs the changes since, not a list
    // of every object at that revision (which a thousand nodes' pod watches resuming at once made
    // the server's largest cost).
    const onEvent = (event: WatchEvent): void => {
      if (event.type === 'BOOKMARK') {
        if (bookmarks) write(bookmark(event.resourceVersion));
        return;
      }
      if (event.type === 'ERROR') {
        write({ type: 'ERROR', object: errorStatus(event.error, start) });
        finish();
        return;
      }
      if (!filtered && !table && !protobuf && !r.output.pretty) {
        emit(sharedLine(event.object, `${def.group}/${def.plural}/${event.type}`, () => `${JSON.stringify({ type: event.type, object: r.registry.present(event.object) })}\n`));
        return;
      }
      const object = presentShared(r.registry, event.object);
      if (!filtered) {
        write({ type: event.type, object });
        return;
      }
      const previous = event.previous;
      const type = selection.next(event.type, object, previous === undefined ? undefined : () => presentShared(r.registry, previous()));
      if (type !== undefined) write({ type, object });
    };
    if (abort.signal.aborted) return;
    const watch = await r.registry.store.watch(r.registry.prefix(request.namespace !== '' ? request.namespace : (def.namespaced ? request.fieldSelector.exact('metadata.namespace') ?? '' : '')), {
      resourceVersion: start,
      bookmarks,
      signal: abort.signal,
      onEvent,
      index: filtered ? watchIndexFor(r.registry, request) : undefined,
    });
    void watch.done.then(finish);
    // As upstream's watch cache: a BOOKMARK shortly before the timeout ends the stream, so that
    // the client resumes from a recent revision and the resume replays little.
    if (bookmarks && timeout * 1000 > BOOKMARK_BEFORE_TIMEOUT_MS) {
      const early = setTimeout(() => { watch.bookmark(); }, timeout * 1000 - BOOKMARK_BEFORE_TIMEOUT_MS);
      early.unref();
      void watch.done.then(() => { clearTimeout(early); });
    }
  } catch (err) {
    write({ type: 'ERROR', object: errorStatus(err, rv) });
    finish();
  }
}
