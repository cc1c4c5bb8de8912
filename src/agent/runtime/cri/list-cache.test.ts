import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cachingListDeserializer } from './list-cache.js';
import { criMethods } from './proto.js';

const method = criMethods('RuntimeService').get('ListContainers');
if (method === undefined) throw new Error('no ListContainers in the proto');
/** Container.state's field number. */
const CONTAINER_STATE_FIELD = 6;
const encode = (containers: object[]): Buffer => method.responseSerialize({ containers });
const container = (id: string, state: string): object => ({ id, podSandboxId: `s-${id}`, state, createdAt: '1700000000000000000', labels: { 'io.orch.pod.uid': id }, annotations: {} });

void describe('cachingListDeserializer', () => {
  void it('decodes as the plain deserializer does and reuses unchanged elements in any order', () => {
    const decode = cachingListDeserializer(method.responseDeserialize, 'containers', CONTAINER_STATE_FIELD);
    const first = encode([container('a', 'CONTAINER_RUNNING'), container('b', 'CONTAINER_RUNNING')]);
    const one = decode(first) as { containers: { id: string }[] };
    assert.deepEqual(one, method.responseDeserialize(first));
    const second = encode([container('b', 'CONTAINER_RUNNING'), container('a', 'CONTAINER_EXITED')]);
    const two = decode(second) as { containers: { id: string; state: string }[] };
    assert.deepEqual(two, method.responseDeserialize(second));
    assert.equal(two.containers[0], one.containers[1], 'the unchanged element is the object decoded before');
    assert.notEqual(two.containers[1], one.containers[0]);
    assert.equal(two.containers[1]?.state, 'CONTAINER_EXITED');
  });

  void it('knows an element whatever the order of its map entries', () => {
    const decode = cachingListDeserializer(method.responseDeserialize, 'containers', CONTAINER_STATE_FIELD);
    const labels = (keys: string[]): object => ({ id: 'a', state: 'CONTAINER_RUNNING', labels: Object.fromEntries(keys.map((k) => [k, `v-${k}`])), annotations: {} });
    const one = decode(encode([labels(['x', 'y', 'z'])])) as { containers: object[] };
    const reordered = encode([labels(['z', 'x', 'y'])]);
    const two = decode(reordered) as { containers: object[] };
    assert.equal(two.containers[0], one.containers[0]);
    assert.deepEqual(two, method.responseDeserialize(reordered));
  });

  void it('decodes a response with the same element twice as the plain deserializer does', () => {
    const decode = cachingListDeserializer(method.responseDeserialize, 'containers', CONTAINER_STATE_FIELD);
    const twice = encode([container('a', 'CONTAINER_RUNNING'), container('a', 'CONTAINER_RUNNING')]);
    const result = decode(twice) as { containers: object[] };
    assert.deepEqual(result, method.responseDeserialize(twice));
    assert.notEqual(result.containers[0], result.containers[1]);
  });

  void it('decodes an empty response, and falls back on anything unexpected', () => {
    const decode = cachingListDeserializer(method.responseDeserialize, 'containers', CONTAINER_STATE_FIELD);
    assert.deepEqual(decode(Buffer.alloc(0)), { containers: [] });
    const truncated = encode([container('a', 'CONTAINER_RUNNING')]).subarray(0, 5);
    assert.throws(() => method.responseDeserialize(truncated));
    assert.throws(() => decode(truncated));
  });

  void it('keys elements by id, state and length: a new state or another size is decoded again', () => {
    const decode = cachingListDeserializer(method.responseDeserialize, 'containers', CONTAINER_STATE_FIELD);
    const one = decode(encode([container('a', 'CONTAINER_CREATED'), container('b', 'CONTAINER_RUNNING')])) as { containers: { id: string; state: string }[] };
    const started = decode(encode([container('a', 'CONTAINER_RUNNING'), container('b', 'CONTAINER_RUNNING')])) as { containers: { id: string; state: string }[] };
    assert.notEqual(started.containers[0], one.containers[0]);
    assert.equal(started.containers[0]?.state, 'CONTAINER_RUNNING');
    assert.equal(started.containers[1], one.containers[1]);
    // The same id and state, another size (the runtime reports a field it did not before): decoded again.
    const grown = encode([{ ...container('a', 'CONTAINER_RUNNING'), imageRef: 'sha256:0123' }, container('b', 'CONTAINER_RUNNING')]);
    const three = decode(grown) as { containers: { imageRef: string }[] };
    assert.notEqual(three.containers[0], started.containers[0]);
    assert.equal(three.containers[0]?.imageRef, 'sha256:0123');
    assert.deepEqual(three, method.responseDeserialize(grown));
  });

  void it('takes an element with the same id, state and length for the one decoded before: the CRI changes nothing else of it', () => {
    // The contract this relies on is checked on containerd by the CRI behaviour suite ("lists a
    // sandbox and a container with the same fields through their life, but for their state").
    const decode = cachingListDeserializer(method.responseDeserialize, 'containers', CONTAINER_STATE_FIELD);
    const one = decode(encode([container('a', 'CONTAINER_RUNNING')])) as { containers: object[] };
    const relabelled = encode([{ ...container('a', 'CONTAINER_RUNNING'), labels: { 'io.orch.pod.uid': 'z' } }]);
    assert.equal((decode(relabelled) as { containers: object[] }).containers[0], one.containers[0]);
  });

  void it('keeps no state between two deserializers', () => {
    const first = cachingListDeserializer(method.responseDeserialize, 'containers', CONTAINER_STATE_FIELD);
    const second = cachingListDeserializer(method.responseDeserialize, 'containers', CONTAINER_STATE_FIELD);
    const wire = encode([container('a', 'CONTAINER_RUNNING')]);
    const one = first(wire) as { containers: object[] };
    assert.notEqual((second(wire) as { containers: object[] }).containers[0], one.containers[0], 'each keeps its own previous response');
    assert.equal((first(wire) as { containers: object[] }).containers[0], one.containers[0]);
  });

  void it('decodes a response whose element has no id as the plain deserializer does', () => {
    const decode = cachingListDeserializer(method.responseDeserialize, 'containers', CONTAINER_STATE_FIELD);
    const anonymous = encode([{ state: 'CONTAINER_RUNNING', labels: {}, annotations: {} }]);
    assert.deepEqual(decode(anonymous), method.responseDeserialize(anonymous));
  });
});
