import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import type { ConfigMap, ProjectedVolumeSource, Secret } from 'kubernetes-types/core/v1.js';

import { assertRejectsWith } from './fixtures.js';
import { projectedPayload } from './projected.js';
import { VOLUME_INVALID, VOLUME_OBJECT_NOT_FOUND, VOLUME_UNSUPPORTED, type ServiceAccountTokenRequest, type ServiceAccountTokenSource, type VolumeObjectSource } from './types.js';
import type { NodePod } from '../../api/pod/index.js';

const pod: NodePod = { metadata: { name: 'p', namespace: 'ns', uid: 'u', labels: { a: 'b' } }, spec: { containers: [{ name: 'app' }] } };
const configMaps: Record<string, ConfigMap> = {
  one: { metadata: { name: 'one' }, data: { shared: 'from one', only1: '1' } },
  two: { metadata: { name: 'two' }, data: { shared: 'from two', only2: '2' } },
};
const secrets: Record<string, Secret> = { creds: { metadata: { name: 'creds' }, data: { token: Buffer.from('t0k').toString('base64') } } };
const objects: VolumeObjectSource = {
  configMap: (_ns, name) => Promise.resolve(configMaps[name]),
  secret: (_ns, name) => Promise.resolve(secrets[name]),
};
const capacity = { cpuMilli: 2000, memoryBytes: 1024 };
const asked: ServiceAccountTokenRequest[] = [];
const tokens: ServiceAccountTokenSource = {
  token: (_pod, r) => { asked.push(r); return Promise.resolve(`token-for-${r.audience === '' ? 'api' : r.audience}`); },
  forgetPod: () => undefined,
};

async function build(source: ProjectedVolumeSource, withObjects = true): Promise<Record<string, [string, number]>> {
  const payload = await projectedPayload(source, {
    pod, volumeName: 'all', subject: 'spec.volumes[0].projected', objects: withObjects ? objects : undefined, tokens: withObjects ? tokens : undefined, capacity,
  });
  return Object.fromEntries([...payload].map(([p, f]) => [p, [f.data.toString(), f.mode]]));
}

void describe('projected volumes', () => {
  void it('combines configMap, secret and downwardAPI sources with the volume defaultMode', async () => {
    assert.deepEqual(
      await build({
        defaultMode: 0o640,
        sources: [
          { configMap: { name: 'one', items: [{ key: 'only1', path: 'cfg/one' }] } },
          { secret: { name: 'creds', items: [{ key: 'token', path: 'token', mode: 0o400 }] } },
          { downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
          { configMap: { name: 'absent', optional: true } },
        ],
      }),
      { 'cfg/one': ['1', 0o640], token: ['t0k', 0o400], labels: ['a="b"', 0o640] },
    );
  });

  void it('defaults to 0644; whole-object sources sharing a key: the later wins, as upstream', async () => {
    assert.deepEqual(await build({ sources: [{ configMap: { name: 'one' } }, { configMap: { name: 'two' } }] }), {
      shared: ['from two', 0o644], only1: ['1', 0o644], only2: ['2', 0o644],
    });
  });

  void it('rejects item paths used twice (conflicting duplicate paths)', async () => {
    await assertRejectsWith(
      build({
        sources: [
          { configMap: { name: 'one', items: [{ key: 'only1', path: 'x' }] } },
          { downwardAPI: { items: [{ path: './x', fieldRef: { fieldPath: 'metadata.name' } }] } },
        ],
      }),
      VOLUME_INVALID,
      ['projected volume "all"', 'conflicting duplicate path "x"', 'sources[0]', 'sources[1]'],
    );
  });

  void it('writes service account tokens with the volume defaultMode, for the audience and validity asked (an hour by default)', async () => {
    asked.length = 0;
    assert.deepEqual(await build({
      defaultMode: 0o600,
      sources: [{ serviceAccountToken: { path: 'token' } }, { serviceAccountToken: { path: 'vault/token', audience: 'vault', expirationSeconds: 7200 } }],
    }), { token: ['token-for-api', 0o600], 'vault/token': ['token-for-vault', 0o600] });
    assert.deepEqual(asked, [{ audience: '', expirationSeconds: 3600 }, { audience: 'vault', expirationSeconds: 7200 }]);
  });

  void it('fails on a missing non-optional object, and objects or tokens without the API server', async () => {
    await assertRejectsWith(build({ sources: [{ secret: { name: 'nope' } }] }), VOLUME_OBJECT_NOT_FOUND, ['volume "all"', 'secret "nope" not found']);
    await assertRejectsWith(build({ sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3600 } }] }, false), VOLUME_UNSUPPORTED, ['a service account token needs the API server', 'sources[0]']);
    await assertRejectsWith(build({ sources: [{ configMap: { name: 'one' } }] }, false), VOLUME_UNSUPPORTED, ['needs the API server (--orchconfig)']);
    await assertRejectsWith(build({ sources: [{}] }), VOLUME_INVALID, ['has no source']);
    // downwardAPI alone needs no API server.
    assert.deepEqual(await build({ sources: [{ downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name' } }] } }] }, false), { n: ['p', 0o644] });
  });
});
