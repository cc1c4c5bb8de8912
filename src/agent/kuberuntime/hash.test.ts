import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container } from 'kubernetes-types/core/v1.js';
import { fnv1a32, hashContainer, hashInput } from './hash.js';

const base: Container = {
  name: 'app',
  image: 'busybox:1.35',
  command: ['sh', '-c', 'sleep 1000'],
  env: [{ name: 'A', value: '1' }],
  resources: { limits: { cpu: '1', memory: '64Mi' } },
};

void describe('hashContainer', () => {
  void it('is FNV-1a 32 of the canonical JSON, 8 hex digits', () => {
    assert.equal(fnv1a32(''), 0x811c9dc5);
    assert.equal(fnv1a32('a'), 0xe40c292c);
    assert.equal(fnv1a32('foobar'), 0xbf9cf968);
    assert.match(hashContainer(base), /^[0-9a-f]{8}$/);
  });

  void it('is stable across key order, absent vs empty values, defaults and equal quantities', () => {
    const h = hashContainer(base);
    assert.equal(hashContainer({ ...base }), h);
    assert.equal(hashContainer({ resources: { limits: { memory: '64Mi', cpu: '1000m' } }, env: [{ value: '1', name: 'A' }], command: ['sh', '-c', 'sleep 1000'], image: 'busybox:1.35', name: 'app' }), h);
    assert.equal(hashContainer({ ...base, args: [], ports: [], workingDir: '', stdin: false, tty: false }), h);
    assert.equal(hashContainer({ ...base, terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' }), h);
  });

  void it('ignores probes, lifecycle handlers and the pull policy', () => {
    const h = hashContainer(base);
    assert.equal(hashContainer({ ...base, imagePullPolicy: 'Always' }), h);
    assert.equal(hashContainer({ ...base, livenessProbe: { exec: { command: ['true'] } }, readinessProbe: { tcpSocket: { port: 80 } } }), h);
    assert.equal(hashContainer({ ...base, lifecycle: { preStop: { exec: { command: ['true'] } } } }), h);
  });

  void it('changes with the fields that shape the container', () => {
    const h = hashContainer(base);
    const changed: Container[] = [
      { ...base, image: 'busybox:1.36' },
      { ...base, command: ['sh'] },
      { ...base, args: ['x'] },
      { ...base, env: [{ name: 'A', value: '2' }] },
      { ...base, resources: { limits: { cpu: '2', memory: '64Mi' } } },
      { ...base, workingDir: '/tmp' },
      { ...base, securityContext: { allowPrivilegeEscalation: false } },
      { ...base, volumeMounts: [{ name: 'v', mountPath: '/v' }] },
      { ...base, tty: true },
      { ...base, terminationMessagePolicy: 'FallbackToLogsOnError' },
    ];
    for (const c of changed) assert.notEqual(hashContainer(c), h, hashInput(c));
    assert.equal(new Set(changed.map(hashContainer)).size, changed.length);
  });
});
