/**
 * One store watch over one etcd watch (etcd3 multiplexes them on one gRPC stream per client and
 * re-creates them after a disconnection).
 *
 * Resuming: after a reconnection etcd3 restarts a watch from the revision after the last
 * response header it saw, which can skip events when the watch was still replaying history.
 * We therefore set the restart revision ourselves after each response: one past the last event
 * delivered, or past a progress notification known to be safe.
 *
 * Progress: etcd sends progress notifications (an empty response whose header is the current
 * revision) to idle watches, every --experimental-watch-progress-notify-interval. etcd 3.4 can
 * send one whose revision is ahead of an event still on its way, so a notification's revision
 * is trusted only once the next notification arrives; bookmarks and restarts use that.
 */
import type { Etcd3, IKeyValue, IWatchResponse, Watcher } from 'etcd3';
import { messageOf, type OrchError } from '../../api/errors.js';
import { internal, tooOld, unavailable } from './errors.js';
import type { KeyRange } from './keys.js';
import type { KvChange, KvWatch, KvWatchSink } from './kv.js';
import type { StoreLogger } from './types.js';

export interface EtcdWatchRequest {
  readonly client: Etcd3;
  /** The etcd key prefix of the store, stripped from event keys. */
  readonly keyPrefix: string;
  readonly range: KeyRange;
  readonly afterRevision: number | undefined;
  readonly sink: KvWatchSink;
  readonly log: StoreLogger;
  /** How long the start waits for etcd to create the watch, and close() for it to confirm the end. */
  readonly timeoutMs: number;
}

function watchFailure(err: Error, after: number): OrchError {
  // etcd 3.4 cancels a watch whose start revision was compacted with an empty reason (3.5: "...compacted").
  const message = err.message;
  if (/compacted/i.test(message) || /^Watcher canceled: ?$/.test(message)) return tooOld(after, 0);
  return unavailable(`storage: the etcd watch failed: ${message}`, 'etcd', err);
}

/** etcd3 types prev_kv as always present; it is absent when etcd no longer has the previous revision. */
function previous(kv: IKeyValue | null | undefined): IKeyValue | undefined {
  return kv ?? undefined;
}

export function startEtcdWatch(request: EtcdWatchRequest): Promise<{ watch: KvWatch; startRevision: number }> {
  const { client, keyPrefix, range, sink, afterRevision } = request;
  const builder = client
    .watch()
    .inRange({ start: `${keyPrefix}${range.start}`, end: `${keyPrefix}${range.end}` })
    .withPreviousKV();
  if (afterRevision !== undefined) builder.startRevision(String(afterRevision + 1));
  const watcher: Watcher = builder.watcher();
  let startRevision = afterRevision ?? 0;
  let lastEvent = 0;
  let pendingProgress = 0;
  let safeProgress = 0;
  let state: 'starting' | 'running' | 'failed' | 'closed' = 'starting';
  const resumeAfter = (): number => Math.max(startRevision, lastEvent, safeProgress);
  const record = (kv: IKeyValue, value: Buffer, modRevision: number) => ({
    key: kv.key.toString('utf8').slice(keyPrefix.length),
    value: value.toString('utf8'),
    modRevision,
  });

  const onData = (response: IWatchResponse): void => {
    if (state === 'closed' || state === 'failed') return;
    for (const event of response.events) {
      // Several events can share a revision (a lease expiry deletes all its keys in one).
      const revision = Number(event.kv.mod_revision);
      if (revision < lastEvent) continue;
      let change: KvChange;
      if (event.type === 'Put') {
        const created = event.kv.version === '1';
        const prev = previous(event.prev_kv);
        change = { type: 'put', record: record(event.kv, event.kv.value, revision), created, previous: created || prev === undefined ? undefined : prev.value.toString('utf8') };
      } else if (previous(event.prev_kv) !== undefined) {
        change = { type: 'delete', record: record(event.kv, event.prev_kv.value, revision) };
      } else {
        fail(internal(`storage: etcd sent a deletion of ${event.kv.key.toString('utf8')} without its previous value`, 'etcd'));
        return;
      }
      lastEvent = revision;
      sink.change(change);
    }
    if (response.events.length === 0) {
      safeProgress = Math.max(safeProgress, pendingProgress);
      pendingProgress = Number(response.header.revision);
    }
    watcher.request.start_revision = resumeAfter() + 1;
  };

  const fail = (error: OrchError): void => {
    if (state === 'closed' || state === 'failed') return;
    state = 'failed';
    sink.fail(error);
    // A watch canceled by etcd is already gone from etcd3's manager; otherwise cancel it here.
    watcher.cancel().catch((err: unknown) => {
      request.log(`storage: canceling a failed etcd watch failed: ${messageOf(err)}`);
    });
  };

  const watch: KvWatch = {
    progressRevision: resumeAfter,
    close: async () => {
      const wasRunning = state === 'running';
      state = 'closed';
      if (!wasRunning) return;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          request.log(`storage: etcd did not confirm the end of a watch within ${request.timeoutMs} ms`);
          resolve();
        }, request.timeoutMs);
      });
      await Promise.race([watcher.cancel(), timeout]);
      clearTimeout(timer);
    },
  };

  return new Promise((resolve, reject) => {
    const startTimer = setTimeout(() => {
      if (state !== 'starting') return;
      state = 'failed';
      reject(unavailable(`storage: etcd did not create the watch within ${request.timeoutMs} ms`, 'etcd'));
      watcher.cancel().catch((err: unknown) => {
        request.log(`storage: canceling an etcd watch that did not start failed: ${messageOf(err)}`);
      });
    }, request.timeoutMs);
    watcher.on('connected', (response: IWatchResponse) => {
      if (state === 'starting') {
        clearTimeout(startTimer);
        state = 'running';
        if (startRevision === 0) startRevision = Number(response.header.revision);
        resolve({ watch, startRevision });
      }
      // etcd3 has just set the restart revision to the header's: put ours back.
      watcher.request.start_revision = resumeAfter() + 1;
    });
    watcher.on('data', onData);
    watcher.on('error', (err: Error) => {
      const error = watchFailure(err, afterRevision ?? startRevision);
      if (state === 'starting') {
        clearTimeout(startTimer);
        state = 'failed';
        reject(error);
        return;
      }
      if (state === 'running') {
        state = 'failed';
        sink.fail(error);
      }
    });
  });
}
