/**
 * watch: `?watch=true` on a list (or the legacy `/watch/` paths): a chunked stream of JSON lines
 * `{"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}` over the store's watch.
 *
 * - resourceVersion unset or "0": ADDED for every current object first, then changes after
 *   the list's revision; "N": changes after N only;
 * - sendInitialEvents=true (with allowWatchBookmarks and resourceVersionMatch=NotOlderThan):
 *   the initial ADDED events end with a BOOKMARK annotated `k8s.io/initial-events-end: "true"`;
 *   sendInitialEvents=false starts from now without them;
 * - selectors: an object that stops matching is sent as DELETED, one that starts as ADDED (the
 *   previous state each change carries says whether it matched before; an initial list seeds it
 *   where there is one);
 * - allowWatchBookmarks: BOOKMARK events carry only metadata.resourceVersion;
 * - history gone (compacted): HTTP 200 then one ERROR event with a 410 Expired Status;
 * - timeoutSeconds ends the stream (default: random between 30 and 60 minutes), so does a
 *   client that disconnects; a client that reads too slowly is ended by the WatchBudget
 *   (budget.ts: upstream's 100-event queue per watcher, a byte ceiling per watcher and for the
 *   whole server), so the client lists again or resumes from its last resourceVersion.
 *
 * Must not: write to the store or know particular resources.
 */
export { DEFAULT_WATCH_BUDGET, WatchBudget, WatchOutlet, type WatchBudgetOptions, type WatchSink } from './budget.js';
export { serveWatch, type WatchServeOptions } from './http-watch.js';
