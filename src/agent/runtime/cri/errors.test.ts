import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { status } from '@grpc/grpc-js';
import { isNotFound, isTimeout, isUnavailable } from '../../../api/errors.js';
import { criCallError, type CriCallContext } from './errors.js';

const ctx: CriCallContext = {
  method: 'RunPodSandbox',
  endpoint: 'unix:///run/x.sock',
  timeoutMs: 120_000,
  deadlinePassed: false,
  aborted: false,
};

function grpcError(code: status, details: string): Error {
  return Object.assign(new Error(`${code} ${details}`), { code, details });
}

void describe('criCallError', () => {
  void it('maps our own deadline to CRI_TIMEOUT naming the method and the timeout', () => {
    const err = criCallError(grpcError(status.DEADLINE_EXCEEDED, 'Deadline exceeded'), { ...ctx, deadlinePassed: true });
    assert.ok(isTimeout(err));
    assert.equal(err.code, 'CRI_TIMEOUT');
    assert.match(err.message, /RunPodSandbox/);
    assert.match(err.message, /120000 ms/);
  });

  void it('maps a runtime-side deadline (ExecSync timeout) to CRI_TIMEOUT with its details', () => {
    const err = criCallError(grpcError(status.DEADLINE_EXCEEDED, 'timeout 1s exceeded'), ctx);
    assert.equal(err.code, 'CRI_TIMEOUT');
    assert.match(err.message, /timeout 1s exceeded/);
  });

  void it('maps UNAVAILABLE to CRI_UNAVAILABLE naming the endpoint', () => {
    const err = criCallError(grpcError(status.UNAVAILABLE, 'No connection established'), ctx);
    assert.ok(isUnavailable(err));
    assert.equal(err.code, 'CRI_UNAVAILABLE');
    assert.match(err.message, /unix:\/\/\/run\/x\.sock/);
    assert.match(err.message, /is it running/);
  });

  void it('maps NOT_FOUND to not-found', () => {
    const err = criCallError(grpcError(status.NOT_FOUND, 'no such sandbox'), ctx);
    assert.ok(isNotFound(err));
    assert.equal(err.code, 'CRI_NOT_FOUND');
  });

  void it('maps anything else to CRI_ERROR with the gRPC message', () => {
    const err = criCallError(grpcError(status.UNKNOWN, 'runc did not start'), ctx);
    assert.equal(err.category, 'internal');
    assert.equal(err.code, 'CRI_ERROR');
    assert.match(err.message, /UNKNOWN/);
    assert.match(err.message, /runc did not start/);
    assert.equal(criCallError(new Error('boom'), ctx).code, 'CRI_ERROR');
  });

  void it('reports a caller abort as CRI_CANCELLED whatever gRPC said', () => {
    const err = criCallError(grpcError(status.CANCELLED, 'Cancelled on client'), { ...ctx, aborted: true });
    assert.equal(err.code, 'CRI_CANCELLED');
  });
});
