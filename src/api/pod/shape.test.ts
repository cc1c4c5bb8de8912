import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { decodePod } from './shape.js';
import { CONFIG_SOURCE_ANNOTATION, CONFIG_MIRROR_ANNOTATION, isMirrorPod, isStaticPod, podFullName, podNamespacedName, podSource } from './meta.js';

void describe('decodePod', () => {
  void it('reads a well-typed pod, keeping unknown fields', () => {
    const value = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' }, spec: { containers: [{ name: 'c', image: 'x', extra: [1] }] } };
    const result = decodePod(value);
    assert.ok(result.ok);
    assert.deepEqual(result.pod, value);
  });

  void it('turns numeric quantities into text and drops nulls', () => {
    const result = decodePod({
      metadata: { name: 'a', labels: null },
      spec: { containers: [{ name: 'c', image: 'x', resources: { limits: { cpu: 1, memory: 0.5 } }, env: null }] },
    });
    assert.ok(result.ok);
    assert.deepEqual(result.pod.metadata, { name: 'a' });
    assert.deepEqual(result.pod.spec!.containers[0], { name: 'c', image: 'x', resources: { limits: { cpu: '1', memory: '0.5' } } });
  });

  void it('lists every field of the wrong type with its path', () => {
    const result = decodePod({
      metadata: { name: 5, labels: { version: 1 } },
      spec: {
        containers: [{ name: 'c', ports: [{ containerPort: '80' }], command: 'sh', tty: 'yes' }],
        volumes: {},
        terminationGracePeriodSeconds: 1.5,
      },
    });
    assert.ok(!result.ok);
    assert.deepEqual(result.problems, [
      'metadata.name: must be a string, not the number 5',
      'metadata.labels[version]: must be a string, not the number 1',
      'spec.containers[0].ports[0].containerPort: must be an integer, not the string "80"',
      'spec.containers[0].command: must be a list, not the string "sh"',
      'spec.containers[0].tty: must be a boolean (true or false), not the string "yes"',
      'spec.volumes: must be a list, not an object',
      'spec.terminationGracePeriodSeconds: must be an integer, not the number 1.5',
    ]);
  });

  void it('rejects a value that is not an object, naming the given path', () => {
    const result = decodePod([1], 'items[3]');
    assert.ok(!result.ok);
    assert.deepEqual(result.problems, ['items[3]: must be an object, not a list']);
    const prefixed = decodePod({ spec: { containers: 'x' } }, 'items[0]');
    assert.ok(!prefixed.ok);
    assert.deepEqual(prefixed.problems, ['items[0].spec.containers: must be a list, not the string "x"']);
  });
});

void describe('pod names and sources', () => {
  void it('builds the full name as name_namespace', () => {
    assert.equal(podFullName({ metadata: { name: 'web-node1', namespace: 'default' } }), 'web-node1_default');
    assert.equal(podNamespacedName({ metadata: { name: 'web-node1', namespace: 'default' } }), 'default/web-node1');
    assert.equal(podNamespacedName({ metadata: { name: 'web' } }), '/web', 'no namespace: empty, as the callers always had it');
  });

  void it('tells static and mirror pods by their annotations', () => {
    const file = { metadata: { annotations: { [CONFIG_SOURCE_ANNOTATION]: 'file' } } };
    const api = { metadata: { annotations: { [CONFIG_SOURCE_ANNOTATION]: 'api' } } };
    assert.equal(podSource(file), 'file');
    assert.equal(isStaticPod(file), true);
    assert.equal(isStaticPod(api), false);
    assert.equal(isStaticPod({}), false);
    assert.equal(isMirrorPod({ metadata: { annotations: { [CONFIG_MIRROR_ANNOTATION]: 'abc' } } }), true);
    assert.equal(isMirrorPod(file), false);
  });
});
