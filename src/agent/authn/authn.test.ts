import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import type { TokenReviewStatus } from '../orchclient/index.js';
import { ANONYMOUS_USER, bearerToken, createAuthenticator, createTokenWebhookAuthenticator, type AuthnOutcome, type RequestAuthenticator } from './index.js';

const request = (authorization?: string): IncomingMessage => ({ headers: authorization === undefined ? {} : { authorization }, socket: {} }) as unknown as IncomingMessage;

const fixed = (outcome: AuthnOutcome): RequestAuthenticator => ({ authenticate: () => Promise.resolve(outcome) });

void describe('bearer tokens', () => {
  void it('are read as upstream reads them', () => {
    assert.equal(bearerToken(request('Bearer abc')), 'abc');
    assert.equal(bearerToken(request('bearer abc')), 'abc');
    assert.equal(bearerToken(request('  Bearer abc  ')), 'abc');
    assert.equal(bearerToken(request('Bearer abc extra')), 'abc');
    assert.equal(bearerToken(request('Bearer ')), undefined);
    assert.equal(bearerToken(request('Basic abc')), undefined);
    assert.equal(bearerToken(request('Bearer')), undefined);
    assert.equal(bearerToken(request()), undefined);
  });

  void it('are reviewed once per cache TTL, accepted or not; failed reviews are not cached; concurrent reviews are shared', async () => {
    const clock = new FakeClock(0);
    const reviewed: string[] = [];
    let fail = false;
    const authn = createTokenWebhookAuthenticator({
      cacheTtlMs: 120_000, clock,
      review: (token) => {
        reviewed.push(token);
        if (fail) return Promise.reject(new Error('API server down'));
        const status: TokenReviewStatus = token === 'good' ? { authenticated: true, user: { username: 'bob', uid: '7', groups: ['devs'], extra: { k: ['v'] } } } : { authenticated: false, error: 'unknown token' };
        return Promise.resolve(status);
      },
    });
    const [a, b] = await Promise.all([authn.authenticate(request('Bearer good')), authn.authenticate(request('Bearer good'))]);
    assert.deepEqual(a, { kind: 'user', method: 'token', user: { name: 'bob', uid: '7', groups: ['devs'], extra: { k: ['v'] } } });
    assert.deepEqual(b, a);
    assert.deepEqual(await authn.authenticate(request('Bearer bad')), { kind: 'error', reason: 'invalid bearer token: unknown token' });
    await clock.advance(119_000);
    await authn.authenticate(request('Bearer good'));
    await authn.authenticate(request('Bearer bad'));
    assert.deepEqual(reviewed, ['good', 'bad']);
    await clock.advance(2_000);
    fail = true;
    const failed = await authn.authenticate(request('Bearer good'));
    assert.equal(failed.kind, 'error');
    fail = false;
    assert.equal((await authn.authenticate(request('Bearer good'))).kind, 'user');
    assert.deepEqual(reviewed, ['good', 'bad', 'good', 'good']);
    assert.equal(authn.reviews(), 4);
    assert.deepEqual(await authn.authenticate(request()), { kind: 'none' });
  });
});

void describe('the request authenticator', () => {
  const alice = { name: 'alice', uid: '', groups: ['g'], extra: {} };
  void it('takes the first user, adds system:authenticated, and lets invalid credentials fail even with anonymous on', async () => {
    const ok = createAuthenticator({ authenticators: [fixed({ kind: 'none' }), fixed({ kind: 'user', method: 'token', user: alice })], anonymous: false });
    assert.deepEqual(await ok.authenticate(request()), { kind: 'user', method: 'token', user: { ...alice, groups: ['g', 'system:authenticated'] } });
    const invalidCert = createAuthenticator({ authenticators: [fixed({ kind: 'error', reason: 'bad cert' }), fixed({ kind: 'none' })], anonymous: true });
    assert.deepEqual(await invalidCert.authenticate(request()), { kind: 'error', reason: 'bad cert' });
    const certThenToken = createAuthenticator({ authenticators: [fixed({ kind: 'error', reason: 'bad cert' }), fixed({ kind: 'user', method: 'token', user: alice })], anonymous: false });
    assert.equal((await certThenToken.authenticate(request())).kind, 'user');
  });

  void it('makes requests without credentials anonymous only when allowed', async () => {
    const on = createAuthenticator({ authenticators: [fixed({ kind: 'none' })], anonymous: true });
    assert.deepEqual(await on.authenticate(request()), { kind: 'user', method: 'anonymous', user: ANONYMOUS_USER });
    assert.deepEqual(ANONYMOUS_USER.groups, ['system:unauthenticated']);
    const off = createAuthenticator({ authenticators: [], anonymous: false });
    assert.equal((await off.authenticate(request())).kind, 'error');
  });
});
