import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NodePod } from '../../api/pod/index.js';
import { FakeLogger } from '../logging/testing.js';
import type { PodEvent } from '../prober/index.js';
import { pullKeyring } from './keyring.js';
import type { CredentialProviders } from './providers.js';

const pod: NodePod = { metadata: { uid: 'u1', name: 'p', namespace: 'n' }, spec: { containers: [] } };

void describe('pullKeyring', () => {
  void it('is absent without secrets or providers', () => {
    assert.equal(pullKeyring({ logger: new FakeLogger() }), undefined);
  });

  void it('gives the pull secret first, then the plugins; a failed plugin is a Warning event and a log line naming it', async () => {
    const events: PodEvent[] = [];
    const logger = new FakeLogger();
    const providers: CredentialProviders = {
      lookup: (repo, onFailure) => {
        onFailure({ plugin: 'ecr', image: repo, error: new Error(`credential provider plugin "ecr" failed for image "${repo}": exit status 1`) });
        return Promise.resolve([{ username: 'plugin' }]);
      },
    };
    const keyring = pullKeyring({ secrets: () => Promise.resolve({ username: 'secret' }), providers, logger, onEvent: (e) => { events.push(e); } });
    assert.deepEqual(await keyring?.(pod, 'r.example/app'), [{ username: 'secret' }, { username: 'plugin' }]);
    const [event] = events;
    assert.equal(events.length, 1);
    assert.ok(event);
    assert.equal(event.type, 'Warning');
    assert.equal(event.reason, 'FailedCredentialProvider');
    assert.match(event.message, /^credential provider plugin "ecr" failed for image "r\.example\/app": exit status 1; pulling with the other credentials$/);
    assert.ok(logger.lines.some((l) => l.level === 'warn' && l.fields.plugin === 'ecr'));
  });
});
