/**
 * The agent's REST view of the API server: the verbs the node controllers (registration,
 * status, lease, events, pods, certificates, volumes) use, on paths such as
 * `/api/v1/nodes/<name>` or `/apis/events.orch.io/v1/namespaces/<ns>/events`. Every call
 * rejects with an OrchError whose category follows the HTTP status (not-found, conflict,
 * unavailable, …); the Status body's message, reason and details are kept on `status`
 * (OrchApiError, statusOf(err) in status.ts; isResourceExpired(err) for 410).
 * Implementations: createRestClient (rest.ts); tests may use fakes of this interface.
 */

/** How a request is sent. */
export interface RestCallOptions {
  readonly signal?: AbortSignal;
  /** Per attempt; default the client's timeout. */
  readonly timeoutMs?: number;
  /**
   * Outside orchAPIQPS/orchAPIBurst (upstream: events and node heartbeats have their own
   * budgets): events, node status and lease renewals pass true.
   */
  readonly exempt?: boolean;
  /** Query parameters (fieldSelector, labelSelector, resourceVersion, limit, …). */
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** Extra attempts on transient failures (network, 429, 5xx); default the client's. */
  readonly retries?: number;
}

export type PatchType = 'merge' | 'strategic' | 'json';

/** A watch event as the server streams it (one JSON object per line). */
export interface WatchEvent<T = Record<string, unknown>> {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: T;
}

export interface ObjectList<T> {
  readonly metadata?: { readonly resourceVersion?: string; readonly continue?: string };
  readonly items: T[];
}

export interface WatchHandle {
  /** Resolves when the stream ended (server closed, timeout, error, or stop()). Never rejects. */
  readonly done: Promise<{ readonly reason: 'closed' | 'stopped' | 'error'; readonly error?: unknown }>;
  stop(): void;
}

export interface RestClient {
  get<T>(path: string, options?: RestCallOptions): Promise<T>;
  list<T>(path: string, options?: RestCallOptions): Promise<ObjectList<T>>;
  create<T>(path: string, body: unknown, options?: RestCallOptions): Promise<T>;
  /** PUT */
  update<T>(path: string, body: unknown, options?: RestCallOptions): Promise<T>;
  patch<T>(path: string, type: PatchType, patch: unknown, options?: RestCallOptions): Promise<T>;
  /** DELETE with an optional DeleteOptions body; resolves to the server's answer (object or Status). */
  delete<T = unknown>(path: string, body?: unknown, options?: RestCallOptions): Promise<T>;
  /**
   * Opens `?watch=true` on a collection path (query: resourceVersion, fieldSelector, …) and
   * calls `onEvent` for each event, in order. An ERROR event carrying a Status with code 410
   * means the resourceVersion is too old: callers re-list (see createReflector).
   */
  watch<T>(path: string, onEvent: (event: WatchEvent<T>) => void, options?: RestCallOptions): WatchHandle;
  /** Closes idle connections and stops open watches. */
  close(): void;
}
