import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isInvalid, type OrchError } from '../../../api/errors.js';
import { parseCriEndpoint } from './endpoint.js';

void describe('parseCriEndpoint', () => {
  void it('accepts unix:///abs/path', () => {
    const e = parseCriEndpoint('unix:///run/containerd/containerd.sock');
    assert.equal(e.target, 'unix:///run/containerd/containerd.sock');
    assert.equal(e.socketPath, '/run/containerd/containerd.sock');
  });

  void it('treats a bare absolute path as a unix socket', () => {
    const e = parseCriEndpoint('/run/containerd//containerd.sock');
    assert.equal(e.target, 'unix:///run/containerd/containerd.sock');
    assert.equal(e.raw, '/run/containerd//containerd.sock');
  });

  for (const bad of ['tcp://127.0.0.1:1234', 'npipe:////./pipe/x', 'unix://relative.sock', 'run/x.sock', '', 'unix://']) {
    void it(`rejects ${JSON.stringify(bad)} naming the flag`, () => {
      assert.throws(
        () => parseCriEndpoint(bad, '--image-service-endpoint'),
        (err: OrchError) => {
          assert.ok(isInvalid(err));
          assert.equal(err.code, 'CRI_INVALID_ENDPOINT');
          assert.equal(err.subject, '--image-service-endpoint');
          assert.match(err.message, /--image-service-endpoint/);
          return true;
        },
      );
    });
  }

  void it('names --container-runtime-endpoint by default', () => {
    assert.throws(() => parseCriEndpoint('tcp://x:1'), /--container-runtime-endpoint/);
  });
});
