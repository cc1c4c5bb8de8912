import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Secret } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../api/pod/index.js';
import { credentialsFor, imageRegistry, pullCredentials } from './pull-secrets.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const jsonSecret = (auths: Record<string, unknown>): Secret => ({ type: 'orch.io/dockerconfigjson', data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) } });

void describe('image pull secrets', () => {
  void it('splits image references into registry host and repository path', () => {
    assert.deepEqual(imageRegistry('busybox'), { host: 'docker.io', path: 'busybox' });
    assert.deepEqual(imageRegistry('127.0.0.1:5000/team/app:v1'), { host: '127.0.0.1:5000', path: 'team/app' });
    assert.deepEqual(imageRegistry('localhost/app@sha256:abc'), { host: 'localhost', path: 'app' });
  });

  void it('picks the entry of the image registry with the longest path, from auth or username/password', () => {
    const secret = jsonSecret({
      '127.0.0.1:5000': { auth: b64('all:one') },
      'https://127.0.0.1:5000/team': { username: 'team', password: 'two' },
      'other:5000': { username: 'x', password: 'y' },
    });
    assert.deepEqual(credentialsFor('127.0.0.1:5000/team/app:v1', [secret]), { username: 'team', password: 'two' });
    assert.deepEqual(credentialsFor('127.0.0.1:5000/solo:v1', [secret]), { username: 'all', password: 'one' });
    assert.equal(credentialsFor('elsewhere:5000/app', [secret]), undefined);
    const legacy: Secret = { type: 'orch.io/dockercfg', data: { '.dockercfg': b64(JSON.stringify({ 'elsewhere:5000': { auth: b64('a:b') } })) } };
    assert.equal(credentialsFor('elsewhere:5000/app', [secret, legacy])?.username, 'a');
    assert.equal(credentialsFor('elsewhere:5000/app', [{ data: { '.dockerconfigjson': 'not base64 json' } }]), undefined);
  });

  void it("reads the pod's secrets from its namespace, skipping missing ones", async () => {
    const asked: string[] = [];
    const fn = pullCredentials((ns, name) => {
      asked.push(`${ns}/${name}`);
      return Promise.resolve(name === 'reg' ? jsonSecret({ 'r:1': { username: 'u', password: 'p' } }) : undefined);
    });
    const pod: NodePod = { metadata: { uid: 'u1', name: 'web', namespace: 'shop' }, spec: { containers: [], imagePullSecrets: [{ name: 'missing' }, { name: 'reg' }] } };
    assert.equal((await fn(pod, 'r:1/app'))?.username, 'u');
    assert.deepEqual(asked, ['shop/missing', 'shop/reg']);
    assert.equal(await fn({ ...pod, spec: { containers: [] } }, 'r:1/app'), undefined);
  });
});
