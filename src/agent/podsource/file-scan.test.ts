import assert from 'node:assert/strict';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';

import type { NodePod } from '../../api/pod/index.js';

import { createManifestCache, scanManifestPath, type ScanContext, type ScanResult } from './file-scan.js';
import { makeTempDir, podYAML, type TempDir } from './fixtures.js';

let dir: TempDir;

beforeEach(async () => {
  dir = await makeTempDir();
});
afterEach(async () => {
  await dir.remove();
});

/** A scan context that counts parses: each valid manifest parsed asks the clock once. */
class CountingContext implements ScanContext {
  parses = 0;
  readonly cache = createManifestCache();
  readonly clock = {
    now: (): number => {
      this.parses++;
      return Date.parse('2026-01-02T03:04:05.678Z');
    },
  };
  constructor(
    readonly nodeName = 'node1',
    /** Far enough ahead that no file counts as just changed. */
    readonly fileClockMs: () => number = () => Date.now() + 60_000,
  ) {}
}

function podsOf(result: ScanResult): readonly NodePod[] {
  assert.ok(result.kind === 'dir' || result.kind === 'file', `unexpected scan result ${result.kind}`);
  return result.pods;
}

function namesOf(result: ScanResult): string[] {
  return podsOf(result).map((p) => p.metadata.name);
}

function imageOf(result: ScanResult, name: string): string | undefined {
  return podsOf(result).find((p) => p.metadata.name === name)?.spec?.containers[0]?.image;
}

void describe('scanManifestPath remembers manifests', () => {
  void it('does not parse unchanged files again, and gives the same pods', async () => {
    await writeFile(join(dir.path, 'a.yaml'), podYAML('a'));
    await writeFile(join(dir.path, 'b.yaml'), podYAML('b'));
    const ctx = new CountingContext();
    const first = await scanManifestPath(dir.path, ctx);
    assert.equal(ctx.parses, 2);
    const second = await scanManifestPath(dir.path, ctx);
    assert.equal(ctx.parses, 2, 'unchanged files were parsed again');
    assert.deepEqual(second, first);
  });

  void it('parses again exactly the files that changed, were replaced or were added', async () => {
    const a = join(dir.path, 'a.yaml');
    const b = join(dir.path, 'b.yaml');
    await writeFile(a, podYAML('a'));
    await writeFile(b, podYAML('b'));
    const ctx = new CountingContext();
    await scanManifestPath(dir.path, ctx);
    assert.equal(ctx.parses, 2);

    // Rewritten in place (another size: a same-size rewrite within one clock tick is what the racy window is for).
    await writeFile(a, podYAML('a', { image: 'busybox:latest' }));
    let result = await scanManifestPath(dir.path, ctx);
    assert.equal(ctx.parses, 3);
    assert.equal(imageOf(result, 'a-node1'), 'busybox:latest');

    // Replaced through a rename: a new inode.
    await writeFile(join(dir.path, '.tmp'), podYAML('b', { image: 'busybox:1.38' }));
    await rename(join(dir.path, '.tmp'), b);
    await writeFile(join(dir.path, 'c.yaml'), podYAML('c'));
    result = await scanManifestPath(dir.path, ctx);
    assert.equal(ctx.parses, 5);
    assert.equal(imageOf(result, 'b-node1'), 'busybox:1.38');
    assert.deepEqual(namesOf(result), ['a-node1', 'b-node1', 'c-node1']);
  });

  void it('forgets removed files, and a file added again under the same name is read', async () => {
    const a = join(dir.path, 'a.yaml');
    await writeFile(a, podYAML('a'));
    await writeFile(join(dir.path, 'b.yaml'), podYAML('b'));
    const ctx = new CountingContext();
    await scanManifestPath(dir.path, ctx);
    assert.equal(ctx.cache.size, 2);
    await rm(a);
    assert.deepEqual(namesOf(await scanManifestPath(dir.path, ctx)), ['b-node1']);
    assert.equal(ctx.cache.size, 1);
    await writeFile(a, podYAML('a', { image: 'busybox:1.37' }));
    const result = await scanManifestPath(dir.path, ctx);
    assert.equal(imageOf(result, 'a-node1'), 'busybox:1.37');
    assert.equal(ctx.parses, 3);
    await rm(dir.path, { recursive: true });
    assert.deepEqual(await scanManifestPath(dir.path, ctx), { kind: 'missing' });
    assert.equal(ctx.cache.size, 0);
  });

  void it('does not remember files changed just now (file times are coarse)', async () => {
    await writeFile(join(dir.path, 'a.yaml'), podYAML('a'));
    const ctx = new CountingContext('node1', () => 0); // every file looks changed in the future
    await scanManifestPath(dir.path, ctx);
    await scanManifestPath(dir.path, ctx);
    assert.equal(ctx.parses, 2);
  });

  void it('hands out copies: changing a pod does not change the next scan', async () => {
    await writeFile(join(dir.path, 'a.yaml'), podYAML('a'));
    const ctx = new CountingContext();
    const first = podsOf(await scanManifestPath(dir.path, ctx));
    const pod = first[0];
    assert.ok(pod?.spec !== undefined);
    pod.spec.containers[0]!.image = 'changed';
    assert.equal(imageOf(await scanManifestPath(dir.path, ctx), 'a-node1'), 'busybox:1.36');
    assert.equal(ctx.parses, 1);
  });

  void it('parses again for another node name', async () => {
    await writeFile(join(dir.path, 'a.yaml'), podYAML('a'));
    await scanManifestPath(dir.path, new CountingContext('node1'));
    const other = new CountingContext('node2');
    assert.deepEqual(namesOf(await scanManifestPath(dir.path, other)), ['a-node2']);
    assert.equal(other.parses, 1);
  });

  void it('remembers rejected manifests with the same problems, until they are fixed', async () => {
    const a = join(dir.path, 'a.yaml');
    await writeFile(a, 'kind: Pod\nmetadata: {}\n');
    const ctx = new CountingContext();
    const first = await scanManifestPath(dir.path, ctx);
    const second = await scanManifestPath(dir.path, ctx);
    assert.ok(first.kind === 'dir' && second.kind === 'dir');
    assert.equal(first.rejected.length, 1);
    assert.deepEqual(second.rejected, first.rejected);
    await writeFile(a, podYAML('a'));
    const fixed = await scanManifestPath(dir.path, ctx);
    assert.ok(fixed.kind === 'dir');
    assert.deepEqual(fixed.rejected, []);
    assert.deepEqual(namesOf(fixed), ['a-node1']);
  });

  void it('a single-file path: remembered, re-read on change, and a directory in its place is listed', async () => {
    const path = join(dir.path, 'pod.yaml');
    await writeFile(path, podYAML('a'));
    const ctx = new CountingContext();
    assert.deepEqual(namesOf(await scanManifestPath(path, ctx)), ['a-node1']);
    assert.deepEqual(namesOf(await scanManifestPath(path, ctx)), ['a-node1']);
    assert.equal(ctx.parses, 1);
    await rm(path);
    assert.deepEqual(await scanManifestPath(path, ctx), { kind: 'missing' });
    await mkdir(path);
    await writeFile(join(path, 'b.yaml'), podYAML('b'));
    assert.deepEqual(namesOf(await scanManifestPath(path, ctx)), ['b-node1']);
    assert.equal(ctx.parses, 2);
  });
});
