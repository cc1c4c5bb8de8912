import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { CONFIG_HASH_ANNOTATION, CONFIG_SEEN_ANNOTATION, CONFIG_SOURCE_ANNOTATION } from '../../api/pod/index.js';
import { canonicalJSON } from './canonical-json.js';
import { fixedClock, podObject } from './fixtures.js';
import { FakeClock } from '../../api/fake-clock.js';
import { formatRFC3339, prepareStaticPod, type StaticOrigin, type StaticPodContext } from './static.js';

const FILE: StaticOrigin = { kind: 'file', path: '/etc/orch/manifests/web.yaml' };
const HTTP: StaticOrigin = { kind: 'http', url: 'http://127.0.0.1:8080/pods' };

function context(origin: StaticOrigin = FILE, nodeName = 'node1'): StaticPodContext {
  return { nodeName, origin, clock: fixedClock() };
}

function manifestPod(): Pod {
  return { ...podObject('web', ''), metadata: { name: 'web' } };
}

function prepared(pod: Pod, ctx: StaticPodContext = context()): Pod {
  const result = prepareStaticPod(pod, ctx);
  assert.ok(result.ok, JSON.stringify(result));
  return result.pod;
}

void describe('prepareStaticPod', () => {
  void it('names, binds, annotates and defaults a file pod', () => {
    const pod = prepared(manifestPod());
    const meta = pod.metadata!;
    assert.equal(meta.name, 'web-node1');
    assert.equal(meta.namespace, 'default');
    assert.match(meta.uid!, /^[0-9a-f]{32}$/);
    assert.equal(meta.annotations![CONFIG_HASH_ANNOTATION], meta.uid);
    assert.equal(meta.annotations![CONFIG_SOURCE_ANNOTATION], 'file');
    assert.equal(meta.annotations![CONFIG_SEEN_ANNOTATION], '2026-01-02T03:04:05.678Z');
    assert.equal(pod.spec!.nodeName, 'node1');
    assert.equal(pod.spec!.restartPolicy, 'Always');
    assert.deepEqual(pod.spec!.tolerations, [{ operator: 'Exists', effect: 'NoExecute' }]);
    assert.equal(pod.status!.phase, 'Pending');
  });

  void it('gives the same UID to identical content, whatever the key order', () => {
    const a = prepared(manifestPod());
    const reordered = JSON.parse(JSON.stringify({ spec: manifestPod().spec, metadata: manifestPod().metadata, kind: 'Pod', apiVersion: 'v1' })) as Pod;
    const b = prepared(reordered, { ...context(), clock: new FakeClock(0) });
    assert.equal(a.metadata!.uid, b.metadata!.uid);
  });

  void it('gives a new UID when the content, the file, the node or the URL changes', () => {
    const base = prepared(manifestPod()).metadata!.uid;
    const changed = manifestPod();
    changed.spec!.containers[0]!.image = 'busybox:1.37';
    assert.notEqual(prepared(changed).metadata!.uid, base);
    assert.notEqual(prepared(manifestPod(), context({ kind: 'file', path: '/other/web.yaml' })).metadata!.uid, base);
    assert.notEqual(prepared(manifestPod(), context(FILE, 'node2')).metadata!.uid, base);
    const url1 = prepared(manifestPod(), context(HTTP)).metadata!.uid;
    assert.notEqual(prepared(manifestPod(), context({ kind: 'http', url: 'http://127.0.0.1:8080/other' })).metadata!.uid, url1);
    // A URL pod's UID does not depend on the node (upstream hashes only the URL).
    assert.equal(prepared(manifestPod(), context(HTTP, 'node2')).metadata!.uid, url1);
  });

  void it('hashes the defaulted pod, so that spelling out a default keeps the UID', () => {
    const explicit = manifestPod();
    explicit.spec!.restartPolicy = 'Always';
    assert.equal(prepared(explicit).metadata!.uid, prepared(manifestPod()).metadata!.uid);
  });

  void it('keeps a UID and a namespace given in the manifest', () => {
    const pod = manifestPod();
    pod.metadata = { ...pod.metadata, uid: 'my-uid', namespace: 'kube-system' };
    const out = prepared(pod, context(FILE, 'node-a'));
    assert.equal(out.metadata!.uid, 'my-uid');
    assert.equal(out.metadata!.annotations![CONFIG_HASH_ANNOTATION], 'my-uid');
    assert.equal(out.metadata!.namespace, 'kube-system');
    assert.equal(out.metadata!.name, 'web-node-a');
    assert.equal(out.spec!.nodeName, 'node-a');
  });

  void it('marks URL pods http and gives them no extra toleration', () => {
    const out = prepared(manifestPod(), context(HTTP));
    assert.equal(out.metadata!.annotations![CONFIG_SOURCE_ANNOTATION], 'http');
    assert.equal(out.spec!.tolerations, undefined);
  });

  void it('does not add the toleration twice', () => {
    const pod = manifestPod();
    pod.spec!.tolerations = [{ operator: 'Exists', effect: 'NoExecute' }];
    assert.equal(prepared(pod).spec!.tolerations!.length, 1);
  });

  void it('rejects a pod without a name', () => {
    const pod = manifestPod();
    pod.metadata = { generateName: 'web-' };
    const result = prepareStaticPod(pod, context());
    assert.ok(!result.ok);
    assert.match(result.problems[0]!, /^metadata\.name: is required/);
  });

  void it('rejects an invalid pod with every problem', () => {
    const pod = manifestPod();
    pod.spec!.containers[0]!.name = 'Main';
    pod.spec!.restartPolicy = 'Sometimes';
    const result = prepareStaticPod(pod, context());
    assert.ok(!result.ok);
    assert.equal(result.problems.length, 2, result.problems.join('\n'));
  });

  void it('does not change its argument', () => {
    const pod = manifestPod();
    const before = structuredClone(pod);
    prepared(pod);
    assert.deepEqual(pod, before);
  });
});

void describe('helpers', () => {
  void it('formats times as Go RFC3339Nano does', () => {
    assert.equal(formatRFC3339(new Date('2026-01-02T03:04:05.000Z')), '2026-01-02T03:04:05Z');
    assert.equal(formatRFC3339(new Date('2026-01-02T03:04:05.120Z')), '2026-01-02T03:04:05.12Z');
  });

  void it('writes canonical JSON with sorted keys and no undefined members', () => {
    assert.equal(canonicalJSON({ b: 1, a: [{ d: undefined, c: 'x' }, null] }), '{"a":[{"c":"x"},null],"b":1}');
  });
});
