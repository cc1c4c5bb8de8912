/**
 * Test helpers of the pod sources: a recorder of pod updates, temporary directories and
 * manifest texts. Used by the tests beside this file only.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'node:test';

import { waitFor } from '../../../test/helpers/wait.js';
import { FakeClock } from '../../api/fake-clock.js';
import type { NodePod } from '../../api/pod/index.js';

import type { PodOperation, PodUpdate } from './types.js';

/** Keeps every update and the pods each source has, as a listener would. */
export class UpdateRecorder {
  readonly updates: PodUpdate[] = [];
  readonly current = new Map<string, NodePod>();

  readonly listener = (update: PodUpdate): void => {
    this.updates.push(update);
    for (const pod of update.pods) {
      const { uid } = pod.metadata;
      if (update.op === 'REMOVE') this.current.delete(uid);
      else this.current.set(uid, pod);
    }
  };

  /** Names of the pods in updates of `op` (in order). */
  names(op: PodOperation): string[] {
    return this.updates.filter((u) => u.op === op).flatMap((u) => u.pods.map((p) => p.metadata.name));
  }

  /** The current pod named `name`, if any. */
  byName(name: string): NodePod | undefined {
    return [...this.current.values()].find((p) => p.metadata.name === name);
  }

  currentNames(): string[] {
    return [...this.current.values()].map((p) => p.metadata.name).sort();
  }
}

export interface TempDir {
  readonly path: string;
  remove(): Promise<void>;
}

/**
 * Gives each test of the file a fresh temporary directory (`path`); what a test pushes on
 * `cleanups` runs after it, last first, then the directory is removed.
 */
export function perTestDir(): { readonly path: string; readonly cleanups: (() => Promise<void>)[] } {
  let current: TempDir | undefined;
  const cleanups: (() => Promise<void>)[] = [];
  beforeEach(async () => {
    current = await makeTempDir();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await current?.remove();
    current = undefined;
  });
  return {
    get path(): string {
      if (current === undefined) throw new Error('perTestDir: no test is running');
      return current.path;
    },
    cleanups,
  };
}

export async function makeTempDir(): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), 'podsource-'));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** A YAML manifest of a pod with one busybox container. */
export function podYAML(name: string, options: { image?: string; namespace?: string; containerName?: string; restartPolicy?: string } = {}): string {
  return [
    'apiVersion: v1',
    'kind: Pod',
    'metadata:',
    `  name: ${name}`,
    ...(options.namespace === undefined ? [] : [`  namespace: ${options.namespace}`]),
    'spec:',
    ...(options.restartPolicy === undefined ? [] : [`  restartPolicy: ${options.restartPolicy}`]),
    '  containers:',
    `  - name: ${options.containerName ?? 'main'}`,
    `    image: ${options.image ?? 'busybox:1.36'}`,
    '',
  ].join('\n');
}

/** A pod object with one container, for the merger's tests. */
export function podObject(name: string, uid: string, extra: Partial<NodePod> = {}): NodePod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid },
    spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] },
    ...extra,
  };
}

/**
 * Waits (polling, with a deadline) until `cond` holds, moving `clock` on to its next timer (a
 * re-list, a poll) whenever one is pending, while the source's real I/O (files, sockets) goes
 * on. Resolves to the delays of the timers it fired.
 */
export async function advanceUntil(clock: FakeClock, what: string, cond: () => boolean, timeoutMs = 5000): Promise<number[]> {
  const fired: number[] = [];
  await waitFor(what, async () => {
    if (cond()) return true;
    const next = clock.pending()[0];
    if (next !== undefined) {
      fired.push(next.delayMs);
      await clock.advance(next.dueAt - clock.now());
    }
    return cond();
  }, { timeoutMs, intervalMs: 5 });
  return fired;
}

/** A clock standing at 2026-01-02T03:04:05.678Z. */
export const fixedClock = (): FakeClock => new FakeClock(Date.parse('2026-01-02T03:04:05.678Z'));
