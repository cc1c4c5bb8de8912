/**
 * Fakes for the tests of the console's browser modules, which run in Node: an Api whose lists
 * and streams the test scripts (each stream a ReadableStream the test writes lines to), and
 * timers the test fires by hand.
 */
import { ApiError, type Api } from './api.js';
import type { Timers } from './reflector.js';

export interface FakeStream {
  readonly path: string;
  /** Writes lines (each JSON-encoded when not a string) followed by newlines. */
  write(...lines: unknown[]): void;
  /** Writes text as it is (a line split across chunks). */
  raw(text: string): void;
  /** Ends the stream (the server closed it). */
  end(): void;
  /** Fails the stream (the connection dropped). */
  fail(message: string): void;
  readonly aborted: boolean;
}

/** A page of a list, or the error get() rejects with. */
type Answer = unknown;

export class FakeApi implements Api {
  readonly requests: string[] = [];
  readonly streams: FakeStream[] = [];
  /** Answers of get() by path prefix, taken in order (the last one stays). */
  private readonly answers = new Map<string, Answer[]>();
  /** Errors the next stream() calls reject with, in order. */
  readonly streamErrors: ApiError[] = [];
  private readonly waiters: (() => void)[] = [];

  answer(pathPrefix: string, ...answers: Answer[]): void {
    this.answers.set(pathPrefix, answers);
  }

  get<T>(path: string): Promise<T> {
    this.requests.push(`GET ${path}`);
    for (const [prefix, list] of this.answers) {
      if (!path.startsWith(prefix)) continue;
      const next = list.length > 1 ? list.shift() : list[0];
      return next instanceof ApiError ? Promise.reject(next) : Promise.resolve(next as T);
    }
    return Promise.reject(new ApiError(404, 'NotFound', `${path} not found`));
  }

  post<T>(path: string): Promise<T> {
    this.requests.push(`POST ${path}`);
    return Promise.reject(new ApiError(405, 'MethodNotAllowed', 'no post in the fake'));
  }

  stream(path: string, signal: AbortSignal): Promise<ReadableStreamDefaultReader<Uint8Array>> {
    this.requests.push(`STREAM ${path}`);
    const error = this.streamErrors.shift();
    if (error !== undefined) return Promise.reject(error);
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (c) => { controller = c; } });
    const encoder = new TextEncoder();
    let open = true;
    const stream: FakeStream = {
      path,
      write: (...lines) => {
        if (open) controller.enqueue(encoder.encode(lines.map((l) => `${typeof l === 'string' ? l : JSON.stringify(l)}\n`).join('')));
      },
      raw: (text) => {
        if (open) controller.enqueue(encoder.encode(text));
      },
      end: () => {
        if (open) controller.close();
        open = false;
      },
      fail: (message) => {
        if (open) controller.error(new TypeError(message));
        open = false;
      },
      get aborted() {
        return signal.aborted;
      },
    };
    signal.addEventListener('abort', () => {
      if (open) controller.error(new DOMException('aborted', 'AbortError'));
      open = false;
    });
    this.streams.push(stream);
    for (const w of this.waiters.splice(0)) w();
    return Promise.resolve(body.getReader());
  }

  /** Resolves once `count` streams were opened. */
  async streamCount(count: number): Promise<FakeStream> {
    while (this.streams.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
    const last = this.streams[count - 1];
    if (last === undefined) throw new Error('no stream');
    return last;
  }
}

export class FakeTimers implements Timers {
  private next = 1;
  readonly pending = new Map<number, { fn: () => void; ms: number }>();

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.pending.set(id, { fn, ms });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** Delays of the pending timers, in order of creation. */
  delays(): number[] {
    return [...this.pending.values()].map((t) => t.ms);
  }

  /** Fires every pending timer. */
  fireAll(): void {
    const due = [...this.pending.values()];
    this.pending.clear();
    for (const t of due) t.fn();
  }
}

/** Lets the microtasks and stream reads queued so far run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
