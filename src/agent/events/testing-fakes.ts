/**
 * Fakes for this module's unit tests: a manual clock with timers, a RestClient that keeps
 * events in memory and can fail or hold calls.
 */
import { OrchError, type ErrorCategory } from '../../api/errors.js';
import type { ObjectList, PatchType, RestCallOptions, RestClient, WatchHandle } from '../orchclient/rest-types.js';
import type { EventTimers } from './writer.js';

/** Lets pending promise chains run (a few macrotask turns). */
export async function settle(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export class FakeClock implements EventTimers {
  private seq = 0;
  private readonly pending = new Map<number, { at: number; fn: () => void }>();

  constructor(public nowMs = Date.UTC(2026, 10, 22, 3, 4, 5, 123)) {}

  readonly now = (): number => this.nowMs;

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.pending.set(id, { at: this.nowMs + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  get timerCount(): number {
    return this.pending.size;
  }

  /** Moves time forward by `ms`, firing due timers in order and letting their work run. */
  async advance(ms: number): Promise<void> {
    const target = this.nowMs + ms;
    await settle();
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.pending) if (entry[1].at <= target && (next === undefined || entry[1].at < next[1].at)) next = entry;
      if (next === undefined) break;
      this.pending.delete(next[0]);
      this.nowMs = Math.max(this.nowMs, next[1].at);
      next[1].fn();
      await settle();
    }
    this.nowMs = target;
    await settle();
  }
}

export interface Call {
  readonly verb: 'create' | 'patch';
  readonly path: string;
  readonly body: Record<string, unknown>;
  readonly patchType?: PatchType;
  readonly options: RestCallOptions | undefined;
  readonly at: number;
}

/** Decides a call's answer: return an error to throw, a promise to wait on, or undefined for the default. */
export type Responder = (call: Call) => Error | Promise<void> | undefined;

export function httpError(category: ErrorCategory, code: number, reason: string): OrchError {
  const err = new OrchError('ORCHCLIENT_REQUEST_FAILED', category, `${code} ${reason}`);
  Object.assign(err, { status: { code, reason, message: reason } });
  return err;
}

export class FakeRestClient implements RestClient {
  readonly calls: Call[] = [];
  /** Stored events by `<namespace>/<name>`. */
  readonly events = new Map<string, Record<string, unknown>>();
  responders: Responder[] = [];

  constructor(private readonly clock: { now(): number }) {}

  private async answer(call: Call): Promise<void> {
    this.calls.push(call);
    for (const responder of this.responders) {
      const out = responder(call);
      if (out instanceof Error) throw out;
      if (out !== undefined) {
        await out;
        break;
      }
    }
    await Promise.resolve();
  }

  async create<T>(path: string, body: unknown, options?: RestCallOptions): Promise<T> {
    const event = structuredClone(body) as Record<string, unknown>;
    await this.answer({ verb: 'create', path, body: event, options, at: this.clock.now() });
    const meta = event.metadata as { name: string; namespace: string };
    const key = `${meta.namespace}/${meta.name}`;
    if (this.events.has(key)) throw httpError('already-exists', 409, 'AlreadyExists');
    this.events.set(key, event);
    return event as T;
  }

  async patch<T>(path: string, type: PatchType, patch: unknown, options?: RestCallOptions): Promise<T> {
    const body = structuredClone(patch) as Record<string, unknown>;
    await this.answer({ verb: 'patch', path, body, patchType: type, options, at: this.clock.now() });
    const parts = path.split('/');
    const key = `${parts[5] ?? ''}/${parts[7] ?? ''}`;
    const stored = this.events.get(key);
    if (stored === undefined) throw httpError('not-found', 404, 'NotFound');
    Object.assign(stored, body);
    return stored as T;
  }

  get<T>(): Promise<T> {
    return Promise.reject(new Error('not used'));
  }

  list<T>(): Promise<ObjectList<T>> {
    return Promise.reject(new Error('not used'));
  }

  update<T>(): Promise<T> {
    return Promise.reject(new Error('not used'));
  }

  delete<T>(): Promise<T> {
    return Promise.reject(new Error('not used'));
  }

  watch(): WatchHandle {
    throw new Error('not used');
  }

  close(): void {
    // Nothing to close.
  }

  verbs(): string[] {
    return this.calls.map((c) => c.verb);
  }
}
