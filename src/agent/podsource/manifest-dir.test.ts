import assert from 'node:assert/strict';
import { rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';

import { createManifestCache, lookAtPath, scanManifestPath, type ScanContext } from './file-scan.js';
import { fixedClock, makeTempDir, podYAML, type TempDir } from './fixtures.js';
import { ManifestDirectory } from './manifest-dir.js';

let dir: TempDir;

beforeEach(async () => {
  dir = await makeTempDir();
});
afterEach(async () => {
  await dir.remove();
});

/** A context whose file clock the test sets: `at`, else `ahead` ms after now (far: no file counts as just changed). */
function contextAt(clock: { ahead: number; at?: number }): ScanContext {
  return { nodeName: 'node1', clock: fixedClock(), cache: createManifestCache(), fileClockMs: () => clock.at ?? Date.now() + clock.ahead };
}

/** 10 ms after the file's last change: within RACY_WINDOW_MS however slow the machine is. */
async function justAfterChangeOf(file: string): Promise<number> {
  const info = await stat(file);
  return Math.max(info.mtimeMs, info.ctimeMs) + 10;
}

async function open(context: ScanContext): Promise<ManifestDirectory> {
  const look = await lookAtPath(dir.path, context);
  assert.ok(look.kind === 'dir', `unexpected look ${look.kind}`);
  return new ManifestDirectory(dir.path, look.entries);
}

function names(directory: ManifestDirectory): string[] {
  return directory.snapshot().pods.map((p) => p.metadata.name);
}

void describe('ManifestDirectory', () => {
  void it('reads the named files only, and assembles as a full scan would', async () => {
    await writeFile(join(dir.path, 'a.yaml'), podYAML('a'));
    await writeFile(join(dir.path, 'b.yaml'), podYAML('b'));
    const clock = { ahead: 60_000 };
    const context = contextAt(clock);
    const directory = await open(context);
    await writeFile(join(dir.path, 'c.yaml'), podYAML('c'));
    await writeFile(join(dir.path, 'd.yaml'), podYAML('d'));
    assert.deepEqual(await directory.update(['c.yaml'], context), []);
    assert.deepEqual(names(directory), ['a-node1', 'b-node1', 'c-node1'], 'd.yaml was not named');
    await rm(join(dir.path, 'a.yaml'));
    await writeFile(join(dir.path, 'b.yaml'), podYAML('a'));
    await directory.update(['a.yaml', 'b.yaml', 'gone.yaml'], context);
    assert.deepEqual(names(directory), ['a-node1', 'c-node1']);
    await directory.update(['d.yaml'], context);
    // The same as a full scan without memory.
    assert.deepEqual({ kind: 'dir', ...directory.snapshot() }, await scanManifestPath(dir.path, contextAt(clock)));
  });

  void it('gives a name back to the file first in name order that holds it', async () => {
    await writeFile(join(dir.path, 'b.yaml'), podYAML('web', { image: 'busybox:b' }));
    const context = contextAt({ ahead: 60_000 });
    const directory = await open(context);
    await writeFile(join(dir.path, 'a.yaml'), podYAML('web', { image: 'busybox:a' }));
    await directory.update(['a.yaml'], context);
    let snapshot = directory.snapshot();
    assert.equal(snapshot.pods[0]?.spec?.containers[0]?.image, 'busybox:a');
    assert.deepEqual(snapshot.rejected.map((r) => r.file), [join(dir.path, 'b.yaml')]);
    assert.match(snapshot.rejected[0]?.problems[0] ?? '', /already defined by .*a\.yaml/);
    await rm(join(dir.path, 'a.yaml'));
    await directory.update(['a.yaml'], context);
    snapshot = directory.snapshot();
    assert.equal(snapshot.pods[0]?.spec?.containers[0]?.image, 'busybox:b');
    assert.deepEqual(snapshot.rejected, []);
  });

  void it('hands out copies', async () => {
    await writeFile(join(dir.path, 'a.yaml'), podYAML('a'));
    const directory = await open(contextAt({ ahead: 60_000 }));
    const pod = directory.snapshot().pods[0];
    assert.ok(pod?.spec !== undefined);
    pod.spec.containers[0]!.image = 'changed';
    assert.equal(directory.snapshot().pods[0]?.spec?.containers[0]?.image, 'busybox:1.36');
  });

  void it('holds back the rejection of a file changed just now, keeping its last outcome', async () => {
    const a = join(dir.path, 'a.yaml');
    await writeFile(a, podYAML('a'));
    const clock: { ahead: number; at?: number } = { ahead: 60_000 };
    const context = contextAt(clock);
    const directory = await open(context);
    await writeFile(a, ''); // truncated by a writer not done yet
    clock.at = await justAfterChangeOf(a);
    assert.deepEqual(await directory.update(['a.yaml'], context), ['a.yaml']);
    assert.deepEqual(names(directory), ['a-node1']);
    // A valid change is taken at once.
    await writeFile(a, podYAML('a', { image: 'busybox:1.37' }));
    assert.deepEqual(await directory.update(['a.yaml'], context), []);
    assert.equal(directory.snapshot().pods[0]?.spec?.containers[0]?.image, 'busybox:1.37');
    // Once the window has passed, the rejection stands.
    await writeFile(a, '');
    delete clock.at;
    assert.deepEqual(await directory.update(['a.yaml'], context), []);
    assert.deepEqual(names(directory), []);
    assert.match(directory.snapshot().rejected[0]?.problems[0] ?? '', /the file is empty/);
  });
});
