import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StatusError } from '../status/index.js';
import { chooseContainer } from './index.js';
import { agentRefused, agentRequestOptions, agentUrl } from './target.js';

const pod = (spec: Record<string, unknown>): Record<string, unknown> => ({ metadata: { name: 'web' }, spec });
const message = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    if (err instanceof StatusError) return `${err.httpCode} ${err.message}`;
  }
  return 'no error';
};

void describe('node proxy targets', () => {
  void it('picks the container a request means, as upstream', () => {
    assert.equal(chooseContainer(pod({ containers: [{ name: 'only' }] }), undefined), 'only');
    assert.equal(chooseContainer(pod({ containers: [{ name: 'a' }], initContainers: [{ name: 'i' }] }), 'i'), 'i');
    assert.equal(message(() => chooseContainer(pod({ containers: [{ name: 'a' }, { name: 'b' }], ephemeralContainers: [{ name: 'dbg' }] }), '')),
      '400 a container name must be specified for pod web, choose one of: [a b] or one of the ephemeral containers: [dbg]');
    assert.equal(message(() => chooseContainer(pod({ containers: [{ name: 'a' }] }), 'x')), '400 container x is not valid for pod web');
  });

  void it('dials agents with the client certificate, verifying them only with a CA', () => {
    const target = { node: 'n1', host: 'fd00::1', port: 10250 };
    assert.equal(agentUrl(target, '/exec/a/b/c'), 'https://[fd00::1]:10250/exec/a/b/c');
    assert.equal(agentRequestOptions({ cert: 'c', key: 'k' }, target).rejectUnauthorized, false);
    assert.equal(agentRequestOptions({ cert: 'c', key: 'k', ca: 'a' }, target).rejectUnauthorized, true);
    assert.equal(agentRequestOptions({ ca: 'a' }, target, true).rejectUnauthorized, false);
    const refused = agentRefused(404, 'pod does not exist\n', target);
    assert.deepEqual([refused.httpCode, refused.reason, refused.message], [404, 'NotFound', 'pod does not exist']);
    assert.equal(agentRefused(200, '', target).httpCode, 502);
  });
});
