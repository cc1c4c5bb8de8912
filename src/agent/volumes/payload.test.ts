import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import type { ConfigMap, Secret } from 'kubernetes-types/core/v1.js';

import type { FileProjection } from './atomic-writer.js';
import { assertRejectsWith } from './fixtures.js';
import { configMapKeys, DEFAULT_FILE_MODE, fetchKeys, fileMode, keysPayload, secretKeys } from './payload.js';
import { VOLUME_INVALID, VOLUME_KEY_NOT_FOUND, VOLUME_OBJECT_NOT_FOUND, VOLUME_OBJECT_UNAVAILABLE, type VolumeObjectSource } from './types.js';

const cm: ConfigMap = { metadata: { name: 'cfg', namespace: 'ns' }, data: { 'app.conf': 'x=1\n', other: 'o' }, binaryData: { blob: Buffer.from([0, 1, 2]).toString('base64') } };

/** path → [text, mode] for compact assertions. */
function flat(payload: Map<string, FileProjection>): Record<string, [string, string]> {
  return Object.fromEntries([...payload].map(([p, f]) => [p, [f.data.toString('latin1'), f.mode.toString(8)]]));
}

void describe('configMap and secret payloads', () => {
  void it('defaults file modes to 0644, as upstream for all four volume types', () => {
    assert.equal(DEFAULT_FILE_MODE, 0o644);
    assert.equal(fileMode(undefined, 0o644, 'm'), 0o644);
    assert.equal(fileMode(0o400, 0o644, 'm'), 0o400);
    assert.throws(() => fileMode(0o1000, 0o644, 'spec.volumes[0].configMap.defaultMode'), (err: Error) => err.message.includes('between 0 and 0777'));
    assert.throws(() => fileMode(-1, 0o644, 'm'), /between 0 and 0777/);
  });

  void it('without items: every key of data and binaryData, with the default mode', () => {
    const payload = keysPayload({ kind: 'configMap', name: 'cfg' }, configMapKeys(cm), 0o600, 'v', 's');
    assert.deepEqual(flat(payload), { 'app.conf': ['x=1\n', '600'], other: ['o', '600'], blob: ['\x00\x01\x02', '600'] });
  });

  void it('with items: only the items, at their paths, with their own mode', () => {
    const payload = keysPayload(
      { kind: 'configMap', name: 'cfg', items: [{ key: 'app.conf', path: 'etc/app.conf', mode: 0o400 }, { key: 'other', path: 'o.txt' }] },
      configMapKeys(cm), 0o644, 'v', 's',
    );
    assert.deepEqual(flat(payload), { 'etc/app.conf': ['x=1\n', '400'], 'o.txt': ['o', '644'] });
  });

  void it('a missing key fails unless the volume is optional', () => {
    const items = [{ key: 'nope', path: 'n' }, { key: 'other', path: 'o' }];
    assert.throws(() => keysPayload({ kind: 'configMap', name: 'cfg', items }, configMapKeys(cm), 0o644, 'v', 'spec.volumes[0].configMap'), (err: Error & { code?: string }) => {
      assert.equal(err.code, VOLUME_KEY_NOT_FOUND);
      assert.match(err.message, /volume "v": configMap "cfg" has no key "nope" \(named by spec\.volumes\[0\]\.configMap\.items\[0\]\)/);
      return true;
    });
    assert.deepEqual(flat(keysPayload({ kind: 'configMap', name: 'cfg', items, optional: true }, configMapKeys(cm), 0o644, 'v', 's')), { o: ['o', '644'] });
  });

  void it('a missing object fails unless optional, when the volume is empty', () => {
    assert.throws(() => keysPayload({ kind: 'secret', name: 'gone' }, undefined, 0o644, 'v', 's'), (err: Error & { code?: string }) => {
      assert.equal(err.code, VOLUME_OBJECT_NOT_FOUND);
      assert.match(err.message, /volume "v": secret "gone" not found/);
      return true;
    });
    assert.equal(keysPayload({ kind: 'secret', name: 'gone', optional: true, items: [{ key: 'a', path: 'a' }] }, undefined, 0o644, 'v', 's').size, 0);
  });

  void it('decodes secret data from base64 (and takes unmerged stringData as text)', () => {
    const secret: Secret = { metadata: { name: 's' }, data: { password: Buffer.from('hunter2').toString('base64'), bin: 'AP8=' }, stringData: { extra: 'plain' } };
    const keys = secretKeys(secret);
    assert.equal(keys.get('password')?.toString(), 'hunter2');
    assert.deepEqual([...(keys.get('bin') ?? [])], [0, 255]);
    assert.equal(keys.get('extra')?.toString(), 'plain');
    assert.throws(() => secretKeys({ metadata: { name: 's' }, data: { bad: 'not base64!' } }), (err: Error & { code?: string }) => err.code === VOLUME_INVALID && err.message.includes('secret "s" data["bad"]'));
    assert.throws(() => configMapKeys({ metadata: { name: 'c' }, data: { k: 'a' }, binaryData: { k: 'YQ==' } }), /in both data and binaryData/);
  });

  void it('fetches through the object source, mapping failures to VOLUME_OBJECT_UNAVAILABLE', async () => {
    const asked: string[] = [];
    const objects: VolumeObjectSource = {
      configMap: (ns, name) => {
        asked.push(`cm ${ns}/${name}`);
        return Promise.resolve(name === 'cfg' ? cm : undefined);
      },
      secret: (ns, name) => {
        asked.push(`secret ${ns}/${name}`);
        return Promise.reject(new Error('connection refused'));
      },
    };
    assert.equal((await fetchKeys(objects, 'ns', { kind: 'configMap', name: 'cfg' }, 'v'))?.get('other')?.toString(), 'o');
    assert.equal(await fetchKeys(objects, 'ns', { kind: 'configMap', name: 'missing' }, 'v'), undefined);
    await assertRejectsWith(fetchKeys(objects, 'ns', { kind: 'secret', name: 's' }, 'v'), VOLUME_OBJECT_UNAVAILABLE, ['volume "v"', 'secret ns/s', 'connection refused']);
    assert.deepEqual(asked, ['cm ns/cfg', 'cm ns/missing', 'secret ns/s']);
  });
});
