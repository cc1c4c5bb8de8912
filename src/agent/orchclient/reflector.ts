/**
 * createReflector: keeps a consumer in step with a collection on the API server, after
 * upstream's Reflector. It lists (following `continue` pages), hands the items and the list's
 * resourceVersion to onList (replace semantics), then watches from that resourceVersion with
 * allowWatchBookmarks=true and a server-side timeoutSeconds, handing ADDED/MODIFIED/DELETED
 * events to onEvent. Every event and BOOKMARK moves the last seen resourceVersion:
 * - a watch the server ended normally (timeoutSeconds) is reopened at once from there;
 * - a disconnect or a failure (server down, 5xx, …) reopens it from there after a back-off;
 * - 410 Gone/Expired (an ERROR event with code 410, or a 410 answer) lists again;
 * - a failed list is retried after a back-off.
 * Lists ask for upstream's relistResourceVersion: "0" first (a watch cache on the server answers
 * from memory, whole, whatever the limit), then the last resourceVersion seen (not older than
 * it; unpaged unless the server paged "0" before), and "" at once when that was refused as
 * expired (410) or too large (504 ResourceVersionTooLarge).
 * Back-off: initialMs (0.8 s) doubling up to maxMs (30 s), plus up to `jitter` of it at
 * random; reset by a successful list or a watch that delivered something. The reflector never
 * throws into its caller; it logs each change of state once (failing, recovered, re-listing)
 * and every retry only at verbosity 4. An exception from onList counts as a failed list (logged
 * and retried); one from onEvent is logged and the event is skipped. The clock (back-off
 * pauses, how long a watch lasted) and random are injected.
 */
import type { Clock } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import type { RestCallOptions, RestClient, WatchEvent, WatchHandle } from './rest-types.js';
import { errorFromWatchEvent, isResourceExpired, isResourceVersionTooLarge } from './status.js';

export interface ReflectorBackoff {
  /** First pause, default 800 ms. */
  readonly initialMs?: number;
  /** Longest pause before jitter, default 30 s. */
  readonly maxMs?: number;
  readonly factor?: number;
  /** Up to this fraction of the pause is added at random, default 0.2. */
  readonly jitter?: number;
}

export interface ReflectorOptions<T> {
  readonly rest: RestClient;
  /** A collection path, e.g. /api/v1/pods. */
  readonly path: string;
  /** Selectors for both the list and the watch, e.g. { fieldSelector: 'spec.nodeName=n1' }. */
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly logger?: Logger;
  /** For log lines; default the path. */
  readonly name?: string;
  /** The whole collection (again, after a re-list): replace what you had. */
  onList(items: T[], resourceVersion: string): void | Promise<void>;
  /** One change (ADDED, MODIFIED, DELETED), in order. */
  onEvent(event: WatchEvent<T>): void;
  readonly backoff?: ReflectorBackoff;
  /** List page size (limit); 0 lists in one answer. Default 500. */
  readonly pageSize?: number;
  /** Watches last this long times (1 + random), server-side (timeoutSeconds). Default 300. */
  readonly minWatchTimeoutSeconds?: number;
  /** A watch that ends without delivering anything sooner than this is a failure (back-off). Default 1 s. */
  readonly shortWatchMs?: number;
  /** Calls pass exempt to the RestClient (outside orchAPIQPS). Default false. */
  readonly exempt?: boolean;
  /** The back-off pauses (cut short by stop()) and the watch's duration. */
  readonly clock: Clock;
  readonly random?: () => number;
}

export interface Reflector {
  /** Starts listing and watching in the background. Idempotent. */
  start(): void;
  /** Stops the watch and any pause; resolves when the loop ended. Idempotent. */
  stop(): Promise<void>;
  /** True once onList returned for the first time. */
  hasSynced(): boolean;
  /** The last resourceVersion seen (list, event or bookmark); '' before the first list. */
  lastSyncResourceVersion(): string;
}

const silent: Pick<Logger, 'info' | 'warn' | 'error' | 'v'> = { info: () => undefined, warn: () => undefined, error: () => undefined, v: () => undefined };

function resourceVersionOf(object: unknown): string | undefined {
  const meta = (object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata;
  return typeof meta?.resourceVersion === 'string' && meta.resourceVersion !== '' ? meta.resourceVersion : undefined;
}

type WatchOutcome = 'reopen' | 'relist' | 'backoff' | 'stopped';

export function createReflector<T>(options: ReflectorOptions<T>): Reflector {
  const log = options.logger ?? silent;
  const name = options.name ?? options.path;
  const { clock } = options;
  const random = options.random ?? Math.random;
  const initialMs = options.backoff?.initialMs ?? 800;
  const maxMs = options.backoff?.maxMs ?? 30_000;
  const factor = options.backoff?.factor ?? 2;
  const jitter = options.backoff?.jitter ?? 0.2;
  const pageSize = options.pageSize ?? 500;
  const minWatchTimeout = options.minWatchTimeoutSeconds ?? 300;
  const shortWatchMs = options.shortWatchMs ?? 1000;
  const exempt = options.exempt === true ? { exempt: true } : {};

  const stopper = new AbortController();
  /** A function, not a property read: the loop's own check must not narrow it. */
  const stopped = (): boolean => stopper.signal.aborted;
  let loop: Promise<void> | undefined;
  let synced = false;
  let resourceVersion = '';
  /** The last list at resourceVersion failed as expired or too large: the next one is consistent (""). */
  let rvUnavailable = false;
  /** A list at "0" came in pages: the server has no watch cache answering it; keep paging. */
  let paginatedResult = false;
  let watch: WatchHandle | undefined;
  let failures = 0;
  let step = 0;
  let lastWatchDelivered = false;

  function failed(what: string, err: unknown): void {
    failures++;
    if (failures === 1) log.warn(`${name}: ${what} failed; retrying with back-off`, { error: messageOf(err) });
    else log.v(4, `${name}: ${what} failed again`, { failures, error: messageOf(err) });
  }

  function succeeded(): void {
    step = 0;
    if (failures > 0) log.info(`${name}: list and watch work again`, { afterFailures: failures });
    failures = 0;
  }

  async function pause(): Promise<void> {
    if (stopper.signal.aborted) return;
    const base = Math.min(maxMs, initialMs * factor ** step);
    step++;
    await clock.sleep(base * (1 + jitter * random()), stopper.signal);
  }

  /**
   * The resourceVersion of the next list (upstream's relistResourceVersion): "0" for the first
   * (the server's watch cache may answer), the last one seen for a relist (not older than it),
   * "" (a consistent read) after a list at that one failed as expired or too large.
   */
  function relistResourceVersion(): string {
    if (rvUnavailable) return '';
    return resourceVersion === '' ? '0' : resourceVersion;
  }

  async function list(): Promise<boolean> {
    const items: T[] = [];
    let listRv = '';
    let next: string | undefined;
    let rv = relistResourceVersion();
    // As upstream: a relist at "N" is not paged unless the server paged before (a watch cache
    // answers "N" only without a limit); "0" with a limit is answered whole by a watch cache.
    let paged = pageSize > 0 && (options.pageSize !== undefined || paginatedResult || rv === '' || rv === '0');
    let pages = 0;
    for (;;) {
      const query = {
        ...(options.query ?? {}), ...(paged ? { limit: pageSize } : {}),
        ...(next === undefined ? (rv === '' ? {} : { resourceVersion: rv }) : { continue: next }),
      };
      try {
        const page = await options.rest.list<T>(options.path, { query, signal: stopper.signal, ...exempt });
        pages++;
        items.push(...page.items);
        if (next === undefined) listRv = page.metadata?.resourceVersion ?? '';
        next = page.metadata?.continue === '' ? undefined : page.metadata?.continue;
        if (next === undefined) break;
      } catch (err) {
        if (stopper.signal.aborted) return false;
        if (next === undefined && rv !== '' && (isResourceExpired(err) || isResourceVersionTooLarge(err))) {
          // The revision asked for is gone or not reached yet: list the current state at once.
          log.v(2, `${name}: resourceVersion ${rv} is unavailable; listing the current state`);
          rvUnavailable = true;
          rv = '';
          paged = pageSize > 0;
          items.length = 0;
          continue;
        }
        if (next !== undefined && isResourceExpired(err)) {
          // The continue token's revision was compacted: list everything in one answer.
          log.v(2, `${name}: a list page expired; listing again without pages`);
          items.length = 0;
          next = undefined;
          paged = false;
          continue;
        }
        failed('list', err);
        return false;
      }
    }
    try {
      await options.onList(items, listRv);
    } catch (err) {
      log.error(`${name}: the list's consumer failed`, { error: messageOf(err) });
      failed('list', err);
      return false;
    }
    if (rv === '0' && pages > 1) paginatedResult = true;
    rvUnavailable = false;
    resourceVersion = listRv;
    synced = true;
    succeeded();
    return true;
  }

  function handle(event: WatchEvent<T>, seen: { expired: boolean; error?: unknown }): void {
    if (event.type === 'ERROR') {
      const err = errorFromWatchEvent(options.path, event);
      if (isResourceExpired(err)) seen.expired = true;
      else seen.error = err;
      return;
    }
    const rv = resourceVersionOf(event.object);
    if (event.type !== 'BOOKMARK') {
      try {
        options.onEvent(event);
      } catch (err) {
        log.error(`${name}: the event's consumer failed; the event is skipped`, { type: event.type, error: messageOf(err) });
      }
    }
    if (rv !== undefined) resourceVersion = rv;
  }

  async function watchOnce(): Promise<WatchOutcome> {
    const seen: { expired: boolean; error?: unknown } = { expired: false };
    let delivered = 0;
    const started = clock.now();
    const timeoutSeconds = Math.floor(minWatchTimeout * (1 + random()));
    const query: RestCallOptions['query'] = {
      ...(options.query ?? {}), resourceVersion, allowWatchBookmarks: true, timeoutSeconds,
    };
    watch = options.rest.watch<T>(options.path, (event) => {
      if (event.type !== 'ERROR' && ++delivered === 1) succeeded();
      handle(event, seen);
    }, { query, ...exempt });
    if (stopper.signal.aborted) watch.stop();
    const end = await watch.done;
    watch = undefined;
    lastWatchDelivered = delivered > 0;
    if (stopper.signal.aborted || end.reason === 'stopped') return 'stopped';
    if (seen.expired || isResourceExpired(end.error)) {
      log.info(`${name}: resourceVersion ${resourceVersion} is too old; listing again`);
      return 'relist';
    }
    if (end.reason === 'error' || seen.error !== undefined) {
      failed('watch', end.error ?? seen.error);
      return 'backoff';
    }
    if (delivered === 0 && clock.now() - started < shortWatchMs) {
      failed('watch', new Error('the watch ended at once without any event'));
      return 'backoff';
    }
    return 'reopen';
  }

  async function run(): Promise<void> {
    let needList = true;
    let relists = 0;
    while (!stopped()) {
      try {
        if (needList) {
          // A watch that answers 410 again right after a fresh list: do not spin.
          if (relists > 1) await pause();
          if (!(await list())) {
            await pause();
            continue;
          }
          needList = false;
        }
        const outcome = await watchOnce();
        if (outcome === 'relist') {
          needList = true;
          relists = lastWatchDelivered ? 1 : relists + 1;
        } else {
          relists = 0;
          if (outcome === 'backoff') await pause();
        }
      } catch (err) {
        if (stopped()) break;
        // Nothing in the loop rejects by design: a failure here is a bug worth a line, not a crash.
        log.error(`${name}: unexpected failure of the list-and-watch loop`, { error: messageOf(err) });
        await pause();
      }
    }
  }

  return {
    start() {
      if (loop !== undefined || stopper.signal.aborted) return;
      loop = run();
    },
    async stop() {
      stopper.abort();
      watch?.stop();
      await loop;
    },
    hasSynced: () => synced,
    lastSyncResourceVersion: () => resourceVersion,
  };
}
