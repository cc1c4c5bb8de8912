import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyDefaultImageTag, defaultPullPolicy, parseImageReference } from './image-reference.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;

void describe('image references', () => {
  void it('parses domain, path, tag and digest', () => {
    assert.deepEqual(parseImageReference('busybox'), { domain: '', path: 'busybox', tag: '', digest: '' });
    assert.deepEqual(parseImageReference('library/busybox:1.35'), { domain: '', path: 'library/busybox', tag: '1.35', digest: '' });
    assert.deepEqual(parseImageReference('127.0.0.1:5000/library/busybox:1.35'), { domain: '127.0.0.1:5000', path: 'library/busybox', tag: '1.35', digest: '' });
    assert.deepEqual(parseImageReference('localhost/x'), { domain: 'localhost', path: 'x', tag: '', digest: '' });
    assert.deepEqual(parseImageReference(`docker.io/library/busybox:1@${DIGEST}`), { domain: 'docker.io', path: 'library/busybox', tag: '1', digest: DIGEST });
    assert.deepEqual(parseImageReference('[::1]:5000/a/b_c__d-e.f:t'), { domain: '[::1]:5000', path: 'a/b_c__d-e.f', tag: 't', digest: '' });
  });

  void it('rejects what the reference grammar rejects', () => {
    for (const bad of ['', 'Busybox', 'busybox:', 'busybox:-x', 'bus..box', 'a//b', '-a', 'busybox@sha256:xyz', 'a/B', ':tag', 'a'.repeat(64), `${'a'.repeat(256)}:1`, 'has space']) {
      assert.throws(() => parseImageReference(bad), { code: 'KUBERUNTIME_INVALID_IMAGE' }, JSON.stringify(bad));
    }
  });

  void it('adds :latest only without a tag or digest, keeping short names short', () => {
    assert.equal(applyDefaultImageTag('busybox'), 'busybox:latest');
    assert.equal(applyDefaultImageTag('127.0.0.1:5000/busybox'), '127.0.0.1:5000/busybox:latest');
    assert.equal(applyDefaultImageTag('busybox:1.35'), 'busybox:1.35');
    assert.equal(applyDefaultImageTag(`busybox@${DIGEST}`), `busybox@${DIGEST}`);
  });

  void it('defaults the pull policy as the API does', () => {
    assert.equal(defaultPullPolicy('busybox'), 'Always');
    assert.equal(defaultPullPolicy('busybox:latest'), 'Always');
    assert.equal(defaultPullPolicy('busybox:1.35'), 'IfNotPresent');
    assert.equal(defaultPullPolicy(`busybox@${DIGEST}`), 'IfNotPresent');
    assert.equal(defaultPullPolicy('127.0.0.1:5000/busybox'), 'Always');
  });
});
