import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import { isOrchError } from '../../api/errors.js';
import { FakeLogger } from '../logging/testing.js';
import { createCredentialProviders, type PluginFailure } from './providers.js';
import { FakePluginExec } from './testing.js';

const API = 'credentialprovider.nodeagent.orch.io/v1';
const REPO = 'registry.example:5000/team/app';

function provider(name: string, extra: Record<string, unknown> = {}) {
  return { name, matchImages: ['*.example:5000'], defaultCacheDuration: 60e9, apiVersion: API, args: ['--flag'], env: [{ name: 'TOKEN', value: 't' }], ...extra };
}

function response(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: API, kind: 'CredentialProviderResponse', cacheKeyType: 'Image', auth: { 'registry.example:5000': { username: 'u', password: 'p' } }, ...extra };
}

function setup(providers = [provider('one')]) {
  const clock = new FakeClock(1_000_000);
  const exec = new FakePluginExec();
  const failures: PluginFailure[] = [];
  const set = createCredentialProviders({ providers, binDir: '/plugins', clock, logger: new FakeLogger(), exec, env: { PATH: '/bin', TOKEN: 'base' } });
  const lookup = (repo = REPO) => set.lookup(repo, (f) => { failures.push(f); });
  return { clock, exec, failures, lookup };
}

void describe('credential providers', () => {
  void it('runs the plugin of a matching provider with the request on stdin, its args and env over the inherited one', async () => {
    const { exec, lookup } = setup();
    exec.answer(response());
    assert.deepEqual(await lookup(), [{ username: 'u', password: 'p' }]);
    const run = exec.runs[0];
    assert.equal(run?.file, '/plugins/one');
    assert.deepEqual(run.args, ['--flag']);
    assert.deepEqual(run.env, { PATH: '/bin', TOKEN: 't' });
    assert.deepEqual(JSON.parse(run.stdin), { apiVersion: API, kind: 'CredentialProviderRequest', image: REPO });
    assert.equal(run.timeoutMs, 60_000);
    assert.deepEqual(await lookup('other.test/app'), [], 'no provider matches: no run');
    assert.equal(exec.runs.length, 1);
  });

  void it('caches by cacheKeyType for cacheDuration, else defaultCacheDuration; 0 is not cached', async () => {
    const { exec, lookup, clock } = setup();
    exec.answer(response({ cacheKeyType: 'Registry', cacheDuration: '10s' }));
    await lookup();
    await lookup('registry.example:5000/other/app');
    assert.equal(exec.runs.length, 1, 'a Registry answer serves every repository of the registry');
    await clock.advance(10_000);
    await lookup();
    assert.equal(exec.runs.length, 2, 'expired after cacheDuration');

    exec.answer(response({ cacheKeyType: 'Image' }));
    await clock.advance(20_000);
    await lookup();
    await lookup('registry.example:5000/other/app');
    assert.equal(exec.runs.length, 4, 'an Image answer serves that repository only');
    await clock.advance(59_000);
    await lookup();
    assert.equal(exec.runs.length, 4, 'defaultCacheDuration (60s) holds');
    await clock.advance(1_000);
    await lookup();
    assert.equal(exec.runs.length, 5);

    exec.answer(response({ cacheKeyType: 'Global', cacheDuration: '0s' }));
    await clock.advance(120_000);
    await lookup();
    await lookup();
    assert.equal(exec.runs.length, 7, 'cacheDuration 0: never cached');
    exec.answer(response({ cacheKeyType: 'Global' }));
    await lookup();
    await lookup('elsewhere.example:5000/x');
    assert.equal(exec.runs.length, 8, 'a Global answer serves every repository');
  });

  void it('runs for one repository at once share one plugin run', async () => {
    const { exec, lookup } = setup();
    exec.answer(response({ cacheDuration: '0s' }));
    const all = await Promise.all([lookup(), lookup(), lookup()]);
    assert.equal(exec.runs.length, 1);
    assert.equal(all.every((a) => a.length === 1), true);
  });

  void it('uses only the entries that match the image, the more specific first, across providers', async () => {
    const { exec, lookup } = setup([provider('one'), provider('two')]);
    exec.answer((run) => response({
      auth: run.file.endsWith('one')
        ? { 'registry.example:5000': { username: 'broad', password: 'p' }, 'elsewhere.example': { username: 'no', password: 'p' } }
        : { 'registry.example:5000/team': { username: 'team', password: 'p' } },
    }));
    assert.deepEqual((await lookup()).map((a) => a.username), ['team', 'broad']);
  });

  void it('reports a failed run, a bad answer or a wrong apiVersion naming the plugin, and gives no credentials', async () => {
    const { exec, lookup, failures } = setup();
    exec.answer(new Error('exit status 3: no token'));
    assert.deepEqual(await lookup(), []);
    exec.answer({ raw: 'not json {' });
    assert.deepEqual(await lookup(), []);
    exec.answer(response({ apiVersion: 'credentialprovider.nodeagent.orch.io/v1beta1' }));
    assert.deepEqual(await lookup(), []);
    exec.answer(response({ cacheKeyType: 'Pod' }));
    assert.deepEqual(await lookup(), []);
    assert.deepEqual(failures.map((f) => f.plugin), ['one', 'one', 'one', 'one']);
    assert.deepEqual(failures.map((f) => (isOrchError(f.error) ? f.error.code : '')), [
      'CREDENTIAL_PROVIDER_PLUGIN_FAILED', 'CREDENTIAL_PROVIDER_RESPONSE_INVALID', 'CREDENTIAL_PROVIDER_RESPONSE_INVALID', 'CREDENTIAL_PROVIDER_RESPONSE_INVALID',
    ]);
    assert.match(failures[0]?.error.message ?? '', /plugin "one" failed for image "registry\.example:5000\/team\/app": exit status 3: no token/);
    assert.match(failures[2]?.error.message ?? '', /apiVersion "credentialprovider\.nodeagent\.orch\.io\/v1beta1" does not match/);
    assert.equal(failures.some((f) => f.error.message.includes('not json')), false, 'the answer itself is never quoted');
    assert.equal(exec.runs.length, 4, 'failures are not cached');
  });
});
