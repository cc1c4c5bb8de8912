import assert from 'node:assert/strict';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { waitFor } from '../../../test/helpers/wait.js';
import { FakeClock } from '../../api/fake-clock.js';
import { FakeLogger } from '../logging/testing.js';
import { UpdateRecorder, perTestDir, podYAML } from './fixtures.js';
import { createPodConfig, type PodConfig, type PodConfigOptions } from './pod-config.js';

const HOUR_MS = 3_600_000;
const DEADLINE = { timeoutMs: 20_000, intervalMs: 20 };

const dir = perTestDir();
const cleanups = dir.cleanups;

interface Started {
  readonly config: PodConfig;
  readonly recorder: UpdateRecorder;
  readonly logger: FakeLogger;
}

/** A pod config over `path` whose re-list is an hour away unless overridden: changes must come from notifications. */
async function start(path: string, overrides: Partial<PodConfigOptions> = {}): Promise<Started> {
  const logger = new FakeLogger();
  const config = createPodConfig({
    nodeName: 'node1',
    staticPodPath: path,
    fileCheckFrequencyMs: HOUR_MS,
    staticPodURL: '',
    staticPodURLHeader: {},
    httpCheckFrequencyMs: HOUR_MS,
    logger,
    clock: new FakeClock(),
    ...overrides,
  });
  cleanups.push(() => config.stop());
  const recorder = new UpdateRecorder();
  config.subscribe(recorder.listener);
  await config.start();
  return { config, recorder, logger };
}

/** Writes through a dot-file and a rename, so that no scan sees a half-written file. */
async function put(path: string, text: string): Promise<void> {
  const tmp = join(path, '..', `.tmp-${Math.random().toString(16).slice(2)}`);
  await writeFile(tmp, text);
  await rename(tmp, path);
}

function uidOf(recorder: UpdateRecorder, name: string): string | undefined {
  return recorder.byName(name)?.metadata.uid;
}

void describe('file source (directory)', () => {
  void it('starts ready with an empty directory, and adds a new file at once through notifications', async () => {
    const { config, recorder } = await start(dir.path);
    assert.equal(config.sourcesReady(), true);
    assert.deepEqual(recorder.updates.map((u) => [u.op, u.source, u.pods.length]), [['ADD', 'file', 0]]);
    await put(join(dir.path, 'web.yaml'), podYAML('web'));
    await waitFor('ADD of web-node1', () => recorder.names('ADD').includes('web-node1'), DEADLINE);
    const pod = recorder.byName('web-node1')!;
    assert.equal(pod.spec!.nodeName, 'node1');
    assert.equal(pod.metadata.annotations!['orch.io/config.source'], 'file');
  });

  void it('replaces the pod (REMOVE old UID, ADD new) when a file changes, and removes it when the file goes', async () => {
    await put(join(dir.path, 'web.yaml'), podYAML('web'));
    const { recorder } = await start(dir.path);
    const first = uidOf(recorder, 'web-node1');
    assert.ok(first !== undefined);
    await put(join(dir.path, 'web.yaml'), podYAML('web', { image: 'busybox:1.37' }));
    await waitFor('the new version', () => {
      const uid = uidOf(recorder, 'web-node1');
      return uid !== undefined && uid !== first;
    }, DEADLINE);
    const removed = recorder.updates.filter((u) => u.op === 'REMOVE').flatMap((u) => u.pods.map((p) => p.metadata.uid));
    assert.deepEqual(removed, [first]);
    assert.equal(recorder.byName('web-node1')!.spec!.containers[0]!.image, 'busybox:1.37');
    await rm(join(dir.path, 'web.yaml'));
    await waitFor('REMOVE of web-node1', () => recorder.currentNames().length === 0, DEADLINE);
  });

  void it('ignores dot-files and subdirectories', async () => {
    await put(join(dir.path, '.hidden.yaml'), podYAML('hidden'));
    await mkdir(join(dir.path, 'sub'));
    await put(join(dir.path, 'sub', 'nested.yaml'), podYAML('nested'));
    await put(join(dir.path, 'web.yaml'), podYAML('web'));
    const { recorder } = await start(dir.path);
    assert.deepEqual(recorder.currentNames(), ['web-node1']);
    await put(join(dir.path, '.hidden2.yaml'), podYAML('hidden2'));
    await put(join(dir.path, 'db.yaml'), podYAML('db'));
    await waitFor('ADD of db-node1', () => recorder.names('ADD').includes('db-node1'), DEADLINE);
    assert.deepEqual(recorder.currentNames(), ['db-node1', 'web-node1']);
  });

  void it('logs a bad manifest once with its file and every problem, leaving the other pods alone', async () => {
    await put(join(dir.path, 'good.yaml'), podYAML('good'));
    await put(join(dir.path, 'bad.yaml'), podYAML('bad', { containerName: 'Main', restartPolicy: 'Sometimes' }));
    await put(join(dir.path, 'broken.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {name: [x\n');
    const { recorder, logger } = await start(dir.path);
    assert.deepEqual(recorder.currentNames(), ['good-node1']);
    const bad = logger.matching(join(dir.path, 'bad.yaml'));
    assert.equal(bad.length, 1, logger.texts().join('\n'));
    assert.match(bad[0]!, /spec\.containers\[0\]\.name: \\"Main\\" must be a lowercase DNS-1123 label/);
    assert.match(bad[0]!, /spec\.restartPolicy: \\"Sometimes\\" is not supported/);
    assert.match(logger.matching(join(dir.path, 'broken.yaml'))[0]!, /broken\.yaml: line \d+:\d+: /);
    // Another scan does not log the same problems again.
    await put(join(dir.path, 'other.yaml'), podYAML('other'));
    await waitFor('ADD of other-node1', () => recorder.names('ADD').includes('other-node1'), DEADLINE);
    assert.equal(logger.matching(join(dir.path, 'bad.yaml')).length, 1);
  });

  void it('keeps the first of two files defining the same pod, naming both files', async () => {
    await put(join(dir.path, 'a.yaml'), podYAML('web', { image: 'busybox:a' }));
    await put(join(dir.path, 'b.yaml'), podYAML('web', { image: 'busybox:b' }));
    const { recorder, logger } = await start(dir.path);
    assert.deepEqual(recorder.currentNames(), ['web-node1']);
    assert.equal(recorder.byName('web-node1')!.spec!.containers[0]!.image, 'busybox:a');
    assert.equal(logger.matching(join(dir.path, 'b.yaml'), `already defined by ${join(dir.path, 'a.yaml')}`).length, 1);
  });

  void it('follows the directory disappearing, reappearing and being replaced', async () => {
    const path = join(dir.path, 'manifests');
    const { config, recorder, logger } = await start(path);
    assert.equal(config.sourcesReady(), true);
    assert.equal(logger.matching('does not exist').length, 1);
    const staged = join(dir.path, 'staged');
    await mkdir(staged);
    await put(join(staged, 'web.yaml'), podYAML('web'));
    await rename(staged, path);
    await waitFor('ADD of web-node1', () => recorder.currentNames().includes('web-node1'), DEADLINE);
    await put(join(path, 'db.yaml'), podYAML('db'));
    await waitFor('ADD of db-node1', () => recorder.currentNames().includes('db-node1'), DEADLINE);
    await rm(path, { recursive: true });
    await waitFor('every pod removed', () => recorder.currentNames().length === 0, DEADLINE);
    await mkdir(staged);
    await put(join(staged, 'api.yaml'), podYAML('api'));
    await rename(staged, path);
    await waitFor('ADD of api-node1', () => recorder.currentNames().includes('api-node1'), DEADLINE);
    await put(join(path, 'cache.yaml'), podYAML('cache'));
    await waitFor('ADD of cache-node1 in the new directory', () => recorder.currentNames().includes('cache-node1'), DEADLINE);
    assert.equal(logger.matching('does not exist').length, 2);
  });
});

void describe('file source (single file)', () => {
  void it('reads one file, follows its edits and its removal', async () => {
    const file = join(dir.path, 'web.yaml');
    await put(file, podYAML('web'));
    const { recorder } = await start(file);
    const first = uidOf(recorder, 'web-node1');
    assert.ok(first !== undefined);
    await put(join(dir.path, 'other.yaml'), podYAML('other'));
    await put(file, podYAML('web', { image: 'busybox:1.37' }));
    await waitFor('the new version', () => {
      const uid = uidOf(recorder, 'web-node1');
      return uid !== undefined && uid !== first;
    }, DEADLINE);
    assert.deepEqual(recorder.currentNames(), ['web-node1']);
    await rm(file);
    await waitFor('REMOVE of web-node1', () => recorder.currentNames().length === 0, DEADLINE);
  });

  void it('keeps the last pod when the file turns bad, as upstream', async () => {
    const file = join(dir.path, 'web.yaml');
    await put(file, podYAML('web'));
    const { recorder, logger } = await start(file);
    await put(file, podYAML('web', { restartPolicy: 'Sometimes' }));
    await waitFor('the rejection logged', () => logger.matching(file, 'restartPolicy').length === 1, DEADLINE);
    assert.deepEqual(recorder.currentNames(), ['web-node1']);
    assert.deepEqual(recorder.names('REMOVE'), []);
  });

  void it('is not ready while the only file is bad', async () => {
    const file = join(dir.path, 'web.yaml');
    await put(file, 'kind: Deployment\napiVersion: apps/v1\n');
    const { config, logger } = await start(file);
    assert.equal(config.sourcesReady(), false);
    assert.equal(logger.matching(file, 'Deployment').length, 1);
  });
});
