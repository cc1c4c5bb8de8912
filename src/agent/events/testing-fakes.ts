/**
 * Fakes for this module's unit tests: a RestClient that keeps events in memory and can fail or
 * hold calls, and a Logger that keeps its lines (time: src/api/fake-clock.ts).
 */
import { OrchError, type ErrorCategory } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import type { ObjectList, PatchType, RestCallOptions, RestClient, WatchHandle } from '../orchclient/rest-types.js';

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

export interface LogLine {
  readonly level: 'info' | 'warn' | 'error' | number;
  readonly msg: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

export class FakeLogger implements Logger {
  constructor(readonly lines: LogLine[] = []) {}

  info(msg: string, fields: Readonly<Record<string, unknown>> = {}): void {
    this.lines.push({ level: 'info', msg, fields });
  }

  warn(msg: string, fields: Readonly<Record<string, unknown>> = {}): void {
    this.lines.push({ level: 'warn', msg, fields });
  }

  error(msg: string, fields: Readonly<Record<string, unknown>> = {}): void {
    this.lines.push({ level: 'error', msg, fields });
  }

  enabled(): boolean {
    return true;
  }

  v(level: number, msg: string, fields: Readonly<Record<string, unknown>> = {}): void {
    this.lines.push({ level, msg, fields });
  }

  named(): Logger {
    return this;
  }

  at(level: LogLine['level']): LogLine[] {
    return this.lines.filter((l) => l.level === level);
  }
}
