/**
 * Every read of the console goes through here: fetch with the signed-in user's bearer token,
 * errors turned into ApiError with the API's own Status message, and a 401 reported once to
 * `onUnauthorized` (the session ends: the page never shows data without a valid token).
 */

/** A request the API answered with an error, or that failed on the way. */
export class ApiError extends Error {
  /** The HTTP status, 0 when the request did not reach the server. */
  readonly status: number;
  /** The Status reason (Forbidden, NotFound, Expired...), '' when none. */
  readonly reason: string;

  constructor(status: number, reason: string, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.reason = reason;
  }
}

export interface Api {
  /** GET a JSON document. Rejects with ApiError. */
  get<T>(path: string, signal?: AbortSignal): Promise<T>;
  /** POST a JSON body, answers the JSON document. Rejects with ApiError. */
  post<T>(path: string, body: unknown): Promise<T>;
  /** GET a streamed body (watches, followed logs): its reader once the headers arrive. Rejects with ApiError. */
  stream(path: string, signal: AbortSignal): Promise<ReadableStreamDefaultReader<Uint8Array>>;
}

export type FetchFn = (input: string, init: RequestInit) => Promise<Response>;

export interface ApiOptions {
  readonly token: string;
  readonly fetch: FetchFn;
  /** Called on the first 401 answer (the token expired or was revoked). */
  readonly onUnauthorized?: (error: ApiError) => void;
}

/** The ApiError of a failed response, from its Status body where it has one. */
export async function errorOf(res: Response, path: string): Promise<ApiError> {
  let message = '';
  let reason = '';
  try {
    const body = (await res.json()) as { message?: unknown; reason?: unknown };
    if (typeof body.message === 'string') message = body.message;
    if (typeof body.reason === 'string') reason = body.reason;
  } catch {
    // Not a Status (a proxy's page, a cut connection): the HTTP status says enough.
    message = '';
  }
  return new ApiError(res.status, reason, message === '' ? `${path}: HTTP ${res.status} ${res.statusText}` : message);
}

function networkError(err: unknown, path: string): ApiError | Error {
  if (err instanceof DOMException && err.name === 'AbortError') return err;
  return new ApiError(0, '', `${path}: the API server cannot be reached (${err instanceof Error ? err.message : String(err)})`);
}

export function createApi(options: ApiOptions): Api {
  let unauthorized = false;
  const headers = (extra: Record<string, string> = {}): Record<string, string> => ({
    Authorization: `Bearer ${options.token}`, Accept: 'application/json', ...extra,
  });
  const call = async (path: string, init: RequestInit): Promise<Response> => {
    let res: Response;
    try {
      res = await options.fetch(path, { ...init, credentials: 'omit', cache: 'no-store' });
    } catch (err) {
      throw networkError(err, path);
    }
    if (res.ok) return res;
    const error = await errorOf(res, path);
    if (res.status === 401 && !unauthorized) {
      unauthorized = true;
      options.onUnauthorized?.(error);
    }
    throw error;
  };
  return {
    async get<T>(path: string, signal?: AbortSignal): Promise<T> {
      const res = await call(path, { method: 'GET', headers: headers(), ...(signal === undefined ? {} : { signal }) });
      return (await res.json()) as T;
    },
    async post<T>(path: string, body: unknown): Promise<T> {
      const res = await call(path, { method: 'POST', headers: headers({ 'Content-Type': 'application/json' }), body: JSON.stringify(body) });
      return (await res.json()) as T;
    },
    async stream(path, signal) {
      const res = await call(path, { method: 'GET', headers: headers(), signal });
      if (res.body === null) throw new ApiError(res.status, '', `${path}: the answer has no body`);
      return res.body.getReader();
    },
  };
}
