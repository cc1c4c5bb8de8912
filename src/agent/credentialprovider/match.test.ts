import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { imageMatches, registryOf } from './match.js';

void describe('imageMatches (upstream URLsMatch)', () => {
  const cases: [string, string, boolean][] = [
    ['registry.example', 'registry.example/team/app', true],
    ['*.example', 'registry.example/app', true],
    ['*.example', 'a.registry.example/app', false], // a glob matches one host part
    ['*.*.example', 'a.registry.example/app', true],
    ['reg*.example', 'registry.example/app', true],
    ['registry.example:5000', 'registry.example:5000/app', true],
    ['registry.example:5000', 'registry.example/app', false], // ports must be equal
    ['registry.example', 'registry.example:5000/app', false],
    ['registry.example/team', 'registry.example/team/app', true],
    ['registry.example/team', 'registry.example/other/app', false],
    ['127.0.0.1:5000', '127.0.0.1:5000/library/busybox', true],
    ['127.0.0.*:5000', '127.0.0.1:5000/library/busybox', true],
    ['https://registry.example', 'registry.example/app', true],
    ['docker.io', 'docker.io/library/busybox', true],
    ['registry.example', 'other.example/app', false],
    ['regist?y.example', 'registry.example/app', true],
    ['[rq]egistry.example', 'registry.example/app', true],
  ];
  for (const [pattern, image, want] of cases) {
    void it(`${pattern} ${want ? 'matches' : 'does not match'} ${image}`, () => {
      assert.equal(imageMatches(pattern, image), want);
    });
  }

  void it('the registry of an image is its first component', () => {
    assert.equal(registryOf('127.0.0.1:5000/library/busybox'), '127.0.0.1:5000');
    assert.equal(registryOf('docker.io/library/busybox'), 'docker.io');
  });
});
