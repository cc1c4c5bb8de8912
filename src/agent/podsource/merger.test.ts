import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { isInvalid } from '../../api/errors.js';
import { CONFIG_MIRROR_ANNOTATION, CONFIG_SEEN_ANNOTATION, CONFIG_SOURCE_ANNOTATION } from '../../api/pod/index.js';
import { FakeLogger } from '../logging/testing.js';
import { UpdateRecorder, fixedClock, podObject } from './fixtures.js';
import { PodMerger } from './merger.js';

function setup(sources: string[] = ['file', 'api']): { merger: PodMerger; recorder: UpdateRecorder; logger: FakeLogger } {
  const logger = new FakeLogger();
  const merger = new PodMerger({ sources, logger, clock: fixedClock() });
  const recorder = new UpdateRecorder();
  merger.subscribe(recorder.listener);
  return { merger, recorder, logger };
}

function ops(recorder: UpdateRecorder): string[] {
  return recorder.updates.map((u) => `${u.op}:${u.source}:${u.pods.map((p) => p.metadata.uid).join(',')}`);
}

void describe('PodMerger', () => {
  void it('adds new UIDs, stamping source and first-seen time', () => {
    const { merger, recorder } = setup();
    merger.pushSnapshot('api', [podObject('a', 'u1'), podObject('b', 'u2')]);
    assert.deepEqual(ops(recorder), ['ADD:api:u1,u2']);
    const pod = recorder.updates[0]!.pods[0]!;
    assert.equal(pod.metadata.annotations![CONFIG_SOURCE_ANNOTATION], 'api');
    assert.equal(pod.metadata.annotations![CONFIG_SEEN_ANNOTATION], '2026-01-02T03:04:05.678Z');
  });

  void it('skips the comparison of an object pushed again or of the same resourceVersion, and still sees a new version', () => {
    const { merger, recorder } = setup();
    const versioned = (rv: string, image: string) => {
      const pod = podObject('a', 'u1');
      return { ...pod, metadata: { ...pod.metadata, resourceVersion: rv }, spec: { ...pod.spec, containers: [{ name: 'c', image }] } };
    };
    const first = versioned('5', 'one');
    merger.pushSnapshot('api', [first]);
    merger.pushSnapshot('api', [first]);
    // Same UID and resourceVersion: the API server's same object (the spec differs here only to show that it is not compared).
    merger.pushSnapshot('api', [versioned('5', 'two')]);
    merger.pushSnapshot('api', [versioned('6', 'two')]);
    merger.pushSnapshot('api', [versioned('7', 'two')]);
    assert.deepEqual(ops(recorder), ['ADD:api:u1', 'UPDATE:api:u1']);
    assert.equal(recorder.updates[1]!.pods[0]!.spec!.containers[0]!.image, 'two');
  });

  void it('emits an empty ADD for a first snapshot without pods, and nothing for an unchanged one', () => {
    const { merger, recorder } = setup();
    merger.pushSnapshot('file', []);
    merger.pushSnapshot('file', []);
    merger.pushSnapshot('api', [podObject('a', 'u1')]);
    merger.pushSnapshot('api', [podObject('a', 'u1')]);
    assert.deepEqual(ops(recorder), ['ADD:file:', 'ADD:api:u1']);
  });

  void it('removes UIDs that are gone, before adding new ones', () => {
    const { merger, recorder } = setup();
    merger.pushSnapshot('file', [podObject('a', 'u1')]);
    merger.pushSnapshot('file', [podObject('a', 'u2')]);
    assert.deepEqual(ops(recorder), ['ADD:file:u1', 'REMOVE:file:u1', 'ADD:file:u2']);
  });

  void it('updates on spec, label, annotation and deletion changes, keeping the first-seen time', () => {
    const { merger, recorder } = setup();
    merger.pushSnapshot('api', [podObject('a', 'u1')]);
    const spec = podObject('a', 'u1');
    spec.spec!.containers[0]!.image = 'busybox:2';
    merger.pushSnapshot('api', [spec]);
    const labels = podObject('a', 'u1', { metadata: { name: 'a', namespace: 'default', uid: 'u1', labels: { x: 'y' } } });
    merger.pushSnapshot('api', [labels]);
    const annotated = podObject('a', 'u1', { metadata: { name: 'a', namespace: 'default', uid: 'u1', annotations: { note: 'n' } } });
    merger.pushSnapshot('api', [annotated]);
    const deleted = podObject('a', 'u1', { metadata: { name: 'a', namespace: 'default', uid: 'u1', annotations: { note: 'n' }, deletionTimestamp: '2026-01-01T00:00:00Z' } });
    merger.pushSnapshot('api', [deleted]);
    assert.deepEqual(ops(recorder), ['ADD:api:u1', 'UPDATE:api:u1', 'UPDATE:api:u1', 'UPDATE:api:u1', 'UPDATE:api:u1']);
    for (const u of recorder.updates) assert.equal(u.pods[0]!.metadata.annotations![CONFIG_SEEN_ANNOTATION], '2026-01-02T03:04:05.678Z');
  });

  void it('ignores changes of its own annotations (seen, source, mirror)', () => {
    const { merger, recorder } = setup();
    merger.pushSnapshot('file', [podObject('a', 'u1', { metadata: { name: 'a', namespace: 'default', uid: 'u1', annotations: { [CONFIG_SEEN_ANNOTATION]: 't1' } } })]);
    merger.pushSnapshot('file', [
      podObject('a', 'u1', { metadata: { name: 'a', namespace: 'default', uid: 'u1', annotations: { [CONFIG_SEEN_ANNOTATION]: 't2', [CONFIG_MIRROR_ANNOTATION]: 'x' } } }),
    ]);
    assert.deepEqual(ops(recorder), ['ADD:file:u1']);
    assert.equal(recorder.updates[0]!.pods[0]!.metadata.annotations![CONFIG_SEEN_ANNOTATION], 't1');
  });

  void it('compares annotations and specs whatever their key order, and sees one removed or changed', () => {
    const { merger, recorder } = setup();
    const meta = (annotations: Record<string, string>): { metadata: { name: string; namespace: string; uid: string; annotations: Record<string, string> } } =>
      ({ metadata: { name: 'a', namespace: 'default', uid: 'u1', annotations } });
    merger.pushSnapshot('api', [podObject('a', 'u1', meta({ x: '1', y: '2' }))]);
    const reordered = podObject('a', 'u1', meta({ y: '2', x: '1', [CONFIG_SEEN_ANNOTATION]: 't9' }));
    reordered.spec = Object.fromEntries(Object.entries(reordered.spec ?? {}).reverse()) as NonNullable<typeof reordered.spec>;
    merger.pushSnapshot('api', [reordered]);
    merger.pushSnapshot('api', [podObject('a', 'u1', meta({ x: '1' }))]);
    merger.pushSnapshot('api', [podObject('a', 'u1', meta({ x: '3' }))]);
    assert.deepEqual(ops(recorder), ['ADD:api:u1', 'UPDATE:api:u1', 'UPDATE:api:u1']);
  });

  void it('reconciles when only the status changed', () => {
    const { merger, recorder } = setup();
    merger.pushSnapshot('api', [podObject('a', 'u1', { status: { phase: 'Pending' } })]);
    merger.pushSnapshot('api', [podObject('a', 'u1', { status: { phase: 'Running' } })]);
    assert.deepEqual(ops(recorder), ['ADD:api:u1', 'RECONCILE:api:u1']);
    assert.equal(recorder.updates[1]!.pods[0]!.status!.phase, 'Running');
  });

  void it('keeps sources apart', () => {
    const { merger, recorder } = setup();
    merger.pushSnapshot('file', [podObject('a', 'u1')]);
    merger.pushSnapshot('api', [podObject('b', 'u2')]);
    merger.pushSnapshot('api', []);
    assert.deepEqual(ops(recorder), ['ADD:file:u1', 'ADD:api:u2', 'REMOVE:api:u2']);
  });

  void it('is ready once every declared source pushed', () => {
    const { merger } = setup();
    assert.equal(merger.sourcesReady(), false);
    merger.pushSnapshot('file', []);
    assert.equal(merger.sourcesReady(), false);
    merger.pushSnapshot('api', []);
    assert.equal(merger.sourcesReady(), true);
    assert.equal(new PodMerger({ sources: [], logger: new FakeLogger(), clock: fixedClock() }).sourcesReady(), true);
  });

  void it('refuses a source it was not told about', () => {
    const { merger } = setup(['file']);
    assert.throws(() => {
      merger.pushSnapshot('api', []);
    }, (err: unknown) => isInvalid(err));
  });

  void it('leaves out later duplicates of a name or UID, logging them', () => {
    const { merger, recorder, logger } = setup();
    merger.pushSnapshot('api', [podObject('a', 'u1'), podObject('a', 'u2'), podObject('b', 'u1')]);
    assert.deepEqual(ops(recorder), ['ADD:api:u1']);
    assert.equal(logger.matching('ignored pod').length, 2);
  });

  void it('replays the current pods to a late subscriber and stops after unsubscribe', () => {
    const { merger } = setup();
    merger.pushSnapshot('file', [podObject('a', 'u1')]);
    merger.pushSnapshot('api', []);
    const late = new UpdateRecorder();
    const unsubscribe = merger.subscribe(late.listener);
    assert.deepEqual(ops(late), ['ADD:file:u1']);
    unsubscribe();
    merger.pushSnapshot('file', []);
    assert.equal(late.updates.length, 1);
  });

  void it('logs a listener that throws and still calls the others', () => {
    const { merger, recorder, logger } = setup();
    merger.subscribe(() => {
      throw new Error('boom');
    });
    merger.pushSnapshot('api', [podObject('a', 'u1')]);
    assert.deepEqual(ops(recorder), ['ADD:api:u1']);
    assert.equal(logger.matching('boom').length, 1);
  });

  void it('ignores snapshots after close', () => {
    const { merger, recorder } = setup();
    merger.close();
    merger.pushSnapshot('api', [podObject('a', 'u1')]);
    assert.deepEqual(recorder.updates, []);
  });
});
