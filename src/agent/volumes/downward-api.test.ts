import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { DownwardAPIVolumeFile } from 'kubernetes-types/core/v1.js';

import { downwardAPIPayload, formatMap, goQuote } from './downward-api.js';
import { VOLUME_INVALID } from './types.js';
import type { NodePod } from '../../api/pod/index.js';

const pod: NodePod = {
  metadata: {
    name: 'web-0',
    namespace: 'shop',
    uid: 'u-123',
    labels: { zeta: 'last', app: 'web', 'orch.io/tier': 'front end' },
    annotations: { note: 'say "hi"\n\tbye', build: '7' },
  },
  spec: {
    containers: [
      { name: 'app', resources: { limits: { cpu: '1500m', memory: '256Mi' }, requests: { cpu: '250m' } } },
      { name: 'bare' },
    ],
    initContainers: [{ name: 'init', resources: { requests: { memory: '1Gi' } } }],
  },
};
const capacity = { cpuMilli: 4000, memoryBytes: 8 * 1024 ** 3, ephemeralStorageBytes: 100e9 };

function texts(items: DownwardAPIVolumeFile[]): Record<string, string> {
  return Object.fromEntries([...downwardAPIPayload(items, 0o644, pod, capacity, 'spec.volumes[0].downwardAPI')].map(([p, f]) => [p, f.data.toString()]));
}

void describe('downwardAPI volume files', () => {
  void it('quotes as Go %q', () => {
    assert.equal(goQuote('plain'), '"plain"');
    assert.equal(goQuote('a"b\\c\n\t\r\u0007\u0000\u007f'), '"a\\"b\\\\c\\n\\t\\r\\a\\x00\\x7f"');
    assert.equal(goQuote('héllo 世界 🎉'), '"héllo 世界 🎉"');
    assert.equal(goQuote('\u00a0\u200b'), '"\\u00a0\\u200b"');
  });

  void it('formats labels and annotations as sorted key="value" lines without a final newline', () => {
    assert.equal(formatMap({ b: '2', a: '1', 'orch.io/x': 'y z' }), 'a="1"\nb="2"\norch.io/x="y z"');
    assert.equal(formatMap(undefined), '');
    const files = texts([
      { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
      { path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' } },
    ]);
    assert.equal(files.labels, 'app="web"\norch.io/tier="front end"\nzeta="last"');
    assert.equal(files.annotations, 'build="7"\nnote="say \\"hi\\"\\n\\tbye"');
  });

  void it('reads name, namespace, uid and single labels or annotations', () => {
    assert.deepEqual(
      texts([
        { path: 'name', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } },
        { path: 'meta/ns', fieldRef: { fieldPath: 'metadata.namespace' } },
        { path: 'uid', fieldRef: { fieldPath: 'metadata.uid' } },
        { path: 'tier', fieldRef: { fieldPath: "metadata.labels['orch.io/tier']" } },
        { path: 'none', fieldRef: { fieldPath: "metadata.annotations['absent']" } },
      ]),
      { name: 'web-0', 'meta/ns': 'shop', uid: 'u-123', tier: 'front end', none: '' },
    );
  });

  void it('reads resources with divisors, rounding up; unset limits are the node capacity', () => {
    const res = (resource: string, containerName = 'app', divisor?: string): DownwardAPIVolumeFile => ({
      path: `${containerName}-${resource}-${divisor ?? ''}`,
      resourceFieldRef: { containerName, resource, ...(divisor === undefined ? {} : { divisor }) },
    });
    assert.deepEqual(
      Object.values(texts([
        res('limits.cpu'), // 1.5 cores → 2
        res('limits.cpu', 'app', '1m'),
        res('requests.cpu', 'app', '1m'),
        res('limits.memory', 'app', '1Mi'),
        res('requests.memory'), // unset request, limit in the spec → the limit
        res('limits.cpu', 'bare'), // unset → capacity
        res('limits.memory', 'bare', '1Gi'),
        res('requests.cpu', 'bare'), // unset, no limit → 0
        res('requests.memory', 'init', '1Mi'),
        res('limits.ephemeral-storage', 'bare', '1G'),
      ])),
      ['2', '1500', '250', '256', String(256 * 1024 ** 2), '4', '8', '0', '1024', '100'],
    );
  });

  void it('applies modes, and rejects what upstream rejects', () => {
    const payload = downwardAPIPayload([{ path: 'n', mode: 0o400, fieldRef: { fieldPath: 'metadata.name' } }, { path: 'u', fieldRef: { fieldPath: 'metadata.uid' } }], 0o600, pod, capacity, 's');
    assert.deepEqual([...payload.values()].map((f) => f.mode), [0o400, 0o600]);
    const bad: [DownwardAPIVolumeFile, string][] = [
      [{ path: 'x', fieldRef: { fieldPath: 'spec.nodeName' } }, 'fieldPath "spec.nodeName" is not supported in downwardAPI volumes'],
      [{ path: 'x', resourceFieldRef: { resource: 'limits.cpu' } }, 'containerName is required'],
      [{ path: 'x', resourceFieldRef: { containerName: 'ghost', resource: 'limits.cpu' } }, 'no container "ghost"'],
      [{ path: 'x', resourceFieldRef: { containerName: 'app', resource: 'limits.gpu' } }, 'unsupported resource "limits.gpu"'],
      [{ path: 'x' }, 'exactly one of fieldRef and resourceFieldRef'],
      [{ path: 'x', mode: 0o7777, fieldRef: { fieldPath: 'metadata.name' } }, 'between 0 and 0777'],
    ];
    for (const [item, message] of bad) {
      assert.throws(() => downwardAPIPayload([item], 0o644, pod, capacity, 'spec.volumes[0].downwardAPI'), (err: Error & { code?: string }) => {
        assert.equal(err.code, VOLUME_INVALID);
        assert.ok(err.message.includes(message), err.message);
        assert.ok(err.message.includes('spec.volumes[0].downwardAPI.items[0]'), err.message);
        return true;
      });
    }
  });
});
