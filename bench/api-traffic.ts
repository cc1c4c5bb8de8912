/**
 * What the API server served over a window, from its /metrics: requests by verb and resource
 * (apiserver_request_total, the subresource after a slash; requests for no resource, such as
 * the bench's own reads of /metrics, are left out), watch events sent by kind
 * (apiserver_watch_events_total: every frame the server writes on a watch, its BOOKMARKs
 * included: one a minute per watch by default)
 * and the watches open at the end (apiserver_longrunning_requests with verb WATCH). The idle
 * window of the API-mode bench uses it to show what the agent asks for and receives while
 * nothing changes (the bench's own client is quiet then).
 */

/** Counter values by key: `VERB resource[/subresource]` for requests, the kind for watch events. */
export interface ApiTraffic {
  readonly requests: ReadonlyMap<string, number>;
  readonly watchEvents: ReadonlyMap<string, number>;
  /** Watches open, by resource. */
  readonly watches: ReadonlyMap<string, number>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function labels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(LABEL)) out[m[1] ?? ''] = m[2] ?? '';
  return out;
}

function add(map: Map<string, number>, key: string, value: number): void {
  map.set(key, (map.get(key) ?? 0) + value);
}

/** The counters of a Prometheus text exposition of orch-apiserver's /metrics. */
export function parseApiTraffic(exposition: string): ApiTraffic {
  const requests = new Map<string, number>();
  const watchEvents = new Map<string, number>();
  const watches = new Map<string, number>();
  for (const line of exposition.split('\n')) {
    const m = SAMPLE.exec(line);
    if (m === null) continue;
    const [, name, labelText, valueText] = m;
    const value = Number(valueText);
    if (!Number.isFinite(value)) continue;
    const l = labels(labelText ?? '');
    const resource = `${l.resource ?? ''}${l.subresource === undefined || l.subresource === '' ? '' : `/${l.subresource}`}`;
    if (name === 'apiserver_request_total' && resource !== '') add(requests, `${l.verb ?? ''} ${resource}`, value);
    else if (name === 'apiserver_watch_events_total') add(watchEvents, l.kind ?? '', value);
    else if (name === 'apiserver_longrunning_requests' && l.verb === 'WATCH' && value > 0) add(watches, resource, value);
  }
  return { requests, watchEvents, watches };
}

function delta(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of b) {
    const d = v - (a.get(k) ?? 0);
    if (d > 0) out.set(k, d);
  }
  return out;
}

/** One line: each request kind and watch event kind between the two readings, per minute over `seconds`; the watches open at the end. */
export function formatApiTraffic(before: ApiTraffic, after: ApiTraffic, seconds: number): string {
  const perMinute = (n: number): string => (n * 60 / seconds).toFixed(1);
  const list = (m: ReadonlyMap<string, number>): string => [...m].sort((x, y) => y[1] - x[1]).map(([k, n]) => `${k} ${perMinute(n)}`).join(', ') || 'none';
  const open = [...after.watches].sort().map(([k, n]) => `${k} ${String(n)}`).join(', ') || 'none';
  return `requests per minute: ${list(delta(before.requests, after.requests))}; watch events per minute: ${list(delta(before.watchEvents, after.watchEvents))}; watches open: ${open}`;
}
