/**
 * Helpers of the conformance suite (conformance.ts): a store per test, deadline polling, event
 * collection and error assertions. Test code only.
 */
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { isOrchError, type ErrorCategory } from '../../api/errors.js';
import type { ManagedStore, StoredObject, Watch, WatchEvent, WatchOptions } from './types.js';

export interface StoreHarness {
  readonly store: ManagedStore;
  /** Closes the store and removes what it created (files, keys). */
  readonly cleanup: () => Promise<void>;
}

/**
 * Makes a fresh, empty store for one test. The suite expects watch bookmarks every 100 ms or so,
 * TTL expiry within a few seconds, and no automatic compaction during a test.
 */
export type StoreFactory = () => Promise<StoreHarness>;

/** Runs `body` with a fresh store, always cleaning up. */
export async function withStore(make: StoreFactory, body: (store: ManagedStore) => Promise<void>): Promise<void> {
  const { store, cleanup } = await make();
  try {
    await body(store);
  } finally {
    await cleanup();
  }
}

/** Polls `probe` until it returns true, failing after `timeoutMs` with `what`. */
export async function eventually(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(20);
  }
}

/** Asserts that `promise` rejects with an OrchError of `category` (and `code`, if given). */
export async function rejectsWith(promise: Promise<unknown>, category: ErrorCategory, code?: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(isOrchError(err), `expected an OrchError, got ${String(err)}`);
    assert.equal(err.category, category, `category of ${err.code}: ${err.message}`);
    if (code !== undefined) assert.equal(err.code, code, err.message);
    return true;
  });
}

export function rvOf(object: StoredObject): string {
  const metadata = object.metadata as Record<string, unknown> | undefined;
  const rv = metadata?.resourceVersion;
  assert.equal(typeof rv, 'string', `resourceVersion of ${JSON.stringify(object)}`);
  return rv as string;
}

export function nameOf(object: StoredObject): string {
  const metadata = object.metadata as Record<string, unknown> | undefined;
  return String(metadata?.name);
}

export function thing(name: string, extra: Record<string, unknown> = {}): StoredObject {
  return { kind: 'Thing', metadata: { name, uid: `uid-${name}` }, spec: { n: 0 }, ...extra };
}

/** A watch that records its events. */
export class Recorder {
  readonly events: WatchEvent[] = [];
  watch: Watch | undefined;

  static async start(store: ManagedStore, keyOrPrefix: string, options: Omit<WatchOptions, 'onEvent'> = {}): Promise<Recorder> {
    const recorder = new Recorder();
    recorder.watch = await store.watch(keyOrPrefix, {
      ...options,
      onEvent: (event) => {
        recorder.events.push(event);
      },
    });
    return recorder;
  }

  /** Events other than BOOKMARK, as `TYPE name rv`. */
  changes(): string[] {
    return this.events.flatMap((e) =>
      e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED' ? [`${e.type} ${nameOf(e.object)} ${rvOf(e.object)}`] : [],
    );
  }

  bookmarks(): number[] {
    return this.events.flatMap((e) => (e.type === 'BOOKMARK' ? [Number(e.resourceVersion)] : []));
  }

  async waitForChanges(count: number, timeoutMs = 10_000): Promise<string[]> {
    await eventually(`${count} watch events (have: ${this.changes().join(', ')})`, () => this.changes().length >= count, timeoutMs);
    return this.changes();
  }

  async close(): Promise<void> {
    await this.watch?.close();
  }
}
