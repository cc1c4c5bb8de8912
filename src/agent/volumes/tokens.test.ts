import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isOrchError } from '../../api/errors.js';
import { FakeClock } from '../../api/fake-clock.js';
import type { NodePod } from '../../api/pod/index.js';
import { formatTime } from '../../api/time.js';
import { FakeLogger } from '../logging/testing.js';
import type { RestCallOptions } from '../orchclient/index.js';
import { FakeRestClient } from '../orchclient/testing.js';
import { createTokenManager } from './tokens.js';

/** An API server that answers TokenRequests: token-<n>, valid for the seconds asked. */
class TokenServer extends FakeRestClient {
  issued = 0;

  constructor(private readonly clock: FakeClock) {
    super({ now: () => clock.now() });
  }

  override async create<T>(path: string, body: unknown, options?: RestCallOptions): Promise<T> {
    if (!path.endsWith('/token')) return super.create<T>(path, body, options);
    this.calls.push({ verb: 'create', path, body: structuredClone(body) });
    for (const responder of this.responders) {
      const out = responder({ verb: 'create', path });
      if (out instanceof Error) throw out;
    }
    await Promise.resolve();
    const spec = (body as { spec: { expirationSeconds: number } }).spec;
    return { ...(body as object), status: { token: `token-${++this.issued}`, expirationTimestamp: formatTime(this.clock.now() + spec.expirationSeconds * 1000) } } as T;
  }
}

const pod: NodePod = { metadata: { uid: 'u1', name: 'web', namespace: 'ns' }, spec: { serviceAccountName: 'robot', containers: [{ name: 'c' }] } };

void describe('the token manager', () => {
  void it('requests a token bound to the pod and keeps it until 80 % of its lifetime', async () => {
    const clock = new FakeClock();
    const rest = new TokenServer(clock);
    const tokens = createTokenManager({ rest, clock, logger: new FakeLogger() });
    assert.equal(await tokens.token(pod, { audience: '', expirationSeconds: 1000 }), 'token-1');
    const call = rest.callsOf('create')[0];
    assert.equal(call?.path, '/api/v1/namespaces/ns/serviceaccounts/robot/token');
    assert.deepEqual(call.body, {
      apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest',
      spec: { audiences: [], expirationSeconds: 1000, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'u1' } },
    });
    await clock.advance(799_000);
    assert.equal(await tokens.token(pod, { audience: '', expirationSeconds: 1000 }), 'token-1');
    await clock.advance(1_000);
    assert.equal(await tokens.token(pod, { audience: '', expirationSeconds: 1000 }), 'token-2');
    assert.equal(await tokens.token(pod, { audience: 'vault', expirationSeconds: 1000 }), 'token-3', 'each audience has its own token');
  });

  void it('serves the kept token while a refresh fails and it is still valid; forgets a pod\'s tokens', async () => {
    const clock = new FakeClock();
    const rest = new TokenServer(clock);
    const logger = new FakeLogger();
    const tokens = createTokenManager({ rest, clock, logger });
    await tokens.token(pod, { audience: '', expirationSeconds: 1000 });
    await clock.advance(900_000);
    rest.failNext('create', '/token', 'unavailable');
    assert.equal(await tokens.token(pod, { audience: '', expirationSeconds: 1000 }), 'token-1');
    await clock.advance(101_000);
    rest.failNext('create', '/token', 'unavailable');
    await assert.rejects(tokens.token(pod, { audience: '', expirationSeconds: 1000 }),
      (err: unknown) => isOrchError(err) && err.code === 'VOLUME_TOKEN_UNAVAILABLE' && err.message.includes('service account ns/robot for pod ns/web'));
    assert.equal(await tokens.token(pod, { audience: '', expirationSeconds: 1000 }), 'token-2');
    tokens.forgetPod('u1');
    assert.equal(await tokens.token(pod, { audience: '', expirationSeconds: 1000 }), 'token-3');
  });

  void it('refuses a pod without a service account', async () => {
    const clock = new FakeClock();
    const tokens = createTokenManager({ rest: new TokenServer(clock), clock, logger: new FakeLogger() });
    await assert.rejects(tokens.token({ ...pod, spec: { containers: [] } }, { audience: '', expirationSeconds: 600 }), /names no service account/);
  });
});
