import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conflict, internal, tooManyRequests } from './index.js';

void describe('StatusError', () => {
  void it('has a stable code per reason and the Status of its code', () => {
    const err = tooManyRequests('Too many requests, please try again later', 1);
    assert.equal(err.code, 'APISERVER_TOO_MANY_REQUESTS');
    assert.equal(err.category, 'unavailable');
    assert.deepEqual(err.toStatus(), {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Too many requests, please try again later',
      reason: 'TooManyRequests', details: { retryAfterSeconds: 1 }, code: 429,
    });
    assert.equal(conflict({ group: '', resource: 'pods' }, 'a', 'changed').code, 'APISERVER_CONFLICT');
  });

  void it('carries no stack of its own (an answer to the client), and leaves the stack trace limit as it was', () => {
    const before = Error.stackTraceLimit;
    const err = tooManyRequests('busy', 1);
    assert.equal(err.stack, 'StatusError: busy');
    assert.equal(Error.stackTraceLimit, before);
    const cause = new Error('disk gone');
    const wrapped = internal('storage failed', cause);
    assert.equal(wrapped.cause, cause);
    assert.match(cause.stack ?? '', /\n\s+at /, 'the cause keeps its stack');
    assert.match(new Error('x').stack ?? '', /\n\s+at /, 'other errors still have stacks');
  });
});
