import assert from 'node:assert/strict';
import { watch } from 'node:fs';
import { readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { FakeClock } from '../../api/fake-clock.js';
import type { NodePod } from '../../api/pod/index.js';

import { waitFor } from '../../../test/helpers/wait.js';
import { FileSource } from './file-source.js';
import { FakeLogger } from '../logging/testing.js';
import { RACY_WINDOW_MS } from './file-scan.js';
import { perTestDir, podYAML } from './fixtures.js';

const HOUR_MS = 3_600_000;
const DEADLINE = { timeoutMs: 20_000, intervalMs: 10 };
/** Files whose notifications the tests' watch drops: only a full scan finds them. */
const UNSEEN = 'unseen';

const dir = perTestDir();
const cleanups = dir.cleanups;

interface Started {
  readonly snapshots: (readonly NodePod[])[];
  /** Each full scan: whether it handled a snapshot. */
  readonly scans: boolean[];
  readonly logger: FakeLogger;
  /** The re-list timer's clock. */
  readonly clock: FakeClock;
}

interface StartOptions {
  /** Milliseconds between re-lists (default an hour: none during the test). */
  readonly checkIntervalMs?: number;
  /** The host's clock file times are compared with (default the real one). */
  readonly hostClock?: FakeClock;
  /** Drop every notification, not only those of UNSEEN files: only re-lists see changes. */
  readonly deaf?: boolean;
}

/** A file source over the temp dir whose watch drops the notifications of UNSEEN files (of all files when deaf). */
async function start(options: StartOptions = {}): Promise<Started> {
  const snapshots: (readonly NodePod[])[] = [];
  const scans: boolean[] = [];
  const logger = new FakeLogger();
  const clock = new FakeClock();
  const source = new FileSource({
    path: dir.path,
    nodeName: 'node1',
    checkIntervalMs: options.checkIntervalMs ?? HOUR_MS,
    onSnapshot: (pods) => snapshots.push(pods),
    onFullScan: (handled) => scans.push(handled),
    logger,
    clock,
    ...(options.hostClock === undefined ? {} : { hostClock: options.hostClock }),
    watch: (path, onEvent) =>
      watch(path, { persistent: false }, (_event, name) => {
        if (options.deaf !== true && (name === null || !name.startsWith(UNSEEN))) onEvent(name);
      }),
  });
  cleanups.push(() => source.stop());
  await source.start();
  return { snapshots, scans, logger, clock };
}

/**
 * Moves the re-list clock to the next re-list and waits for that full scan to end; resolves to
 * whether it handled a snapshot. The clock moves only once the scan before is done, so each
 * re-list is one scan whatever the machine's speed.
 */
async function relist(started: Started): Promise<boolean> {
  const next = started.clock.pending()[0];
  assert.ok(next !== undefined, 'a re-list is pending');
  const before = started.scans.length;
  await started.clock.advance(next.dueAt - started.clock.now());
  await waitFor('the re-list\'s scan', () => started.scans.length > before, DEADLINE);
  assert.equal(started.scans.length, before + 1, 'one full scan per re-list');
  return started.scans[before] ?? false;
}

/** The latest change time (ms, the host's clock) of the directory's files. */
async function lastChangeMs(): Promise<number> {
  const times = await Promise.all((await readdir(dir.path)).map(async (name) => {
    const info = await stat(join(dir.path, name));
    return Math.max(info.mtimeMs, info.ctimeMs);
  }));
  return Math.max(...times);
}

/** Writes `.<name>.tmp`, then renames it to `<name>`, as manifest writers should. */
async function put(name: string, text: string): Promise<void> {
  const tmp = join(dir.path, `.${name}.tmp`);
  await writeFile(tmp, text);
  await rename(tmp, join(dir.path, name));
}

function latest(started: Started): readonly NodePod[] {
  return started.snapshots.at(-1) ?? [];
}

function namesOf(pods: readonly NodePod[]): string[] {
  return pods.map((p) => p.metadata.name).sort();
}

function imageOf(pods: readonly NodePod[], name: string): string | undefined {
  return pods.find((p) => p.metadata.name === name)?.spec?.containers[0]?.image;
}

/** True when no snapshot so far came from a full scan (which would have found the UNSEEN file). */
function noFullScanSince(started: Started, from: number): boolean {
  return started.snapshots.slice(from).every((pods) => !namesOf(pods).includes(`${UNSEEN}-node1`));
}

/** The problems logged each time `file` was rejected. */
function rejections(logger: FakeLogger, file: string): string[] {
  return logger.lines.filter((l) => l.msg === `rejected static pod manifest ${file}`).map((l) => JSON.stringify(l.fields.problems));
}

async function putMany(count: number): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `p${String(i).padStart(3, '0')}`);
  await Promise.all(names.map((n) => put(`${n}.yaml`, podYAML(n))));
  return names.map((n) => `${n}-node1`);
}

void describe('file source: a notified file is read again alone', () => {
  void it('adds, changes and removes one file among many, the other pods as they were', async () => {
    const initial = await putMany(20);
    const started = await start();
    assert.deepEqual(namesOf(latest(started)), initial);
    const before = new Map(latest(started).map((p) => [p.metadata.name, p.metadata.uid]));
    const from = started.snapshots.length;
    await writeFile(join(dir.path, `${UNSEEN}.yaml`), podYAML(UNSEEN));

    await put('new.yaml', podYAML('new'));
    await waitFor('new-node1', () => namesOf(latest(started)).includes('new-node1'), DEADLINE);
    assert.deepEqual(namesOf(latest(started)), [...initial, 'new-node1'].sort());

    await put('p005.yaml', podYAML('p005', { image: 'busybox:1.37' }));
    await waitFor('the new p005', () => imageOf(latest(started), 'p005-node1') === 'busybox:1.37', DEADLINE);

    await rm(join(dir.path, 'p007.yaml'));
    await waitFor('p007-node1 gone', () => !namesOf(latest(started)).includes('p007-node1'), DEADLINE);

    const after = latest(started);
    assert.deepEqual(namesOf(after), [...initial.filter((n) => n !== 'p007-node1'), 'new-node1'].sort());
    for (const pod of after) {
      const name = pod.metadata.name;
      if (name !== 'p005-node1' && name !== 'new-node1') assert.equal(pod.metadata.uid, before.get(name), `${name} changed`);
    }
    assert.ok(noFullScanSince(started, from), 'a full scan ran');
  });

  void it('takes a file renamed into place, and ignores the dot-file it was written as', async () => {
    await putMany(3);
    const started = await start();
    const from = started.snapshots.length;
    await writeFile(join(dir.path, `${UNSEEN}.yaml`), podYAML(UNSEEN));
    await writeFile(join(dir.path, '.x.yaml.tmp'), podYAML('x'));
    await rename(join(dir.path, '.x.yaml.tmp'), join(dir.path, 'x.yaml'));
    await waitFor('x-node1', () => namesOf(latest(started)).includes('x-node1'), DEADLINE);
    assert.deepEqual(namesOf(latest(started)), ['p000-node1', 'p001-node1', 'p002-node1', 'x-node1']);
    assert.ok(noFullScanSince(started, from), 'a full scan ran');
  });

  void it('keeps the duplicate-name rule across updates: the file first in name order owns the pod', async () => {
    await put('b.yaml', podYAML('web', { image: 'busybox:b' }));
    await put('c.yaml', podYAML('web', { image: 'busybox:c' }));
    const started = await start();
    const { logger } = started;
    const a = join(dir.path, 'a.yaml');
    const b = join(dir.path, 'b.yaml');
    const c = join(dir.path, 'c.yaml');
    const definedBy = (owner: string) => (problems: string) => problems.includes(`already defined by ${owner}`);
    assert.equal(imageOf(latest(started), 'web-node1'), 'busybox:b');
    assert.equal(rejections(logger, c).filter(definedBy(b)).length, 1);

    // A file earlier in name order takes the pod from b.yaml.
    await put('a.yaml', podYAML('web', { image: 'busybox:a' }));
    await waitFor('web from a.yaml', () => imageOf(latest(started), 'web-node1') === 'busybox:a', DEADLINE);
    assert.deepEqual(namesOf(latest(started)), ['web-node1']);
    assert.equal(rejections(logger, b).filter(definedBy(a)).length, 1);
    assert.equal(rejections(logger, c).filter(definedBy(a)).length, 1);

    // Removing the earlier owners lets the later file's pod in.
    await rm(a);
    await waitFor('web from b.yaml', () => imageOf(latest(started), 'web-node1') === 'busybox:b', DEADLINE);
    await rm(b);
    await waitFor('web from c.yaml', () => imageOf(latest(started), 'web-node1') === 'busybox:c', DEADLINE);
    assert.deepEqual(namesOf(latest(started)), ['web-node1']);
    // Each rejection was logged once per distinct problem list: c.yaml by b.yaml, by a.yaml, by b.yaml again.
    assert.equal(rejections(logger, b).length, 1);
    assert.deepEqual(rejections(logger, c).map((p) => (definedBy(a)(p) ? 'a' : definedBy(b)(p) ? 'b' : p)), ['b', 'a', 'b']);
  });

  void it('delivers a burst of 110 files renamed into place, without a full scan', async () => {
    const started = await start();
    const from = started.snapshots.length;
    await writeFile(join(dir.path, `${UNSEEN}.yaml`), podYAML(UNSEEN));
    const names = await putMany(110);
    await waitFor('all 110 pods', () => latest(started).length === 110, DEADLINE);
    assert.deepEqual(namesOf(latest(started)), names);
    assert.ok(noFullScanSince(started, from), 'a full scan ran');
  });

  void it('delivers many files named at once in chunks of 8, 16, 32…, each snapshot holding every file', async () => {
    const snapshots: (readonly NodePod[])[] = [];
    let notify: ((name: string | null) => void) | undefined;
    const source = new FileSource({
      path: dir.path,
      nodeName: 'node1',
      checkIntervalMs: HOUR_MS,
      onSnapshot: (pods) => snapshots.push(pods),
      logger: new FakeLogger(),
      clock: new FakeClock(),
      // Only the notifications the test makes itself.
      watch: (path, onEvent) => {
        if (path === dir.path) notify = onEvent;
        return watch(path, { persistent: false }, () => undefined);
      },
    });
    cleanups.push(() => source.stop());
    await put('a.yaml', podYAML('a'));
    await source.start();
    assert.deepEqual(namesOf(snapshots.at(-1) ?? []), ['a-node1']);
    const from = snapshots.length;
    const names = await putMany(30);
    assert.ok(notify !== undefined, 'the directory is watched');
    for (const n of names) notify(`${n.replace(/-node1$/, '')}.yaml`);
    await waitFor('all 31 pods', () => (snapshots.at(-1) ?? []).length === 31, DEADLINE);
    assert.deepEqual(snapshots.slice(from).map((pods) => pods.length), [1 + 8, 1 + 8 + 16, 31]);
    assert.deepEqual(namesOf(snapshots.at(-1) ?? []), ['a-node1', ...names].sort());
  });

  void it('rejects a file that becomes invalid, logs it once, and leaves the other pods alone', async () => {
    await putMany(3);
    const started = await start();
    const { logger } = started;
    const bad = join(dir.path, 'p001.yaml');
    await put('p001.yaml', podYAML('p001', { restartPolicy: 'Sometimes' }));
    await waitFor('p001-node1 gone', () => !namesOf(latest(started)).includes('p001-node1'), DEADLINE);
    assert.deepEqual(namesOf(latest(started)), ['p000-node1', 'p002-node1']);
    assert.equal(logger.matching(bad, 'restartPolicy').length, 1);
    // Another update delivers the same rejection without logging it again.
    await put('p002.yaml', podYAML('p002', { image: 'busybox:1.37' }));
    await waitFor('the new p002', () => imageOf(latest(started), 'p002-node1') === 'busybox:1.37', DEADLINE);
    assert.equal(logger.matching(bad, 'restartPolicy').length, 1);
    // Fixed: its pod is back.
    await put('p001.yaml', podYAML('p001'));
    await waitFor('p001-node1 back', () => namesOf(latest(started)).includes('p001-node1'), DEADLINE);
  });

  void it('still finds a file whose notification was missed, at the periodic re-list', async () => {
    const started = await start({ checkIntervalMs: 100 });
    const scans = started.scans.length;
    await writeFile(join(dir.path, `${UNSEEN}.yaml`), podYAML(UNSEEN));
    await started.clock.advance(99);
    assert.equal(started.scans.length, scans, 'no re-list before its period');
    assert.equal(await relist(started), true);
    assert.ok(namesOf(latest(started)).includes(`${UNSEEN}-node1`), 'the first re-list finds the file');
  });

  void it('delivers nothing at a periodic re-list that finds every file as it was, and the change when one is not', async () => {
    const host = new FakeClock(0);
    const started = await start({ checkIntervalMs: 20, hostClock: host, deaf: true });
    await putMany(5);
    const written = await lastChangeMs();
    host.set(written + RACY_WINDOW_MS - 1);
    assert.equal(await relist(started), true, 'the new files');
    assert.equal(latest(started).length, 5);
    // Files changed less than RACY_WINDOW_MS ago (on the host's clock) are read again at each
    // scan, a write may still be under way; after that, a scan finds them as they were.
    assert.equal(await relist(started), true, 'files changed within the window are read again');
    host.set(written + RACY_WINDOW_MS);
    assert.equal(await relist(started), true, 'read once more, out of the window: remembered now');
    const delivered = started.snapshots.length;
    for (let i = 0; i < 10; i++) assert.equal(await relist(started), false, `re-list ${i} found every file as it was`);
    assert.equal(started.snapshots.length, delivered, 'nothing delivered by the quiet re-lists');
    await writeFile(join(dir.path, `${UNSEEN}.yaml`), podYAML(UNSEEN));
    host.set((await lastChangeMs()) + RACY_WINDOW_MS);
    assert.equal(await relist(started), true);
    assert.ok(namesOf(started.snapshots[delivered] ?? []).includes(`${UNSEEN}-node1`), 'the first snapshot after the quiet scans holds the new file');
  });
});
