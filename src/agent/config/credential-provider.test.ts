import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AggregateInvalidError } from '../../api/errors.js';
import { loadCredentialProviderConfig, matchImageProblem } from './credential-provider.js';
import { tempFiles } from './fixtures.js';

const HEAD = 'apiVersion: nodeagent.config.orch.io/v1beta1\nkind: CredentialProviderConfig\n';

void describe('CredentialProviderConfig', () => {
  void it('loads a valid file', async () => {
    const dir = await tempFiles({
      'p.yaml': `${HEAD}providers:\n  - name: ecr-login\n    matchImages: ["*.dkr.ecr.*.amazonaws.com", "127.0.0.1:5000/team"]\n    defaultCacheDuration: 12h\n    apiVersion: credentialprovider.nodeagent.orch.io/v1\n    args: [get-credentials]\n    env:\n      - name: AWS_PROFILE\n        value: default\n`,
    });
    const c = await loadCredentialProviderConfig('p.yaml', dir);
    const [provider] = c.providers;
    assert.ok(provider);
    assert.equal(provider.name, 'ecr-login');
    assert.equal(provider.defaultCacheDuration, 12 * 3600e9);
  });

  void it('reports every problem with its field', async () => {
    const dir = await tempFiles({
      'p.yaml': `${HEAD}providers:\n  - name: a/b\n    matchImages: ["https://x.io", "reg.io/*"]\n    defaultCacheDuration: 1m\n    apiVersion: v9\n  - name: a/b\n    matchImages: []\n    defaultCacheDuration: 1m\n    apiVersion: credentialprovider.nodeagent.orch.io/v1\n`,
    });
    await assert.rejects(loadCredentialProviderConfig('p.yaml', dir), (err: unknown) => {
      assert.ok(err instanceof AggregateInvalidError);
      const text = err.problems.join('\n');
      for (const e of ['providers[0].name: "a/b" must be a plugin file name', 'providers[0].matchImages[0]: "https://x.io" must not contain a scheme',
        'providers[0].matchImages[1]: "reg.io/*": globs are allowed in the host only', 'providers[0].apiVersion: "v9" is not supported',
        'providers[1].name: duplicate provider name', 'providers[1].matchImages: at least one pattern is required']) {
        assert.ok(text.includes(e), `missing ${e} in\n${text}`);
      }
      return true;
    });
  });

  void it('requires the required fields', async () => {
    const dir = await tempFiles({ 'p.yaml': `${HEAD}providers:\n  - name: x\n` });
    await assert.rejects(loadCredentialProviderConfig('p.yaml', dir), /field providers\[0\]\.matchImages: required field is missing/);
    const empty = await tempFiles({ 'p.yaml': HEAD });
    await assert.rejects(loadCredentialProviderConfig('p.yaml', empty), /field providers: required field is missing/);
  });

  void it('checks match patterns', () => {
    assert.equal(matchImageProblem('*.registry.io:8080/path'), undefined);
    assert.equal(matchImageProblem('reg*.io'), undefined);
    assert.match(matchImageProblem('reg.io:port') ?? '', /invalid port/);
  });
});
